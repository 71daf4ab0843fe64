import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BenchExpiry, EXPIRY_MARGIN_SEC } from '../../src/bench/aws/expiry.ts';
import { TIMING_SEC } from '../../src/aws/cost.ts';
import { isExpired, listBenches } from '../../src/aws/janitor.ts';
import type { CommandRunner } from '../../src/util/command-runner.ts';

/**
 * The bench's ExpiresAt follows what its jobs still need: the janitor destroys on the tag
 * alone, reading the latest value over the bench's resources (Resource Groups Tagging API
 * get-resources), so a run job that tags its instances later keeps a slow bench alive.
 */

const INSTANCES = ['i-0aaaaaaaaaaaaaaa1', 'i-0bbbbbbbbbbbbbbb1'];
const PLANNED = '2026-11-27T12:00:00Z';

/** The bench's resources and their tags, as get-resources lists them; create-tags writes here. */
function account(): { runner: CommandRunner; calls: string[][]; failTags: { on: boolean } } {
  const tags = new Map<string, Record<string, string>>([
    ['arn:aws:ec2:us-east-1:123456789012:vpc/vpc-0a18f1a4cdf62d256', { Project: 'loadgate', Bench: 'lg-1-1', ExpiresAt: PLANNED }],
    ...INSTANCES.map((id): [string, Record<string, string>] => [
      `arn:aws:ec2:us-east-1:123456789012:instance/${id}`,
      { Project: 'loadgate', Bench: 'lg-1-1', ExpiresAt: PLANNED },
    ]),
  ]);
  const calls: string[][] = [];
  const failTags = { on: false };
  const runner: CommandRunner = {
    async run(_command, args) {
      calls.push([...args]);
      if (args[0] === 'ec2' && args[1] === 'create-tags') {
        if (failTags.on)
          return {
            code: 254,
            stdout: '',
            stderr: 'An error occurred (UnauthorizedOperation) when calling the CreateTags operation: You are not authorized to perform this operation.',
          };
        const value = /Value=(.+)$/.exec(args.at(-1) ?? '')?.[1] ?? '';
        for (const id of args.slice(args.indexOf('--resources') + 1, args.indexOf('--tags')))
          tags.get(`arn:aws:ec2:us-east-1:123456789012:instance/${id}`)!.ExpiresAt = value;
        return { code: 0, stdout: '', stderr: '' };
      }
      const list = [...tags].map(([arn, t]) => ({ ResourceARN: arn, Tags: Object.entries(t).map(([Key, Value]) => ({ Key, Value })) }));
      return { code: 0, stdout: JSON.stringify({ ResourceTagMappingList: list }), stderr: '' };
    },
  };
  return { runner, calls, failTags };
}

test("a run job moves the instances' ExpiresAt past what it still needs, only ever later, and the janitor keeps the bench", async () => {
  const { runner, calls } = account();
  let now = Date.parse('2026-11-27T11:30:00Z');
  const warnings: string[] = [];
  const expiry = new BenchExpiry({ aws: runner, region: 'us-east-1', instanceIds: INSTANCES, now: () => now, warn: (w) => warnings.push(w) });
  // A 3-hour run still to come at 11:30: past the planned 12:00 by its run, the teardown and the hour of margin.
  const moved = await expiry.extend(3 * 3600);
  assert.equal(
    moved,
    new Date(Math.ceil((now + (3 * 3600 + TIMING_SEC.teardownOpenSearch + EXPIRY_MARGIN_SEC) * 1000) / 60_000) * 60_000).toISOString().replace('.000Z', 'Z'),
  );
  assert.deepEqual(calls.at(-1), ['ec2', 'create-tags', '--region', 'us-east-1', '--resources', ...INSTANCES, '--tags', `Key=ExpiresAt,Value=${moved}`]);
  const [bench] = await listBenches(runner, 'us-east-1');
  assert.equal(bench?.expiresAt?.toISOString().replace('.000Z', 'Z'), moved, 'the janitor reads the latest tag');
  // At the planned expiry the janitor would have destroyed it; now it keeps it.
  assert.equal(isExpired(bench!, new Date('2026-11-27T12:30:00Z')), false);
  // A shorter need later never moves it back, nor asks AWS again.
  const asked = calls.length;
  now += 60_000;
  assert.equal(await expiry.extend(600), undefined);
  assert.equal(calls.length, asked);
  assert.deepEqual(warnings, []);
});

