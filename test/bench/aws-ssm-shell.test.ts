import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CommandResult, CommandRunner } from '../../src/util/command-runner.ts';
import { RemoteCommandError, runOnNodes, type RemoteResult, type RemoteShell } from '../../src/bench/aws/remote-shell.ts';
import { SSM_MAX_TARGETS, SsmShell } from '../../src/bench/aws/ssm-shell.ts';
import { LIST_OUTPUT_LIMIT, SsmError, SsmStandin, STDERR_LIMIT, STDOUT_LIMIT } from '../support/ssm-standin.ts';

/**
 * The SSM Run Command shell against the aws CLI's documented JSON: `ssm send-command`,
 * `ssm list-command-invocations` for the statuses and `ssm get-command-invocation` for
 * each instance's output, whose StandardOutputContent and StandardErrorContent keep stdout
 * and stderr apart (and hold far more than list-command-invocations' plugin Output).
 */

const COMMAND_ID = 'ef7fdfd8-9b57-4151-a15c-db9a12345678';

/** One instance's invocation as GetCommandInvocation answers it. */
function invocation(
  instanceId: string,
  status: string,
  r: { code?: number; stdout?: string; stderr?: string } = {},
  details = status,
): Record<string, unknown> {
  return {
    CommandId: COMMAND_ID,
    InstanceId: instanceId,
    Comment: '',
    DocumentName: 'AWS-RunShellScript',
    DocumentVersion: '$DEFAULT',
    PluginName: 'aws:runShellScript',
    ResponseCode: r.code ?? -1,
    ExecutionStartDateTime: '2020-02-19T18:18:03.419Z',
    ExecutionElapsedTime: 'PT0.091S',
    ExecutionEndDateTime: '2020-02-19T18:18:03.419Z',
    Status: status,
    StatusDetails: details,
    StandardOutputContent: r.stdout ?? '',
    StandardOutputUrl: '',
    StandardErrorContent: r.stderr ?? '',
    StandardErrorUrl: '',
    CloudWatchOutputConfig: { CloudWatchLogGroupName: '', CloudWatchOutputEnabled: false },
  };
}

/** ListCommandInvocations without details: statuses only. */
const listed = (invocations: Record<string, unknown>[]) => ({
  stdout: JSON.stringify({
    CommandInvocations: invocations.map((i) => ({
      CommandId: COMMAND_ID,
      InstanceId: i.InstanceId,
      Status: i.Status,
      StatusDetails: i.StatusDetails,
      CommandPlugins: [],
    })),
  }),
});

class FakeAws implements CommandRunner {
  readonly calls: string[][] = [];
  constructor(private readonly answer: (args: readonly string[], n: number) => Partial<CommandResult>) {}
  async run(command: string, args: readonly string[]): Promise<CommandResult> {
    assert.equal(command, 'aws');
    this.calls.push([...args]);
    return { code: 0, stdout: '', stderr: '', ...this.answer(args, this.calls.length) };
  }
}

const sent = (commandId = COMMAND_ID) => ({
  stdout: JSON.stringify({ Command: { CommandId: commandId, DocumentName: 'AWS-RunShellScript', Status: 'Pending', InstanceIds: ['i-0aaaaaaaaaaaaaaa1'] } }),
});
const instanceOf = (args: readonly string[]) => args[args.indexOf('--instance-id') + 1] as string;

