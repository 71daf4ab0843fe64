import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCall, type LoggedCall } from './emulator/call-log.ts';
import { iamRequests, recordCreated, type Account, type TagRegistry } from './emulator/iam-requests.ts';
import { POLICY_FILE, describeDecision, loadPolicy, simulate } from './emulator/simulate.ts';

/**
 * The workflows' IAM policy (infra/iam/github-role-policy.json) against the
 * calls the review of issue 11 found refused, simulated with
 * @cloud-copilot/iam-simulate. Each call is shaped as the provider sends it
 * (the emulator test logs the real ones); every one was denied by the policy
 * docs/aws.md held before.
 */

const account: Account = { id: '123456789012', region: 'us-east-1' };
const BENCH_TAGS = { Project: 'loadgate', Bench: 'lg-test-1', ExpiresAt: '2030-01-31T18:00:00Z' };
const tagParams = (prefix: string, tags: Record<string, string>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(tags).flatMap(([k, v], i) => [
      [`${prefix}.${i + 1}.Key`, k],
      [`${prefix}.${i + 1}.Value`, v],
    ]),
  );
const call = (service: string, action: string, params: Record<string, unknown>, requestTags: Record<string, string> = {}, response = ''): LoggedCall => ({
  service,
  action,
  params,
  requestTags,
  response,
  method: 'POST',
  path: '/',
  status: 200,
});

async function decisions(calls: LoggedCall[]): Promise<string[]> {
  const registry: TagRegistry = new Map();
  const requests = calls.flatMap((c) => {
    const made = iamRequests(c, account, registry);
    assert.ok(made, `the IAM model knows ${c.service} ${c.action}`);
    recordCreated(c, registry);
    return made;
  });
  return (await simulate(loadPolicy(account, 'acme-loadgate-state'), account, requests)).map(describeDecision);
}

const denied = (lines: string[]): string[] => lines.filter((l) => !l.endsWith('-> Allowed'));

// The calls are a bench's VPC and security group first, so later calls find their tags.
const vpc = call(
  'ec2',
  'CreateVpc',
  { Action: 'CreateVpc', ...tagParams('TagSpecification.1.Tag', BENCH_TAGS) },
  BENCH_TAGS,
  '<vpcId>vpc-0123456789abcdef0</vpcId>',
);
const group = call(
  'ec2',
  'CreateSecurityGroup',
  { Action: 'CreateSecurityGroup', VpcId: 'vpc-0123456789abcdef0' },
  BENCH_TAGS,
  '<groupId>sg-0123456789abcdef0</groupId>',
);

test('security-group rules created with the default tags are allowed (ec2:CreateTags for Authorize*)', async () => {
  const ingress = call('ec2', 'AuthorizeSecurityGroupIngress', { Action: 'AuthorizeSecurityGroupIngress', GroupId: 'sg-0123456789abcdef0' }, BENCH_TAGS);
  const egress = call('ec2', 'AuthorizeSecurityGroupEgress', { Action: 'AuthorizeSecurityGroupEgress', GroupId: 'sg-0123456789abcdef0' }, BENCH_TAGS);
  assert.deepEqual(denied(await decisions([vpc, group, ingress, egress])), []);
});