test("a refused tag change is a warning naming the janitor's risk, not a failure", async () => {
  const { runner, failTags } = account();
  failTags.on = true;
  const warnings: string[] = [];
  const expiry = new BenchExpiry({ aws: runner, region: 'us-east-1', instanceIds: INSTANCES, warn: (w) => warnings.push(w) });
  assert.equal(await expiry.extend(3600), undefined);
  assert.match(
    warnings[0] ?? '',
    /could not move the bench's ExpiresAt tag to .* \(the janitor may destroy the bench at the plan's expiry\): An error occurred \(UnauthorizedOperation\)/,
  );
});

/**
 * The bench's database expiry schedules (infra/aws/modules/expiry) as EventBridge Scheduler
 * keeps them, answered in the AWS CLI's JSON: list-schedules (names), get-schedule (the
 * schedule with its ARN and dates), update-schedule (--cli-input-json replaces the whole
 * schedule, as UpdateSchedule does, and is refused when a required field is missing).
 */
function scheduler(group = 'lg-1-1'): { runner: CommandRunner; schedules: Map<string, Record<string, unknown>>; refuseUpdates: { on: boolean } } {
  const target = (action: string, input: object) => ({
    Arn: `arn:aws:scheduler:::aws-sdk:rds:${action}`,
    RoleArn: `arn:aws:iam::123456789012:role/${group}-expiry`,
    Input: JSON.stringify(input),
    RetryPolicy: { MaximumEventAgeInSeconds: 86400, MaximumRetryAttempts: 185 },
  });
  const schedule = (name: string, at: string, action: string, input: object): [string, Record<string, unknown>] => [
    name,
    {
      Arn: `arn:aws:scheduler:us-east-1:123456789012:schedule/${group}/${name}`,
      Name: name,
      GroupName: group,
      ScheduleExpression: `at(${at})`,
      ScheduleExpressionTimezone: 'UTC',
      State: 'ENABLED',
      ActionAfterCompletion: 'NONE',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: target(action, input),
      CreationDate: '2026-11-27T09:00:00+00:00',
      LastModificationDate: '2026-11-27T09:00:00+00:00',
    },
  ];
  const schedules = new Map([
    schedule('db-instance-0', '2026-11-27T12:00:00', 'deleteDBInstance', { DBInstanceIdentifier: `${group}-0` }),
    schedule('db-cluster', '2026-11-27T12:30:00', 'deleteDBCluster', { DBClusterIdentifier: group, SkipFinalSnapshot: true }),
    schedule('db-cluster-again', '2026-11-27T14:00:00', 'deleteDBCluster', { DBClusterIdentifier: group, SkipFinalSnapshot: true }),
  ]);
  const refuseUpdates = { on: false };
  const option = (args: readonly string[], name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const runner: CommandRunner = {
    async run(_command, args) {
      const [service, operation] = args;
      if (service === 'ec2' && operation === 'create-tags') return { code: 0, stdout: '', stderr: '' };
      if (service !== 'scheduler') return { code: 255, stdout: '', stderr: 'not stood in' };
      if (option(args, '--group-name') !== undefined && option(args, '--group-name') !== group) {
        return {
          code: 254,
          stdout: '',
          stderr: `An error occurred (ResourceNotFoundException) when calling the ${operation} operation: Schedule group ${option(args, '--group-name')} does not exist.`,
        };
      }
      if (operation === 'list-schedules')
        return {
          code: 0,
          stdout: JSON.stringify({ Schedules: [...schedules.keys()].map((Name) => ({ Name, GroupName: group, State: 'ENABLED' })) }),
          stderr: '',
        };
      if (operation === 'get-schedule') return { code: 0, stdout: JSON.stringify(schedules.get(option(args, '--name') ?? '')), stderr: '' };
      if (operation === 'update-schedule') {
        if (refuseUpdates.on)
          return {
            code: 254,
            stdout: '',
            stderr: 'An error occurred (AccessDeniedException) when calling the UpdateSchedule operation: not authorized to perform: iam:PassRole',
          };
        const input = JSON.parse(option(args, '--cli-input-json') ?? '{}') as Record<string, unknown>;
        const missing = ['Name', 'ScheduleExpression', 'FlexibleTimeWindow', 'Target'].filter((k) => !(k in input));
        if (missing.length || 'Arn' in input || 'CreationDate' in input)
          return { code: 252, stdout: '', stderr: `Parameter validation failed: ${missing.join(', ')} missing, or unknown parameter` };
        const previous = schedules.get(String(input.Name))!;
        schedules.set(String(input.Name), { Arn: previous.Arn, CreationDate: previous.CreationDate, ...input });
        return { code: 0, stdout: JSON.stringify({ ScheduleArn: previous.Arn }), stderr: '' };
      }
      return { code: 255, stdout: '', stderr: 'not stood in' };
    },
  };
  return { runner, schedules, refuseUpdates };
}

const expressions = (schedules: Map<string, Record<string, unknown>>): Record<string, unknown> =>
  Object.fromEntries([...schedules].map(([name, s]) => [name, s.ScheduleExpression]));

test('a later ExpiresAt moves the database expiry schedules by as much, keeping the cluster after its instances', async () => {
  const { runner, schedules } = scheduler();
  const before = structuredClone(schedules.get('db-cluster'));
  let now = Date.parse('2026-11-27T11:30:00Z');
  const warnings: string[] = [];
  const expiry = new BenchExpiry({
    aws: runner,
    region: 'us-east-1',
    instanceIds: INSTANCES,
    scheduleGroup: 'lg-1-1',
    now: () => now,
    warn: (w) => warnings.push(w),
  });
  const moved = await expiry.extend(3 * 3600);
  assert.ok(moved);
  const shiftMs = Date.parse(moved) - Date.parse('2026-11-27T12:00:00Z');
  const at = (iso: string): string => `at(${new Date(Date.parse(iso) + shiftMs).toISOString().slice(0, 19)})`;
  assert.deepEqual(expressions(schedules), {
    'db-instance-0': `at(${moved.slice(0, 19)})`,
    'db-cluster': at('2026-11-27T12:30:00Z'),
    'db-cluster-again': at('2026-11-27T14:00:00Z'),
  });
  // Everything else of the schedule is written back as it was: target, role, retries, time zone.
  const { LastModificationDate: _, ...unchanged } = before ?? {};
  assert.deepEqual({ ...schedules.get('db-cluster'), ScheduleExpression: before?.ScheduleExpression }, unchanged);
  // A shorter need later moves nothing back.
  now += 60_000;
  await expiry.extend(600);
  assert.equal(schedules.get('db-instance-0')?.ScheduleExpression, `at(${moved.slice(0, 19)})`);
  assert.deepEqual(warnings, []);
});

test("an earlier need than the schedules' leaves them, and a bench without an expiry group is no warning", async () => {
  const { runner, schedules } = scheduler();
  const original = expressions(schedules);
  const warnings: string[] = [];
  // At 08:00 a 30-minute need ends well before the planned 12:00: the tag moves (as before), the schedules stay.
  const early = new BenchExpiry({
    aws: runner,
    region: 'us-east-1',
    instanceIds: INSTANCES,
    scheduleGroup: 'lg-1-1',
    now: () => Date.parse('2026-11-27T08:00:00Z'),
    warn: (w) => warnings.push(w),
  });
  assert.ok(await early.extend(1800));
  assert.deepEqual(expressions(schedules), original);
  const older = new BenchExpiry({ aws: runner, region: 'us-east-1', instanceIds: INSTANCES, scheduleGroup: 'lg-0-1', warn: (w) => warnings.push(w) });
  assert.ok(await older.extend(3 * 3600));
  assert.deepEqual(warnings, []);
});

test('a refused schedule move is a warning naming the risk to the database, not a failure', async () => {
  const { runner, refuseUpdates } = scheduler();
  refuseUpdates.on = true;
  const warnings: string[] = [];
  const expiry = new BenchExpiry({ aws: runner, region: 'us-east-1', instanceIds: INSTANCES, scheduleGroup: 'lg-1-1', warn: (w) => warnings.push(w) });
  assert.ok(await expiry.extend(3 * 3600), 'the tag still moved');
  assert.match(
    warnings.join('\n'),
    /could not move the bench's database expiry schedules to .* \(EventBridge Scheduler may delete the database at the plan's expiry\): aws scheduler update-schedule: An error occurred \(AccessDeniedException\)/,
  );
});