test("send-command carries the script as one command with its time limit; each finished instance's output comes from get-command-invocation", async () => {
  let polls = 0;
  const done = {
    'i-0aaaaaaaaaaaaaaa1': invocation('i-0aaaaaaaaaaaaaaa1', 'Success', { code: 0, stdout: 'mattermost from https://x is up\n' }),
    'i-0aaaaaaaaaaaaaaa2': invocation('i-0aaaaaaaaaaaaaaa2', 'Failed', {
      code: 1,
      stdout: 'partial\n',
      stderr: 'mattermost did not answer /api/v4/system/ping within 600 s\n',
    }),
  } as Record<string, Record<string, unknown>>;
  const aws = new FakeAws((args) => {
    if (args[1] === 'send-command') return sent();
    if (args[1] === 'get-command-invocation') return { stdout: JSON.stringify(done[instanceOf(args)]) };
    polls++;
    // First poll: still running on one node, and SSM may not list a node yet.
    if (polls === 1) return listed([invocation('i-0aaaaaaaaaaaaaaa1', 'InProgress')]);
    return listed(Object.values(done));
  });
  const shell = new SsmShell(aws, { region: 'eu-west-1', sleep: async () => {} });
  const script = "set -euo pipefail\nloadgate-mattermost start 600\necho 'quoted'\n";
  const results = await shell.run(['i-0aaaaaaaaaaaaaaa1', 'i-0aaaaaaaaaaaaaaa2'], script, { timeoutSec: 660, comment: 'start Mattermost v10.12.0' });

  const send = aws.calls[0]!;
  assert.deepEqual(send.slice(0, 4), ['ssm', 'send-command', '--document-name', 'AWS-RunShellScript']);
  assert.deepEqual(send.slice(send.indexOf('--instance-ids') + 1, send.indexOf('--instance-ids') + 3), ['i-0aaaaaaaaaaaaaaa1', 'i-0aaaaaaaaaaaaaaa2']);
  assert.deepEqual(JSON.parse(send[send.indexOf('--parameters') + 1]!), { commands: [script], executionTimeout: ['660'] });
  assert.equal(send[send.indexOf('--comment') + 1], 'start Mattermost v10.12.0');
  assert.deepEqual(send.slice(-4), ['--region', 'eu-west-1', '--output', 'json']);
  assert.deepEqual(aws.calls[1]!.slice(0, 4), ['ssm', 'list-command-invocations', '--command-id', COMMAND_ID]);
  assert.ok(!aws.calls[1]!.includes('--details'), 'statuses only: the output comes from get-command-invocation');
  const gets = aws.calls.filter((c) => c[1] === 'get-command-invocation').map((c) => c.slice(0, 6));
  assert.deepEqual(
    gets,
    [
      ['ssm', 'get-command-invocation', '--command-id', COMMAND_ID, '--instance-id', 'i-0aaaaaaaaaaaaaaa1'],
      ['ssm', 'get-command-invocation', '--command-id', COMMAND_ID, '--instance-id', 'i-0aaaaaaaaaaaaaaa2'],
    ],
    'one read per instance, once it finished',
  );

  assert.deepEqual(results.get('i-0aaaaaaaaaaaaaaa1'), {
    instanceId: 'i-0aaaaaaaaaaaaaaa1',
    status: 'Success',
    exitCode: 0,
    stdout: 'mattermost from https://x is up',
    stderr: '',
  });
  assert.deepEqual(results.get('i-0aaaaaaaaaaaaaaa2'), {
    instanceId: 'i-0aaaaaaaaaaaaaaa2',
    status: 'Failed',
    exitCode: 1,
    stdout: 'partial',
    stderr: 'mattermost did not answer /api/v4/system/ping within 600 s\n',
  });
});

/** The aws CLI in front of the SSM stand-in, which carries SSM's output limits. */
function ssmCli(shell: RemoteShell): FakeAws {
  const ssm = new SsmStandin(shell);
  const option = (args: readonly string[], name: string) => args[args.indexOf(name) + 1] as string;
  return new FakeAws((args) => {
    try {
      if (args[1] === 'send-command') {
        const ids = args.slice(args.indexOf('--instance-ids') + 1, args.indexOf('--parameters'));
        const parameters = JSON.parse(option(args, '--parameters')) as { commands: string[]; executionTimeout: string[] };
        return { stdout: JSON.stringify({ Command: { CommandId: ssm.sendCommand(ids, parameters.commands[0], Number(parameters.executionTimeout[0])) } }) };
      }
      if (args[1] === 'list-command-invocations')
        return { stdout: JSON.stringify(ssm.listCommandInvocations(option(args, '--command-id'), args.includes('--details'))) };
      return { stdout: JSON.stringify(ssm.getCommandInvocation(option(args, '--command-id'), option(args, '--instance-id'))) };
    } catch (error) {
      if (error instanceof SsmError) return { code: 254, stderr: error.message };
      throw error;
    }
  });
}

test("SSM's output limits: stdout up to GetCommandInvocation's 24,000 characters and stderr up to its 8,000 arrive whole, far past list-command-invocations' 2,500", async () => {
  const stdout = 'x'.repeat(STDOUT_LIMIT - 1000);
  const stderr = 'e'.repeat(STDERR_LIMIT + 500);
  const shell: RemoteShell = {
    async run(ids) {
      return new Map(ids.map((id): [string, RemoteResult] => [id, { instanceId: id, status: 'Success', exitCode: 0, stdout, stderr }]));
    },
  };
  assert.ok(stdout.length > LIST_OUTPUT_LIMIT, 'more than list-command-invocations would hold');
  const result = (
    await new SsmShell(ssmCli(shell), { region: 'us-east-1', sleep: async () => {} }).run(['i-0aaaaaaaaaaaaaaa1'], 'profile', { timeoutSec: 60 })
  ).get('i-0aaaaaaaaaaaaaaa1');
  assert.equal(result?.stdout.length, stdout.length, 'the whole stdout');
  assert.equal(result?.stderr.length, STDERR_LIMIT, 'stderr cut where SSM cuts it');
});

