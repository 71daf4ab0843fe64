import type { ChatServerName } from '../config/chat-servers.ts';
import type { ChatServer } from './chat-server.ts';
import { mattermost } from './mattermost/chat-server.ts';
import { synapse } from './synapse/chat-server.ts';

/** Every chat server the gate can run, by target.system (src/config/chat-servers.ts names them). */
const CHAT_SERVERS: Readonly<Record<ChatServerName, ChatServer>> = { synapse, mattermost };

export function chatServerOf(system: ChatServerName): ChatServer {
  return CHAT_SERVERS[system];
}

/** The adapter of a server a run result names, or undefined when loadgate has none by that name. */
export function findChatServer(system: string): ChatServer | undefined {
  return Object.hasOwn(CHAT_SERVERS, system) ? CHAT_SERVERS[system as ChatServerName] : undefined;
}