test("a run job admits its own runner to the bench's groups and withdraws it (action/lib/admit.sh), and to no other group", async () => {
  const RULE_TAGS = { Project: 'loadgate', Name: 'loadgate-runner-42-run-aws' };
  // As the CLI sends admit.sh's calls: one CIDR rule, tagged at creation; the revoke by rule id.
  const admit = (groupId: string, tags: Record<string, string>) =>
    call(
      'ec2',
      'AuthorizeSecurityGroupIngress',
      {
        Action: 'AuthorizeSecurityGroupIngress',
        GroupId: groupId,
        'IpPermissions.1.IpProtocol': 'tcp',
        'IpPermissions.1.FromPort': '9090',
        'IpPermissions.1.ToPort': '9090',
        'IpPermissions.1.IpRanges.1.CidrIp': '198.51.100.7/32',
        'TagSpecification.1.ResourceType': 'security-group-rule',
        ...tagParams('TagSpecification.1.Tag', tags),
      },
      tags,
    );
  const withdraw = (groupId: string) =>
    call('ec2', 'RevokeSecurityGroupIngress', { Action: 'RevokeSecurityGroupIngress', GroupId: groupId, 'SecurityGroupRuleId.1': 'sgr-0123456789abcdef0' });
  assert.deepEqual(denied(await decisions([vpc, group, admit('sg-0123456789abcdef0', RULE_TAGS), withdraw('sg-0123456789abcdef0')])), []);
  // Another group of the account, or a rule without the Project tag: refused.
  assert.equal(denied(await decisions([admit('sg-0fedcba9876543210', RULE_TAGS), withdraw('sg-0fedcba9876543210')])).length, 2);
  assert.ok(denied(await decisions([vpc, group, admit('sg-0123456789abcdef0', { Name: 'untagged' })])).length > 0);
});

test('an Aurora cluster created with tags is allowed (rds:AddTagsToResource under aws:RequestTag, RDS service-linked role)', async () => {
  const cluster = call('rds', 'CreateDBCluster', { Action: 'CreateDBCluster', DBClusterIdentifier: 'lg-test-1', ManageMasterUserPassword: 'true' }, BENCH_TAGS);
  const instance = call('rds', 'CreateDBInstance', { Action: 'CreateDBInstance', DBInstanceIdentifier: 'lg-test-1-0' }, BENCH_TAGS);
  assert.deepEqual(denied(await decisions([cluster, instance])), []);
});

test('a KMS key created with tags is allowed (kms:TagResource with no resource-tag condition)', async () => {
  const key = call(
    'kms',
    'CreateKey',
    { Tags: Object.entries(BENCH_TAGS).map(([TagKey, TagValue]) => ({ TagKey, TagValue })) },
    BENCH_TAGS,
    '{"KeyMetadata":{"KeyId":"0f0e0d0c-0b0a-0908-0706-050403020100"}}',
  );
  assert.deepEqual(denied(await decisions([key])), []);
});

test('the Grafana-token secret created with tags is allowed (secretsmanager:TagResource at creation)', async () => {
  const secret = call(
    'secretsmanager',
    'CreateSecret',
    { Name: 'lg-test-1/grafana-token', Tags: Object.entries(BENCH_TAGS).map(([Key, Value]) => ({ Key, Value })) },
    BENCH_TAGS,
  );
  assert.deepEqual(denied(await decisions([secret])), []);
});

test('instances launched with an SSH key pair are allowed (RunInstances on key-pair/*), passing only lg-* roles to EC2', async () => {
  const subnet = call(
    'ec2',
    'CreateSubnet',
    { Action: 'CreateSubnet', VpcId: 'vpc-0123456789abcdef0' },
    BENCH_TAGS,
    '<subnetId>subnet-0123456789abcdef0</subnetId>',
  );
  const run = call(
    'ec2',
    'RunInstances',
    {
      Action: 'RunInstances',
      ImageId: 'ami-0123456789abcdef0',
      SubnetId: 'subnet-0123456789abcdef0',
      'SecurityGroupId.1': 'sg-0123456789abcdef0',
      KeyName: 'bench-admin',
      'IamInstanceProfile.Name': 'lg-test-1-app',
    },
    BENCH_TAGS,
  );
  assert.deepEqual(denied(await decisions([vpc, group, subnet, run])), []);
});