test('a failed invocation names the node, its status and its stderr', async () => {
  const all = [
    invocation('i-0aaaaaaaaaaaaaaa1', 'Success', { code: 0 }),
    invocation('i-0aaaaaaaaaaaaaaa2', 'Failed', { code: 2, stderr: 'loadgate-mattermost: expected an https://...tar.gz release URL\n' }),
    // An agent that never got the command: no plugin ran.
    invocation('i-0bbbbbbbbbbbbbbb1', 'Failed', {}, 'Undeliverable'),
  ];
  const aws = new FakeAws((args) =>
    args[1] === 'send-command'
      ? sent()
      : args[1] === 'get-command-invocation'
        ? { stdout: JSON.stringify(all.find((i) => i.InstanceId === instanceOf(args))) }
        : listed(all),
  );
  const shell = new SsmShell(aws, { region: 'us-east-1', sleep: async () => {} });
  const nodes = [
    { id: 'i-0aaaaaaaaaaaaaaa1', name: 'app0' },
    { id: 'i-0aaaaaaaaaaaaaaa2', name: 'app1' },
    { id: 'i-0bbbbbbbbbbbbbbb1', name: 'agent0' },
  ];
  await assert.rejects(runOnNodes(shell, nodes, 'true', 'install Mattermost v10.12.0', { timeoutSec: 60 }), (error: unknown) => {
    assert.ok(error instanceof RemoteCommandError);
    assert.equal(
      error.message,
      'install Mattermost v10.12.0 failed on 2 of 3 node(s):\n' +
        '  app1 (i-0aaaaaaaaaaaaaaa2): Failed, exit code 2\n    loadgate-mattermost: expected an https://...tar.gz release URL\n' +
        '  agent0 (i-0bbbbbbbbbbbbbbb1): Undeliverable\n    SSM: Undeliverable',
    );
    assert.deepEqual(
      error.failed.map((f) => f.node.name),
      ['app1', 'agent0'],
    );
    return true;
  });
});

test('a command that outlives its time limit is cancelled and reported as timed out', async () => {
  let now = 0;
  const aws = new FakeAws((args) => {
    if (args[1] === 'send-command') return sent();
    if (args[1] === 'cancel-command') return { stdout: '{}' };
    return listed([invocation('i-0aaaaaaaaaaaaaaa1', 'InProgress')]);
  });
  const shell = new SsmShell(aws, { region: 'us-east-1', pollMs: 30_000, now: () => now, sleep: async (ms) => void (now += ms) });
  const results = await shell.run(['i-0aaaaaaaaaaaaaaa1'], 'sleep 999', { timeoutSec: 60 });
  const result = results.get('i-0aaaaaaaaaaaaaaa1')!;
  assert.equal(result.status, 'TimedOut');
  assert.equal(result.exitCode, null);
  assert.match(result.stderr, /no result within 180 s \(SSM command ef7fdfd8-9b57-4151-a15c-db9a12345678\); cancelled/);
  assert.deepEqual(aws.calls.at(-1)!.slice(0, 4), ['ssm', 'cancel-command', '--command-id', COMMAND_ID]);
  assert.ok(now >= 180_000 && now <= 240_000, `gave up after the limit plus slack (${now / 1000} s)`);
});

test('more than 50 instances go out in batches; aws errors and odd answers are clear', async () => {
  const ids = Array.from({ length: SSM_MAX_TARGETS + 3 }, (_, i) => `i-0${String(i).padStart(16, '0')}`);
  const batches: string[][] = [];
  const aws = new FakeAws((args) => {
    if (args[1] === 'send-command') {
      const targets = args.slice(args.indexOf('--instance-ids') + 1, args.indexOf('--parameters'));
      batches.push(targets);
      return sent(`cmd-${batches.length}`);
    }
    if (args[1] === 'get-command-invocation') return { stdout: JSON.stringify(invocation(instanceOf(args), 'Success', { code: 0, stdout: instanceOf(args) })) };
    const batch = batches[Number(args[args.indexOf('--command-id') + 1]!.split('-')[1]) - 1]!;
    return listed(batch.map((id) => invocation(id, 'Success')));
  });
  const results = await new SsmShell(aws, { region: 'us-east-1', sleep: async () => {} }).run(ids, 'hostname', { timeoutSec: 30 });
  assert.deepEqual(
    batches.map((b) => b.length),
    [50, 3],
  );
  assert.equal(results.size, 53);
  assert.equal(results.get(ids[52]!)?.stdout, ids[52]);

  const denied = new FakeAws(() => ({
    code: 254,
    stderr: '\nAn error occurred (AccessDeniedException) when calling the SendCommand operation: not authorized to perform: ssm:SendCommand\n',
  }));
  await assert.rejects(
    new SsmShell(denied, { region: 'us-east-1' }).run(['i-0aaaaaaaaaaaaaaa1'], 'true', { timeoutSec: 5 }),
    /aws ssm send-command failed \(exit 254\): An error occurred \(AccessDeniedException\)/,
  );
  const odd = new FakeAws((args) =>
    args[1] === 'send-command' ? sent() : { stdout: '{"CommandInvocations": [{"InstanceId": "i-1", "Status": "Exploded"}]}' },
  );
  await assert.rejects(
    new SsmShell(odd, { region: 'us-east-1', sleep: async () => {} }).run(['i-0aaaaaaaaaaaaaaa1'], 'true', { timeoutSec: 5 }),
    /list-command-invocations: unexpected answer \(CommandInvocations\.0\.Status/,
  );
});
