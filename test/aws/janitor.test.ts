import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isExpired, listBenches, parseArn, runJanitor, type JanitorOptions } from '../../src/aws/janitor.ts';
import type { CommandResult, CommandRunner } from '../../src/util/command-runner.ts';
import { sweepRegions } from '../../src/cli/commands/janitor.ts';

/** Replays AWS CLI and Terraform answers and records every call, in order. */
class FakeRunner implements CommandRunner {
  readonly calls: string[] = [];
  constructor(private readonly answer: (line: string) => Partial<CommandResult> | undefined) {}
  async run(command: string, args: readonly string[]): Promise<CommandResult> {
    const line = [command, ...args].join(' ');
    this.calls.push(line);
    return { code: 0, stdout: '', stderr: '', ...this.answer(line) };
  }
}

const account = 'arn:aws:ec2:us-east-1:123456789012';
const tags = (bench: string, extra: Record<string, string>) => [
  { Key: 'Project', Value: 'loadgate' },
  { Key: 'Bench', Value: bench },
  ...Object.entries(extra).map(([Key, Value]) => ({ Key, Value })),
];
const expired = tags('lg-100-1', { ExpiresAt: '2026-11-21T08:00:00Z', StateKey: 'loadgate/acme/chat/100/1/terraform.tfstate' });
const current = tags('lg-200-1', { ExpiresAt: '2026-11-21T20:00:00Z', StateKey: 'loadgate/acme/chat/200/1/terraform.tfstate' });
const untagged = tags('lg-300-1', {});
const arn = (suffix: string) => `${account}:${suffix}`;

