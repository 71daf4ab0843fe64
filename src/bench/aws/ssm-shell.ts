import { z } from 'zod';
import type { CommandRunner } from '../../util/command-runner.ts';
import type { RemoteResult, RemoteShell, RunScriptOptions } from './remote-shell.ts';

/**
 * RemoteShell over SSM Run Command with the `aws` CLI: `ssm send-command` with the
 * AWS-RunShellScript document, `ssm list-command-invocations` until every instance reached
 * a terminal status, then `ssm get-command-invocation` for each instance's output. Every
 * answer is parsed with zod. The instance profile of every node has
 * AmazonSSMManagedInstanceCore (infra/aws/modules/instance-role).
 *
 * Output comes from GetCommandInvocation because it is the most SSM gives without an S3
 * bucket (AWS Systems Manager API Reference): its StandardOutputContent is "the first
 * 24,000 characters written by the plugin to stdout" and StandardErrorContent the first
 * 8,000 written to stderr, where ListCommandInvocations' CommandPlugin Output holds at
 * most 2,500 of both together.
 */

/** send-command takes at most 50 instance IDs. */
export const SSM_MAX_TARGETS = 50;

const sendCommandSchema = z.object({ Command: z.object({ CommandId: z.string().min(1) }) });

const invocationStatus = z.enum(['Pending', 'InProgress', 'Delayed', 'Success', 'Cancelled', 'TimedOut', 'Failed', 'Cancelling']);
const listInvocationsSchema = z.object({
  CommandInvocations: z.array(z.object({ InstanceId: z.string(), Status: invocationStatus, StatusDetails: z.string().optional() })),
  NextToken: z.string().optional(),
});

const invocationSchema = z.object({
  InstanceId: z.string(),
  Status: invocationStatus,
  StatusDetails: z.string().optional(),
  /** -1: the script never ran on the node. */
  ResponseCode: z.number().int(),
  StandardOutputContent: z.string().default(''),
  StandardErrorContent: z.string().default(''),
});

const TERMINAL = new Set(['Success', 'Cancelled', 'TimedOut', 'Failed']);

export interface SsmShellOptions {
  region: string;
  /** Between two polls; default 3 s. */
  pollMs?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

class SsmCommandError extends Error {
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

  /** One instance's result, with the most output SSM returns (GetCommandInvocation). */
  private async output(commandId: string, instanceId: string): Promise<RemoteResult> {
    const answer = invocationSchema.safeParse(
      await this.aws(['ssm', 'get-command-invocation', '--command-id', commandId, '--instance-id', instanceId], 'ssm get-command-invocation'),
    );
    if (!answer.success) throw new SsmCommandError(`aws ssm get-command-invocation: unexpected answer (${issues(answer.error)})`);
    return toResult(answer.data);
  }

  private async runBatch(instanceIds: readonly string[], script: string, options: RunScriptOptions): Promise<Map<string, RemoteResult>> {
    const parameters = JSON.stringify({ commands: [script], executionTimeout: [String(Math.ceil(options.timeoutSec))] });
    const sent = sendCommandSchema.safeParse(
      await this.aws(
        [
          'ssm',
          'send-command',
          '--document-name',
          'AWS-RunShellScript',
          '--instance-ids',
          ...instanceIds,
          '--parameters',
          parameters,
          '--timeout-seconds',
          '600', // delivery: an agent offline this long is Undeliverable
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
      const page = listInvocationsSchema.safeParse(
        await this.aws(['ssm', 'list-command-invocations', '--command-id', commandId], 'ssm list-command-invocations'),
      );
      if (!page.success) throw new SsmCommandError(`aws ssm list-command-invocations: unexpected answer (${issues(page.error)})`);
      for (const invocation of page.data.CommandInvocations) {
        if (!TERMINAL.has(invocation.Status) || !instanceIds.includes(invocation.InstanceId) || done.has(invocation.InstanceId)) continue;
        done.set(invocation.InstanceId, await this.output(commandId, invocation.InstanceId));
      }
      if (instanceIds.every((id) => done.has(id))) return done;
      if (this.now() > deadline) {
        await this.aws(['ssm', 'cancel-command', '--command-id', commandId], 'ssm cancel-command').catch(() => undefined);
        for (const id of instanceIds) {
          if (!done.has(id))
            done.set(id, {
              instanceId: id,
              status: 'TimedOut',
              exitCode: null,
              stdout: '',
              stderr: `no result within ${options.timeoutSec + 120} s (SSM command ${commandId}); cancelled`,
            });
        }
        return done;
      }
      await this.sleep(this.pollMs);
    }
  }
}

const issues = (error: z.ZodError) => error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');

function toResult(invocation: z.output<typeof invocationSchema>): RemoteResult {
  const undeliverable = invocation.StatusDetails === 'Undeliverable' || invocation.StatusDetails === 'DeliveryTimedOut';
  const status = undeliverable ? 'Undeliverable' : (invocation.Status as RemoteResult['status']);
  const code = invocation.ResponseCode;
  return {
    instanceId: invocation.InstanceId,
    status,
    exitCode: code < 0 ? null : code,
    stdout: invocation.StandardOutputContent.replace(/\n$/, ''),
    stderr: invocation.StandardErrorContent || (status !== 'Success' && invocation.StatusDetails ? `SSM: ${invocation.StatusDetails}` : ''),
  };
}
