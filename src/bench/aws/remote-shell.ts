/**
 * Commands on the bench's nodes, through one small interface: the gate switches
 * Mattermost versions, restores the dataset and starts the load this way. On AWS it is
 * SSM Run Command (ssm-shell.ts); the loopback end-to-end test runs the same scripts
 * against local processes. Scripts are built from validated values only (scripts.ts).
 */
export interface RemoteResult {
  instanceId: string;
  /** SSM's terminal status: Success, Failed, TimedOut, Cancelled, or Undeliverable. */
  status: 'Success' | 'Failed' | 'TimedOut' | 'Cancelled' | 'Undeliverable';
  /** The script's exit code; null when it never ran or was cut off. */
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

export interface RunScriptOptions {
  /** The script's own time limit; the command is cancelled after it. */
  timeoutSec: number;
  /** Shown in the SSM console (at most 100 characters). */
  comment?: string;
}

export interface RemoteShell {
  /** Runs `script` with bash on every instance; one result per instance, in any order. */
  run(instanceIds: readonly string[], script: string, options: RunScriptOptions): Promise<Map<string, RemoteResult>>;
}

/** A node the gate talks to: its instance ID and the name it has in messages (app0, agent3). */
export interface BenchNode {
  id: string;
  name: string;
}

export class RemoteCommandError extends Error {
  constructor(
    message: string,
    readonly failed: readonly { node: BenchNode; result: RemoteResult | undefined }[],
  ) {
    super(message);
    this.name = 'RemoteCommandError';
  }
}

const tail = (text: string, lines = 6): string => text.trim().split('\n').slice(-lines).join('\n    ');

/**
 * Runs a script on `nodes` and throws when any of them did not succeed, naming each
 * failed node, its status and the end of its stderr; returns the results by node name.
 */
export async function runOnNodes(
  shell: RemoteShell,
  nodes: readonly BenchNode[],
  script: string,
  what: string,
  options: RunScriptOptions,
): Promise<Map<string, RemoteResult>> {
  if (nodes.length === 0) return new Map();
  const results = await shell.run(
    nodes.map((n) => n.id),
    script,
    { comment: what.slice(0, 100), ...options },
  );
  const failed = nodes
    .map((node) => ({ node, result: results.get(node.id) }))
    .filter(({ result }) => !result || result.status !== 'Success' || result.exitCode !== 0);
  if (failed.length) {
    const lines = failed.map(({ node, result }) =>
      !result
        ? `  ${node.name} (${node.id}): no result`
        : `  ${node.name} (${node.id}): ${result.status}${result.exitCode !== null ? `, exit code ${result.exitCode}` : ''}${result.stderr.trim() ? `\n    ${tail(result.stderr)}` : ''}`,
    );
    throw new RemoteCommandError(`${what} failed on ${failed.length} of ${nodes.length} node(s):\n${lines.join('\n')}`, failed);
  }
  return new Map(nodes.map((node) => [node.name, results.get(node.id) as RemoteResult]));
}
