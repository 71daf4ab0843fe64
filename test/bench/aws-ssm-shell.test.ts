import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CommandResult, CommandRunner } from '../../src/util/command-runner.ts';
import { RemoteCommandError, runOnNodes } from '../../src/bench/aws/remote-shell.ts';
import { SSM_MAX_TARGETS, SsmShell } from '../../src/bench/aws/ssm-shell.ts';

/**
 * The SSM Run Command shell against the aws CLI's documented JSON (`ssm send-command`,
 * `ssm list-command-invocations --details`, whose plugin Output joins stdout and stderr
 * with AWS-RunShellScript's "----------ERROR-------" line).
 */

const COMMAND_ID = 'ef7fdfd8-9b57-4151-a15c-db9a12345678';

function invocation(instanceId: string, status: string, plugin: { code?: number; output?: string } = {}, details = status): Record<string, unknown> {
  return {
    CommandId: COMMAND_ID,
    InstanceId: instanceId,
    InstanceName: '',
    DocumentName: 'AWS-RunShellScript',
    DocumentVersion: '$DEFAULT',
    RequestedDateTime: 1582136283.089,
    Status: status,
    StatusDetails: details,
    StandardOutputUrl: '',
    StandardErrorUrl: '',
    CommandPlugins:
      plugin.code === undefined && plugin.output === undefined
        ? []
        : [{ Name: 'aws:runShellScript', Status: status, StatusDetails: details, ResponseCode: plugin.code ?? -1, Output: plugin.output ?? '', OutputS3Region: 'us-east-1', OutputS3BucketName: '', OutputS3KeyPrefix: '' }],
    ServiceRole: '',
    NotificationConfig: { NotificationArn: '', NotificationEvents: [], NotificationType: '' },
    CloudWatchOutputConfig: { CloudWatchLogGroupName: '', CloudWatchOutputEnabled: false },
  };
}

class FakeAws implements CommandRunner {
  readonly calls: string[][] = [];
  constructor(private readonly answer: (args: readonly string[], n: number) => Partial<CommandResult>) {}
  async run(command: string, args: readonly string[]): Promise<CommandResult> {
    assert.equal(command, 'aws');
    this.calls.push([...args]);
    return { code: 0, stdout: '', stderr: '', ...this.answer(args, this.calls.length) };
  }
}

const sent = (commandId = COMMAND_ID) => ({ stdout: JSON.stringify({ Command: { CommandId: commandId, DocumentName: 'AWS-RunShellScript', Status: 'Pending', InstanceIds: ['i-0aaaaaaaaaaaaaaa1'] } }) });

test('send-command carries the script as one command with its time limit; results are parsed per instance', async () => {
  let polls = 0;
  const aws = new FakeAws((args) => {
    if (args[1] === 'send-command') return sent();
    polls++;
    // First poll: still running on one node, and SSM may not list a node yet.
    if (polls === 1) return { stdout: JSON.stringify({ CommandInvocations: [invocation('i-0aaaaaaaaaaaaaaa1', 'InProgress')] }) };
    return {
      stdout: JSON.stringify({
        CommandInvocations: [
          invocation('i-0aaaaaaaaaaaaaaa1', 'Success', { code: 0, output: 'mattermost from https://x is up\n' }),
          invocation('i-0aaaaaaaaaaaaaaa2', 'Failed', { code: 1, output: 'partial\n----------ERROR-------\nmattermost did not answer /api/v4/system/ping within 600 s\n' }),
        ],
      }),
    };
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
  assert.deepEqual(aws.calls[1]!.slice(0, 5), ['ssm', 'list-command-invocations', '--command-id', COMMAND_ID, '--details']);
  assert.equal(aws.calls.length, 3, 'polled until every instance finished');

  assert.deepEqual(results.get('i-0aaaaaaaaaaaaaaa1'), { instanceId: 'i-0aaaaaaaaaaaaaaa1', status: 'Success', exitCode: 0, stdout: 'mattermost from https://x is up', stderr: '' });
  assert.deepEqual(results.get('i-0aaaaaaaaaaaaaaa2'), { instanceId: 'i-0aaaaaaaaaaaaaaa2', status: 'Failed', exitCode: 1, stdout: 'partial', stderr: 'mattermost did not answer /api/v4/system/ping within 600 s\n' });
});

test('a failed invocation names the node, its status and its stderr', async () => {
  const aws = new FakeAws((args) =>
    args[1] === 'send-command'
      ? sent()
      : {
          stdout: JSON.stringify({
            CommandInvocations: [
              invocation('i-0aaaaaaaaaaaaaaa1', 'Success', { code: 0, output: '' }),
              invocation('i-0aaaaaaaaaaaaaaa2', 'Failed', { code: 2, output: '----------ERROR-------\nloadgate-mattermost: expected an https://...tar.gz release URL\n' }),
              // An agent that never got the command: no plugin ran.
              invocation('i-0bbbbbbbbbbbbbbb1', 'Failed', {}, 'Undeliverable'),
            ],
          }),
        },
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
    assert.deepEqual(error.failed.map((f) => f.node.name), ['app1', 'agent0']);
    return true;
  });
});

test('a command that outlives its time limit is cancelled and reported as timed out', async () => {
  let now = 0;
  const aws = new FakeAws((args) => {
    if (args[1] === 'send-command') return sent();
    if (args[1] === 'cancel-command') return { stdout: '{}' };
    return { stdout: JSON.stringify({ CommandInvocations: [invocation('i-0aaaaaaaaaaaaaaa1', 'InProgress')] }) };
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
    const batch = batches[Number(args[args.indexOf('--command-id') + 1]!.split('-')[1]) - 1]!;
    return { stdout: JSON.stringify({ CommandInvocations: batch.map((id) => invocation(id, 'Success', { code: 0, output: id })) }) };
  });
  const results = await new SsmShell(aws, { region: 'us-east-1', sleep: async () => {} }).run(ids, 'hostname', { timeoutSec: 30 });
  assert.deepEqual(batches.map((b) => b.length), [50, 3]);
  assert.equal(results.size, 53);
  assert.equal(results.get(ids[52]!)?.stdout, ids[52]);

  const denied = new FakeAws(() => ({ code: 254, stderr: '\nAn error occurred (AccessDeniedException) when calling the SendCommand operation: not authorized to perform: ssm:SendCommand\n' }));
  await assert.rejects(new SsmShell(denied, { region: 'us-east-1' }).run(['i-0aaaaaaaaaaaaaaa1'], 'true', { timeoutSec: 5 }), /aws ssm send-command failed \(exit 254\): An error occurred \(AccessDeniedException\)/);
  const odd = new FakeAws((args) => (args[1] === 'send-command' ? sent() : { stdout: '{"CommandInvocations": [{"InstanceId": "i-1", "Status": "Exploded"}]}' }));
  await assert.rejects(new SsmShell(odd, { region: 'us-east-1', sleep: async () => {} }).run(['i-0aaaaaaaaaaaaaaa1'], 'true', { timeoutSec: 5 }), /list-command-invocations: unexpected answer \(CommandInvocations\.0\.Status/);
});
