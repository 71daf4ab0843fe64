import { test } from 'node:test';
import assert from 'node:assert/strict';
import { accountNeeds } from '../../src/aws/bench-plan.ts';
import { resolveBench } from '../../src/aws/presets.ts';
import { checkVcpuQuota, isStandardFamily, readQuota, renderVcpuCheck, standardVcpuNeed } from '../../src/aws/quota.ts';
import { run as checkQuota } from '../../src/cli/commands/check-quota.ts';
import type { CommandRunner } from '../../src/util/command-runner.ts';
import { InputError } from '../../src/util/errors.ts';
import { answerAccountCall, type AwsAccount } from '../support/aws-account-standin.ts';
import { captureIO } from '../../src/cli/io.ts';
import { awsGate } from './fixtures.ts';

/** The account stand-in as the runner loadgate calls `aws` through, recording each call. */
function accountRunner(account: AwsAccount): CommandRunner & { calls: string[][] } {
  const calls: string[][] = [];
  return {
    calls,
    run: async (command, args) => {
      calls.push([command, ...args]);
      return answerAccountCall(account, args) ?? { code: 254, stdout: '', stderr: `not stood in: ${args.slice(0, 2).join(' ')}` };
    },
  };
}

const perfcomp = () => {
  const gate = awsGate();
  return standardVcpuNeed(accountNeeds(resolveBench(gate.bench.aws, gate.tests)));
};

test('the Standard quota covers the A, C, D, H, I, M, R, T and Z families only', () => {
  const standard = [
    'c7i.xlarge',
    'm6in.8xlarge',
    'r7g.large',
    't3.micro',
    'a1.medium',
    'd3en.xlarge',
    'h1.2xlarge',
    'i4i.large',
    'im4gn.large',
    'is4gen.large',
    'z1d.large',
    'm7i-flex.large',
  ];
  const others = [
    'g5.xlarge',
    'p4d.24xlarge',
    'inf2.xlarge',
    'trn1.2xlarge',
    'dl1.24xlarge',
    'hpc7g.4xlarge',
    'mac2.metal',
    'vt1.3xlarge',
    'x2idn.16xlarge',
    'u-6tb1.112xlarge',
    'f1.2xlarge',
  ];
  assert.deepEqual(
    standard.filter((t) => !isStandardFamily(t)),
    [],
  );
  assert.deepEqual(others.filter(isStandardFamily), []);
});

test("the applied value wins; without one, the default; the region is always the bench's", async () => {
  const account: AwsAccount = { standardVcpus: { default: 32, applied: { 'eu-west-1': 400 } } };
  const runner = accountRunner(account);
  assert.deepEqual(await readQuota(runner, 'eu-west-1', 'ec2', 'L-1216C47A'), { value: 400, source: 'applied' });
  assert.equal(runner.calls.length, 1);
  assert.deepEqual(await readQuota(runner, 'us-east-1', 'ec2', 'L-1216C47A'), { value: 32, source: 'default' });
  assert.deepEqual(
    runner.calls.slice(1).map((c) => [c[2], c[c.indexOf('--region') + 1]]),
    [
      ['get-service-quota', 'us-east-1'],
      ['get-aws-default-service-quota', 'us-east-1'],
    ],
  );
});

test('an applied answer with an ErrorReason and no Value falls back to the default, as the AWS provider reads it', async () => {
  // GetServiceQuotaResponse may carry ErrorReason (botocore service-2.json, ErrorCode enum).
  const withError = JSON.stringify({
    Quota: { ServiceCode: 'ec2', QuotaCode: 'L-1216C47A', ErrorReason: { ErrorCode: 'DEPENDENCY_SERVICE_ERROR', ErrorMessage: 'EC2 is not available' } },
  });
  const standin = accountRunner({ standardVcpus: { default: 96 } });
  const runner: CommandRunner = {
    run: async (command, args) => (args[1] === 'get-service-quota' ? { code: 0, stdout: withError, stderr: '' } : standin.run(command, args)),
  };
  assert.deepEqual(await readQuota(runner, 'us-east-1', 'ec2', 'L-1216C47A'), { value: 96, source: 'default' });
});

test('other failures are not taken for "no applied value": throttling and denials stop the check with the cause', async () => {
  const throttled: CommandRunner = {
    run: async () => ({
      code: 254,
      stdout: '',
      stderr: '\nAn error occurred (TooManyRequestsException) when calling the GetServiceQuota operation: Rate exceeded\n',
    }),
  };
  await assert.rejects(
    readQuota(throttled, 'us-east-1', 'ec2', 'L-1216C47A'),
    (e: Error) => e instanceof InputError && /TooManyRequestsException/.test(e.message),
  );
  const denied = accountRunner({ standardVcpus: { default: 640 }, denied: ['ec2:DescribeInstances'] });
  await assert.rejects(checkVcpuQuota(denied, 'us-east-1', perfcomp()), /access denied\. The role needs ec2:DescribeInstances/);
});