test("a run job may move its bench's ExpiresAt (ec2 create-tags on the bench's instances, src/bench/aws/expiry.ts), and no other instance's", async () => {
  const subnet = call(
    'ec2',
    'CreateSubnet',
    { Action: 'CreateSubnet', VpcId: 'vpc-0123456789abcdef0' },
    BENCH_TAGS,
    '<subnetId>subnet-0123456789abcdef0</subnetId>',
  );
  const run = call(
    'ec2',
    'RunInstances',
    {
      Action: 'RunInstances',
      ImageId: 'ami-0123456789abcdef0',
      SubnetId: 'subnet-0123456789abcdef0',
      'SecurityGroupId.1': 'sg-0123456789abcdef0',
      'IamInstanceProfile.Name': 'lg-test-1-app',
    },
    BENCH_TAGS,
    '<instancesSet><item><instanceId>i-0123456789abcdef0</instanceId></item></instancesSet>',
  );
  const retag = (id: string) =>
    call(
      'ec2',
      'CreateTags',
      { Action: 'CreateTags', 'ResourceId.1': id, 'Tag.1.Key': 'ExpiresAt', 'Tag.1.Value': '2030-02-01T02:00:00Z' },
      { ExpiresAt: '2030-02-01T02:00:00Z' },
    );
  assert.deepEqual(denied(await decisions([vpc, group, subnet, run, retag('i-0123456789abcdef0')])), []);
  assert.equal(denied(await decisions([retag('i-0fedcba9876543210')])).length, 1, 'an instance the bench did not create');
});

/** A request to EventBridge Scheduler's REST API as the provider and the AWS CLI send it, parsed as the emulator's proxy parses it. */
const schedulerCall = (method: string, url: string, body: Record<string, unknown> | null, response = '{}'): LoggedCall =>
  parseCall(
    method,
    url,
    { authorization: 'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20300131/us-east-1/scheduler/aws4_request, SignedHeaders=host, Signature=0' },
    body ? JSON.stringify(body) : '',
    200,
    response,
  );

test("the bench's expiry schedules: created in its tagged group, passing only its lg-*-expiry role to the scheduler, and moved by a run job", async () => {
  const expiryRole = `arn:aws:iam::${account.id}:role/lg-test-1-expiry`;
  const target = (role: string) => ({
    Arn: 'arn:aws:scheduler:::aws-sdk:rds:deleteDBInstance',
    RoleArn: role,
    Input: '{"DBInstanceIdentifier":"lg-test-1-0"}',
  });
  const group = schedulerCall('POST', '/schedule-groups/lg-test-1', {
    ClientToken: 'x',
    Tags: Object.entries(BENCH_TAGS).map(([Key, Value]) => ({ Key, Value })),
  });
  const readGroup = schedulerCall('GET', '/schedule-groups/lg-test-1', null);
  const groupTags = schedulerCall('GET', `/tags/${encodeURIComponent(`arn:aws:scheduler:us-east-1:${account.id}:schedule-group/lg-test-1`)}`, null);
  const create = (groupName: string, role: string) =>
    schedulerCall('POST', '/schedules/db-instance-0', {
      GroupName: groupName,
      ScheduleExpression: 'at(2030-01-31T18:00:00)',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: target(role),
    });
  const read = schedulerCall('GET', '/schedules/db-instance-0?groupName=lg-test-1', null);
  const list = schedulerCall('GET', '/schedules?ScheduleGroup=lg-test-1', null);
  const move = schedulerCall('PUT', '/schedules/db-instance-0', {
    GroupName: 'lg-test-1',
    ScheduleExpression: 'at(2030-02-01T02:00:00)',
    FlexibleTimeWindow: { Mode: 'OFF' },
    Target: target(expiryRole),
  });
  const remove = schedulerCall('DELETE', '/schedules/db-instance-0?groupName=lg-test-1', null);
  const removeGroup = schedulerCall('DELETE', '/schedule-groups/lg-test-1', null);
  assert.deepEqual(
    [group, create('lg-test-1', expiryRole), move, remove, removeGroup].map((c) => c.action),
    ['CreateScheduleGroup', 'CreateSchedule', 'UpdateSchedule', 'DeleteSchedule', 'DeleteScheduleGroup'],
  );
  assert.deepEqual(denied(await decisions([group, readGroup, groupTags, create('lg-test-1', expiryRole), read, list, move, remove, removeGroup])), []);
  // Another role (the workflow's own, an instance role), another group, an untagged group: refused.
  assert.equal(denied(await decisions([create('lg-test-1', `arn:aws:iam::${account.id}:role/loadgate-bench`)])).length, 1);
  assert.equal(denied(await decisions([create('lg-test-1', `arn:aws:iam::${account.id}:role/lg-test-1-app`)])).length, 1);
  assert.equal(denied(await decisions([create('payroll', expiryRole)])).length, 1);
  assert.equal(
    denied(await decisions([schedulerCall('POST', '/schedule-groups/lg-test-2', { Tags: [{ Key: 'Name', Value: 'x' }] })])).length,
    2,
    'the group and its tags',
  );
});

