/**
 * The chat servers a gate config can name (target.system), each with the bench kind that
 * runs it: the one list of them. The config schema takes its names from here, the config
 * check its bench rule; each has an adapter of that name in src/chat-servers (registry.ts,
 * whose type requires exactly these).
 */
export const CHAT_SERVER_BENCHES = {
  synapse: 'local',
  mattermost: 'aws',
} as const satisfies Record<string, 'local' | 'aws'>;

export type ChatServerName = keyof typeof CHAT_SERVER_BENCHES;

export const CHAT_SERVER_NAMES = Object.keys(CHAT_SERVER_BENCHES) as [ChatServerName, ...ChatServerName[]];

/** The servers a bench kind runs, for messages: "synapse". */
export function serversOf(bench: 'local' | 'aws'): ChatServerName[] {
  return CHAT_SERVER_NAMES.filter((name) => CHAT_SERVER_BENCHES[name] === bench);
}
