import type { GateConfig } from '../config/schema.ts';
import type { ChatServer } from './chat-server.ts';
import { mattermost } from './mattermost/chat-server.ts';
import { synapse } from './synapse/chat-server.ts';

/** Every chat server the gate can run, by target.system. */
const CHAT_SERVERS: Readonly<Record<GateConfig['target']['system'], ChatServer>> = { synapse, mattermost };

export function chatServerOf(system: GateConfig['target']['system']): ChatServer {
  return CHAT_SERVERS[system];
}