test("Terraform's S3 backend may list the workspaces (prefix env:/) at init, found by simulating the emulator's calls", async () => {
  const list: LoggedCall = { ...call('s3', 'ListBucket', { 'list-type': '2', prefix: 'env:/' }), method: 'GET', path: '/acme-loadgate-state' };
  assert.deepEqual(denied(await decisions([list])), []);
});

test("provision's quota check (check-quota) is allowed: the quota, its AWS default and the running instances", async () => {
  // As the CLI sends them: Service Quotas' JSON bodies, EC2's query parameters.
  const quota = { ServiceCode: 'ec2', QuotaCode: 'L-1216C47A' };
  const applied = call('servicequotas', 'GetServiceQuota', quota);
  const fallback = call('servicequotas', 'GetAWSDefaultServiceQuota', quota);
  const running = call('ec2', 'DescribeInstances', {
    Action: 'DescribeInstances',
    'Filter.1.Name': 'instance-state-name',
    'Filter.1.Value.1': 'pending',
    'Filter.1.Value.2': 'running',
  });
  assert.deepEqual(denied(await decisions([applied, fallback, running])), []);
  // Reading is all the role may do with quotas: asking for an increase is left to a person.
  const increase = call('servicequotas', 'RequestServiceQuotaIncrease', { ...quota, DesiredValue: 256 });
  assert.equal(denied(await decisions([increase])).length, 1);
});

test("a run job reads each SSM command's status and output as src/bench/aws/ssm-shell.ts does (list-command-invocations, get-command-invocation), and cancels one", async () => {
  const command = { CommandId: 'ef7fdfd8-9b57-4151-a15c-db9a12345678' };
  const reads = [
    call('ssm', 'ListCommandInvocations', command),
    call('ssm', 'GetCommandInvocation', { ...command, InstanceId: 'i-0123456789abcdef0' }),
    call('ssm', 'CancelCommand', command),
  ];
  const lines = await decisions(reads);
  assert.deepEqual(denied(lines), []);
  assert.equal(lines.filter((l) => l.endsWith('-> Allowed')).length, 3, lines.join('\n'));
});

test('the simulation denies what the policy does not grant (it is not permissive)', async () => {
  // An instance the bench did not create (no Project tag), and a role outside lg-*.
  const terminate = call('ec2', 'TerminateInstances', { Action: 'TerminateInstances', 'InstanceId.1': 'i-0aaaaaaaaaaaaaaa0' });
  const role = call('iam', 'DeleteRole', { Action: 'DeleteRole', RoleName: 'admin' });
  const untaggedVpc = call('ec2', 'CreateVpc', { Action: 'CreateVpc' });
  assert.equal(denied(await decisions([terminate, role, untaggedVpc])).length, 3);
});

test('docs/aws.md shows the policy file itself, so the two never differ', () => {
  const docs = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'aws.md'), 'utf8');
  const policy = readFileSync(POLICY_FILE, 'utf8').trim();
  const indented = policy
    .split('\n')
    .map((line) => `   ${line}`)
    .join('\n');
  assert.ok(docs.includes(indented), 'docs/aws.md holds infra/iam/github-role-policy.json verbatim (indented by three spaces, inside the role step)');
});
