import type { ChatServerName } from '../config/chat-servers.ts';
import type { ChatServer } from './chat-server.ts';
import { mattermost } from './mattermost/chat-server.ts';
import { synapse } from './synapse/chat-server.ts';

/** Every chat server the gate can run, by target.system (src/config/chat-servers.ts names them). */
const CHAT_SERVERS: Readonly<Record<ChatServerName, ChatServer>> = { synapse, mattermost };

export function chatServerOf(system: ChatServerName): ChatServer {
  return CHAT_SERVERS[system];
}