/** The tagging API answers in two pages, as it does for large accounts. */
function taggingAnswer(line: string): Partial<CommandResult> | undefined {
  if (!line.includes('get-resources')) return undefined;
  if (!line.includes('--pagination-token')) {
    return {
      stdout: JSON.stringify({
        ResourceTagMappingList: [
          { ResourceARN: arn('instance/i-0aaa'), Tags: expired },
          { ResourceARN: arn('instance/i-0bbb'), Tags: current },
          { ResourceARN: arn('instance/i-0ccc'), Tags: untagged },
        ],
        PaginationToken: 'page-2',
      }),
    };
  }
  return {
    stdout: JSON.stringify({
      ResourceTagMappingList: [
        { ResourceARN: 'arn:aws:rds:us-east-1:123456789012:cluster:lg-300-1', Tags: untagged },
        { ResourceARN: 'arn:aws:rds:us-east-1:123456789012:db:lg-300-1-0', Tags: untagged },
        { ResourceARN: arn('vpc/vpc-0300'), Tags: untagged },
        { ResourceARN: arn('security-group/sg-0301'), Tags: untagged },
        { ResourceARN: arn('natgateway/nat-0300'), Tags: untagged },
        { ResourceARN: arn('subnet/subnet-0300'), Tags: untagged },
        { ResourceARN: 'arn:aws:es:us-east-1:123456789012:domain/lg-300-1', Tags: untagged },
        { ResourceARN: 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab', Tags: untagged },
      ],
      PaginationToken: '',
    }),
  };
}

const options = (overrides: Partial<JanitorOptions> = {}): JanitorOptions & { lines: string[] } => {
  const lines: string[] = [];
  return {
    regions: ['us-east-1'],
    stateRegion: 'us-east-1',
    bucket: 'acme-loadgate-state',
    infraDir: 'infra/aws',
    now: new Date('2026-11-21T12:00:00Z'),
    dryRun: false,
    log: (l) => lines.push(l),
    lines,
    sleep: async () => {},
    ...overrides,
  };
};

test('ARNs of every resource kind the bench creates are understood', () => {
  assert.deepEqual(parseArn('arn:aws:ec2:us-east-1:1:instance/i-1'), { service: 'ec2', type: 'instance', id: 'i-1' });
  assert.deepEqual(parseArn('arn:aws:rds:us-east-1:1:cluster:lg-1'), { service: 'rds', type: 'cluster', id: 'lg-1' });
  assert.deepEqual(parseArn('arn:aws:rds:us-east-1:1:cluster-pg:lg-1-cluster'), { service: 'rds', type: 'cluster-pg', id: 'lg-1-cluster' });
  assert.deepEqual(parseArn('arn:aws:es:us-east-1:1:domain/lg-1'), { service: 'es', type: 'domain', id: 'lg-1' });
  assert.deepEqual(parseArn('arn:aws:kms:us-east-1:1:key/abc'), { service: 'kms', type: 'key', id: 'abc' });
});

test('benches are grouped by tag across pages; a missing ExpiresAt counts as expired', async () => {
  const runner = new FakeRunner(taggingAnswer);
  const benches = await listBenches(runner, 'us-east-1');
  assert.deepEqual(
    benches.map((b) => [b.bench, b.arns.length, b.stateKey]),
    [
      ['lg-100-1', 1, 'loadgate/acme/chat/100/1/terraform.tfstate'],
      ['lg-200-1', 1, 'loadgate/acme/chat/200/1/terraform.tfstate'],
      ['lg-300-1', 9, null],
    ],
  );
  const now = new Date('2026-11-21T12:00:00Z');
  assert.deepEqual(
    benches.map((b) => isExpired(b, now)),
    [true, false, true],
  );
  assert.equal(runner.calls.length, 2);
  assert.match(runner.calls[1] as string, /--pagination-token page-2/);
});

/** describe-domain: still deleting once, then gone (the CLI's documented error). */
function domainDeletion(): (line: string) => Partial<CommandResult> | undefined {
  let polls = 0;
  return (line) => {
    if (!line.includes('opensearch describe-domain')) return undefined;
    polls++;
    return polls === 1
      ? { stdout: JSON.stringify({ DomainStatus: { DomainName: 'lg-300-1', Deleted: true, Processing: true } }) }
      : { code: 254, stderr: '\nAn error occurred (ResourceNotFoundException) when calling the DescribeDomain operation: Domain not found: lg-300-1\n' };
  };
}

test('expired benches are destroyed with terraform, or by their tags when there is no state', async () => {
  const domain = domainDeletion();
  const runner = new FakeRunner((line) => {
    const d = domain(line);
    if (d) return d;
    if (line.includes('kms describe-key')) return { stdout: JSON.stringify({ KeyMetadata: { KeyId: 'k', KeyState: 'Enabled' } }) };
    if (line.includes('describe-security-group-rules')) {
      return {
        stdout: JSON.stringify({
          SecurityGroupRules: [
            { SecurityGroupRuleId: 'sgr-1', IsEgress: false },
            { SecurityGroupRuleId: 'sgr-2', IsEgress: true },
          ],
        }),
      };
    }
    if (line.startsWith('aws iam get-role')) return line.includes('lg-300-1-app') ? { stdout: '{}' } : { code: 254, stderr: 'NoSuchEntity' };
    return taggingAnswer(line);
  });
  const opts = options();
  const report = await runJanitor(runner, opts);
  assert.deepEqual(report.expired, ['lg-100-1', 'lg-300-1']);
  assert.deepEqual(report.kept, ['lg-200-1']);
  assert.deepEqual(report.destroyedWithTerraform, ['lg-100-1']);
  assert.deepEqual(report.deletedByTags, ['lg-300-1']);
  assert.deepEqual(report.failures, []);

  const terraform = runner.calls.filter((c) => c.startsWith('terraform') || c.startsWith('aws s3'));
  assert.match(
    terraform[0] as string,
    /^aws s3 cp --region us-east-1 s3:\/\/acme-loadgate-state\/loadgate\/acme\/chat\/100\/1\/terraform\.tfvars\.json \S+terraform\.tfvars\.json$/,
  );
  assert.equal(
    terraform[1],
    'terraform -chdir=infra/aws init -input=false -reconfigure -backend-config=bucket=acme-loadgate-state -backend-config=key=loadgate/acme/chat/100/1/terraform.tfstate -backend-config=region=us-east-1',
  );
  assert.match(terraform[2] as string, /^terraform -chdir=infra\/aws destroy -auto-approve -input=false -var-file=\S+terraform\.tfvars\.json$/);
  assert.ok(!runner.calls.some((c) => c.includes('lg-200-1') || c.includes('i-0bbb')), 'the current bench is untouched');

  // Dependency order for the bench without state.
  const order = runner.calls
    .filter((c) => /^aws (opensearch|rds|ec2|kms|iam) /.test(c) && !c.includes('describe-security-group-rules') && !c.includes('get-role'))
    .map((c) => c.split(' ').slice(1, 3).join(' '));
  assert.deepEqual(order.slice(0, 19), [
    'opensearch delete-domain',
    'rds delete-db-instance',
    'ec2 terminate-instances',
    'ec2 wait',
    'rds wait',
    'rds delete-db-cluster',
    'rds wait',
    // The domain's network interfaces hold the security groups and subnets: wait it out.
    'opensearch describe-domain',
    'opensearch describe-domain',
    'ec2 delete-nat-gateway',
    'ec2 wait',
    'ec2 revoke-security-group-ingress',
    'ec2 revoke-security-group-egress',
    'ec2 delete-security-group',
    'ec2 delete-subnet',
    'ec2 delete-vpc',
    'kms describe-key',
    'kms schedule-key-deletion',
    'iam remove-role-from-instance-profile',
  ]);
  assert.ok(runner.calls.includes('aws iam delete-role --role-name lg-300-1-app'));
  assert.ok(runner.calls.some((c) => c === 'aws rds delete-db-cluster --db-cluster-identifier lg-300-1 --skip-final-snapshot --region us-east-1'));
});

test('a failed terraform destroy falls back to tags, and failures are reported', async () => {
  const runner = new FakeRunner((line) => {
    if (line.includes(' destroy ')) return { code: 1, stderr: 'Error: deleting RDS Cluster: timeout\n' };
    if (line.includes('delete-vpc')) return { code: 254, stderr: 'DependencyViolation: the vpc has dependencies' };
    if (line.startsWith('aws iam get-role')) return { code: 254, stderr: 'NoSuchEntity' };
    if (line.includes('get-resources')) {
      return { stdout: JSON.stringify({ ResourceTagMappingList: [{ ResourceARN: arn('vpc/vpc-0100'), Tags: expired }] }) };
    }
    return undefined;
  });
  const opts = options();
  const report = await runJanitor(runner, opts);
  assert.deepEqual(report.destroyedWithTerraform, []);
  assert.deepEqual(report.failures, ['lg-100-1: delete VPC vpc-0100: DependencyViolation: the vpc has dependencies']);
  assert.ok(opts.lines.some((l) => l.includes('terraform destroy failed: Error: deleting RDS Cluster: timeout')));
});

test('a dry run changes nothing', async () => {
  const runner = new FakeRunner((line) =>
    line.startsWith('aws iam get-role') ? { code: 254 } : (taggingAnswer(line) ?? { stdout: '{"SecurityGroupRules": []}' }),
  );
  const opts = options({ dryRun: true });
  const report = await runJanitor(runner, opts);
  assert.deepEqual(report.expired, ['lg-100-1', 'lg-300-1']);
  const mutating = runner.calls.filter(
    (c) => !/get-resources|describe-security-group-rules|iam get-role|scheduler get-schedule-group|kms describe-key/.test(c),
  );
  assert.deepEqual(mutating, []);
  assert.ok(opts.lines.some((l) => l.includes('would run aws rds delete-db-cluster --db-cluster-identifier lg-300-1')));
});

test('every region a gate can name is swept, with the state bucket in its own region', async () => {
  const runner = new FakeRunner((line) => {
    if (!line.includes('get-resources')) return line.startsWith('aws iam get-role') ? { code: 254, stderr: 'NoSuchEntity' } : undefined;
    const region = /--region (\S+)/.exec(line)?.[1];
    const bench = region === 'eu-west-1' ? 'lg-400-1' : 'lg-500-1';
    const key = `loadgate/acme/chat/${bench.slice(3, 6)}/1/terraform.tfstate`;
    return {
      stdout: JSON.stringify({
        ResourceTagMappingList: [
          {
            ResourceARN: `arn:aws:ec2:${region}:123456789012:vpc/vpc-0${bench.slice(3, 6)}`,
            Tags: tags(bench, { ExpiresAt: '2026-11-21T08:00:00Z', StateKey: key }),
          },
        ],
      }),
    };
  });
  const report = await runJanitor(runner, options({ regions: ['us-east-1', 'eu-west-1', 'us-east-1'], stateRegion: 'us-east-2' }));
  assert.deepEqual(report.regions, ['eu-west-1', 'us-east-1']);
  assert.deepEqual(report.destroyedWithTerraform.sort(), ['lg-400-1', 'lg-500-1']);
  const lists = runner.calls.filter((c) => c.includes('get-resources')).map((c) => /--region (\S+)/.exec(c)?.[1]);
  assert.deepEqual(lists, ['eu-west-1', 'us-east-1']);
  // The state and tfvars come from the bucket's region; the bench's region is in its tfvars.
  for (const call of runner.calls.filter((c) => c.startsWith('aws s3 cp'))) assert.match(call, /--region us-east-2 /);
  for (const call of runner.calls.filter((c) => c.includes(' init '))) assert.match(call, /-backend-config=region=us-east-2$/);
});

test('a KMS key pending deletion is done, not a failure on every sweep', async () => {
  const keyArn = 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
  const runner = new FakeRunner((line) => {
    if (line.includes('get-resources')) return { stdout: JSON.stringify({ ResourceTagMappingList: [{ ResourceARN: keyArn, Tags: expired }] }) };
    if (line.includes('kms describe-key'))
      return { stdout: JSON.stringify({ KeyMetadata: { KeyId: 'k', KeyState: 'PendingDeletion', DeletionDate: '2026-11-28T08:00:00Z' } }) };
    return undefined;
  });
  const opts = options();
  const report = await runJanitor(runner, opts);
  assert.deepEqual(report.pendingDeletion, ['lg-100-1']);
  assert.deepEqual([report.expired, report.failures], [[], []]);
  assert.ok(!runner.calls.some((c) => c.includes('schedule-key-deletion') || c.startsWith('terraform')), 'nothing is retried');
  assert.ok(opts.lines.some((l) => l.includes('only its KMS key is left, already pending deletion')));
});

test('security groups, subnets and the VPC are retried while AWS still reports a dependency; the log group goes too', async () => {
  let groupTries = 0;
  const runner = new FakeRunner((line) => {
    if (line.includes('get-resources')) {
      return {
        stdout: JSON.stringify({
          ResourceTagMappingList: [
            { ResourceARN: arn('security-group/sg-0301'), Tags: untagged },
            { ResourceARN: arn('vpc/vpc-0300'), Tags: untagged },
            { ResourceARN: 'arn:aws:logs:us-east-1:123456789012:log-group:/aws/rds/cluster/lg-300-1/postgresql:*', Tags: untagged },
          ],
        }),
      };
    }
    if (line.includes('describe-security-group-rules')) return { stdout: '{"SecurityGroupRules": []}' };
    if (line.includes('delete-security-group') && ++groupTries < 3)
      return {
        code: 254,
        stderr: 'An error occurred (DependencyViolation) when calling the DeleteSecurityGroup operation: resource sg-0301 has a dependent object',
      };
    if (line.startsWith('aws iam get-role')) return { code: 254, stderr: 'NoSuchEntity' };
    return undefined;
  });
  const opts = options();
  const report = await runJanitor(runner, opts);
  assert.deepEqual(report.deletedByTags, ['lg-300-1']);
  assert.deepEqual(report.failures, []);
  assert.equal(groupTries, 3);
  assert.ok(opts.lines.some((l) => /delete security group sg-0301: still in use .*retrying/.test(l)));
  assert.ok(runner.calls.includes('aws logs delete-log-group --log-group-name /aws/rds/cluster/lg-300-1/postgresql --region us-east-1'));
});

test('the janitor command sweeps the regions of its flags and of the AWS gate configs', async () => {
  const example = new URL('../../examples/aws-mattermost.yml', import.meta.url).pathname;
  const local = new URL('../../examples/local-synapse.yml', import.meta.url).pathname;
  assert.deepEqual(await sweepRegions({ region: ['eu-west-1'], regions: ['us-west-2', 'eu-west-1'], config: [example, local] }), [
    'eu-west-1',
    'us-east-1',
    'us-west-2',
  ]);
  await assert.rejects(sweepRegions({ region: [], config: [local] }), /no region to sweep/);
});

test("without a state, the bench's expiry schedules go first and its expiry role with the others", async () => {
  const domain = domainDeletion();
  const runner = new FakeRunner((line) => {
    const d = domain(line);
    if (d) return d;
    if (line.includes('kms describe-key')) return { stdout: JSON.stringify({ KeyMetadata: { KeyId: 'k', KeyState: 'Enabled' } }) };
    if (line.startsWith('aws scheduler get-schedule-group')) {
      return line.includes('--name lg-300-1 ')
        ? { stdout: JSON.stringify({ Name: 'lg-300-1', State: 'ACTIVE' }) }
        : { code: 254, stderr: 'An error occurred (ResourceNotFoundException) when calling the GetScheduleGroup operation: Schedule group not found.' };
    }
    if (line.startsWith('aws iam get-role')) return line.includes('lg-300-1-expiry') ? { stdout: '{}' } : { code: 254, stderr: 'NoSuchEntity' };
    return taggingAnswer(line) ?? { stdout: '{"SecurityGroupRules": []}' };
  });
  const report = await runJanitor(runner, options());
  assert.deepEqual(report.deletedByTags, ['lg-300-1']);
  assert.deepEqual(report.failures, []);
  const mutating = runner.calls.filter((c) => /^aws (opensearch|rds|ec2|scheduler) (delete|terminate)/.test(c));
  assert.equal(mutating[0], 'aws scheduler delete-schedule-group --name lg-300-1 --region us-east-1', 'no schedule fires on what the sweep deletes');
  assert.ok(runner.calls.includes('aws iam delete-role-policy --role-name lg-300-1-expiry --policy-name bench-expiry'));
  assert.ok(runner.calls.includes('aws iam delete-role --role-name lg-300-1-expiry'));
  // The bench destroyed with Terraform keeps its schedules to Terraform.
  assert.ok(!runner.calls.some((c) => c.startsWith('aws scheduler delete-schedule-group --name lg-100-1')));
});
