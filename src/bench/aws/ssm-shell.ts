import { z } from 'zod';
import type { CommandRunner } from '../../util/command-runner.ts';
import type { RemoteResult, RemoteShell, RunScriptOptions } from './remote-shell.ts';

/**
 * RemoteShell over SSM Run Command with the `aws` CLI: `ssm send-command` with the
 * AWS-RunShellScript document, then `ssm list-command-invocations --details` until every
 * instance reached a terminal status. Every answer is parsed with zod. The instance
 * profile of every node has AmazonSSMManagedInstanceCore (infra/aws/modules/instance-role).
 */

/** send-command takes at most 50 instance IDs. */
export const SSM_MAX_TARGETS = 50;

/** AWS-RunShellScript joins stdout and stderr in the plugin's Output with this line. */
export const SSM_STDERR_SEPARATOR = '----------ERROR-------';

const sendCommandSchema = z.object({ Command: z.object({ CommandId: z.string().min(1) }) });

const invocationStatus = z.enum(['Pending', 'InProgress', 'Delayed', 'Success', 'Cancelled', 'TimedOut', 'Failed', 'Cancelling']);
const listInvocationsSchema = z.object({
  CommandInvocations: z.array(
    z.object({
      InstanceId: z.string(),
      Status: invocationStatus,
      StatusDetails: z.string().optional(),
      CommandPlugins: z
        .array(z.object({ Name: z.string().optional(), Status: z.string().optional(), ResponseCode: z.number().int().optional(), Output: z.string().optional() }))
        .default([]),
    }),
  ),
  NextToken: z.string().optional(),
});

const TERMINAL = new Set(['Success', 'Cancelled', 'TimedOut', 'Failed']);

export interface SsmShellOptions {
  region: string;
  /** Between two polls; default 3 s. */
  pollMs?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

export class SsmCommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SsmCommandError';
  }
}

export class SsmShell implements RemoteShell {
  private readonly pollMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;

  constructor(
    private readonly runner: CommandRunner,
    private readonly options: SsmShellOptions,
  ) {
    this.pollMs = options.pollMs ?? 3000;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.now = options.now ?? Date.now;
  }

  async run(instanceIds: readonly string[], script: string, options: RunScriptOptions): Promise<Map<string, RemoteResult>> {
    const results = new Map<string, RemoteResult>();
    for (let i = 0; i < instanceIds.length; i += SSM_MAX_TARGETS) {
      const batch = instanceIds.slice(i, i + SSM_MAX_TARGETS);
      for (const [id, result] of await this.runBatch(batch, script, options)) results.set(id, result);
    }
    return results;
  }

  private async aws(args: string[], what: string): Promise<unknown> {
    const result = await this.runner.run('aws', [...args, '--region', this.options.region, '--output', 'json'], { timeoutMs: 60_000 });
    if (result.code !== 0) throw new SsmCommandError(`aws ${what} failed (exit ${result.code}): ${result.stderr.trim().split('\n').pop() ?? ''}`);
    try {
      return JSON.parse(result.stdout);
    } catch {
      throw new SsmCommandError(`aws ${what} printed something that is not JSON: ${result.stdout.slice(0, 200)}`);
    }
  }

  private async runBatch(instanceIds: readonly string[], script: string, options: RunScriptOptions): Promise<Map<string, RemoteResult>> {
    const parameters = JSON.stringify({ commands: [script], executionTimeout: [String(Math.ceil(options.timeoutSec))] });
    const sent = sendCommandSchema.safeParse(
      await this.aws(
        [
          'ssm', 'send-command',
          '--document-name', 'AWS-RunShellScript',
          '--instance-ids', ...instanceIds,
          '--parameters', parameters,
          '--timeout-seconds', '600', // delivery: an agent offline this long is Undeliverable
          ...(options.comment ? ['--comment', options.comment.slice(0, 100)] : []),
        ],
        'ssm send-command',
      ),
    );
    if (!sent.success) throw new SsmCommandError(`aws ssm send-command: unexpected answer (${sent.error.issues[0]?.message ?? 'invalid'})`);
    const commandId = sent.data.Command.CommandId;

    // Our own deadline: the script's limit plus delivery and reporting slack.
    const deadline = this.now() + (options.timeoutSec + 120) * 1000;
    const done = new Map<string, RemoteResult>();
    for (;;) {
      const page = listInvocationsSchema.safeParse(await this.aws(['ssm', 'list-command-invocations', '--command-id', commandId, '--details'], 'ssm list-command-invocations'));
      if (!page.success) throw new SsmCommandError(`aws ssm list-command-invocations: unexpected answer (${page.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')})`);
      for (const invocation of page.data.CommandInvocations) {
        if (!TERMINAL.has(invocation.Status) || !instanceIds.includes(invocation.InstanceId)) continue;
        done.set(invocation.InstanceId, toResult(invocation));
      }
      if (instanceIds.every((id) => done.has(id))) return done;
      if (this.now() > deadline) {
        await this.aws(['ssm', 'cancel-command', '--command-id', commandId], 'ssm cancel-command').catch(() => undefined);
        for (const id of instanceIds) {
          if (!done.has(id)) done.set(id, { instanceId: id, status: 'TimedOut', exitCode: null, stdout: '', stderr: `no result within ${options.timeoutSec + 120} s (SSM command ${commandId}); cancelled` });
        }
        return done;
      }
      await this.sleep(this.pollMs);
    }
  }
}

function toResult(invocation: z.output<typeof listInvocationsSchema>['CommandInvocations'][number]): RemoteResult {
  const plugin = invocation.CommandPlugins[0];
  const output = plugin?.Output ?? '';
  const cut = output.indexOf(SSM_STDERR_SEPARATOR);
  const stdout = cut >= 0 ? output.slice(0, cut) : output;
  const stderr = cut >= 0 ? output.slice(cut + SSM_STDERR_SEPARATOR.length) : '';
  const undeliverable = invocation.StatusDetails === 'Undeliverable' || invocation.StatusDetails === 'DeliveryTimedOut';
  const status = undeliverable ? 'Undeliverable' : (invocation.Status as RemoteResult['status']);
  const code = plugin?.ResponseCode;
  return {
    instanceId: invocation.InstanceId,
    status,
    exitCode: code === undefined || code < 0 ? null : code,
    stdout: stdout.replace(/\n$/, ''),
    stderr: (stderr || (status !== 'Success' && invocation.StatusDetails ? `SSM: ${invocation.StatusDetails}` : '')).replace(/^\n/, ''),
  };
}