test('running vCPUs: pending and running on-demand Standard instances of the region, by their CPU options', async () => {
  const account: AwsAccount = {
    standardVcpus: { default: 128 },
    instances: [
      { type: 'c7g.2xlarge', region: 'us-east-1', state: 'running', cores: 8, threadsPerCore: 1 },
      { type: 'm7i.large', region: 'us-east-1', state: 'pending', cores: 1, threadsPerCore: 2 },
      { type: 'm7i.large', region: 'us-east-1', state: 'stopping', cores: 1, threadsPerCore: 2 },
      { type: 'p4d.24xlarge', region: 'us-east-1', state: 'running', cores: 48, threadsPerCore: 2 },
    ],
  };
  const check = await checkVcpuQuota(accountRunner(account), 'us-east-1', perfcomp());
  assert.equal(check.running, 8 + 2);
  assert.equal(check.fits, 10 + 68 <= 128);
  assert.match(renderVcpuCheck(check), /^Quota: 78 of 128 vCPUs with this bench; 50 to spare\.$/m);
  const full = await checkVcpuQuota(accountRunner({ ...account, standardVcpus: { default: 77 } }), 'us-east-1', perfcomp());
  assert.equal(full.fits, false, 'one vCPU short is refused');
});

test('check-quota: exit 0 when the bench fits, 1 when not, 3 for a config on the local bench', async () => {
  const io = captureIO();
  // The example runs in duet: two agent groups of 6.
  assert.equal(await checkQuota(['--config', 'examples/aws-mattermost.yml'], io, accountRunner({ standardVcpus: { default: 72 } })), 0);
  assert.match(io.stdout.join('\n'), /this bench {5}72 vCPUs \(app 2 x c7i\.2xlarge = 16, agent 12 x c7i\.xlarge = 48/);
  const short = captureIO();
  assert.equal(await checkQuota(['--config', 'examples/aws-mattermost.yml'], short, accountRunner({ standardVcpus: { default: 71 } })), 1);
  assert.match(short.stderr.join('\n'), /REFUSED: .* over the quota of 71/);
  const sequential = captureIO();
  assert.equal(await checkQuota(['--config', 'examples/aws-mattermost-sequential.yml'], sequential, accountRunner({ standardVcpus: { default: 68 } })), 0);
  assert.match(sequential.stdout.join('\n'), /this bench {5}68 vCPUs \(app 2 x c7i\.2xlarge = 16, agent 11 x c7i\.xlarge = 44/);
  await assert.rejects(
    checkQuota(['--config', 'examples/local-synapse.yml'], captureIO(), accountRunner({ standardVcpus: { default: 68 } })),
    /bench\.kind is "local"/,
  );
});

test('the account stand-in refuses what the CLI and Service Quotas refuse', () => {
  const account: AwsAccount = { standardVcpus: { default: 32 } };
  const ask = (...args: string[]) => answerAccountCall(account, args);
  assert.equal(ask('service-quotas', 'get-service-quota', '--service-code', 'ec2', '--quota-code', 'L-1216C47A')?.code, 253, 'no region');
  assert.match(
    ask('service-quotas', 'get-aws-default-service-quota', '--service-code', 'EC2', '--quota-code', 'L-1216C47A', '--region', 'us-east-1')?.stderr ?? '',
    /\(NoSuchResourceException\).*specified service does not exist/,
  );
  assert.equal(ask('service-quotas', 'get-service-quota', '--service-code', 'ec2', '--region', 'us-east-1')?.code, 252);
  assert.match(
    ask('ec2', 'describe-instances', '--region', 'us-east-1', '--filters', 'Name=tag:Project,Values=loadgate')?.stderr ?? '',
    /InvalidParameterValue/,
  );
  // The default's ARN has no account; Value is printed as the double it is.
  const stdout =
    ask('service-quotas', 'get-aws-default-service-quota', '--service-code', 'ec2', '--quota-code', 'L-1216C47A', '--region', 'us-east-1')?.stdout ?? '';
  assert.match(stdout, /"QuotaArn": "arn:aws:servicequotas:us-east-1::ec2\/L-1216C47A"/);
  assert.match(stdout, /"Value": 32\.0$/m);
});
