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
    ...INSTANCES.map((id): [string, Record<string, string>] => [`arn:aws:ec2:us-east-1:123456789012:instance/${id}`, { Project: 'loadgate', Bench: 'lg-1-1', ExpiresAt: PLANNED }]),
  ]);
  const calls: string[][] = [];
  const failTags = { on: false };
  const runner: CommandRunner = {
    async run(_command, args) {
      calls.push([...args]);
      if (args[0] === 'ec2' && args[1] === 'create-tags') {
        if (failTags.on) return { code: 254, stdout: '', stderr: 'An error occurred (UnauthorizedOperation) when calling the CreateTags operation: You are not authorized to perform this operation.' };
        const value = /Value=(.+)$/.exec(args.at(-1) ?? '')?.[1] ?? '';
        for (const id of args.slice(args.indexOf('--resources') + 1, args.indexOf('--tags'))) tags.get(`arn:aws:ec2:us-east-1:123456789012:instance/${id}`)!.ExpiresAt = value;
        return { code: 0, stdout: '', stderr: '' };
      }
      const list = [...tags].map(([arn, t]) => ({ ResourceARN: arn, Tags: Object.entries(t).map(([Key, Value]) => ({ Key, Value })) }));
      return { code: 0, stdout: JSON.stringify({ ResourceTagMappingList: list }), stderr: '' };
    },
  };
  return { runner, calls, failTags };
}

test('a run job moves the instances\' ExpiresAt past what it still needs, only ever later, and the janitor keeps the bench', async () => {
  const { runner, calls } = account();
  let now = Date.parse('2026-11-27T11:30:00Z');
  const warnings: string[] = [];
  const expiry = new BenchExpiry({ aws: runner, region: 'us-east-1', instanceIds: INSTANCES, now: () => now, warn: (w) => warnings.push(w) });
  // A 3-hour run still to come at 11:30: past the planned 12:00 by its run, the teardown and the hour of margin.
  const moved = await expiry.extend(3 * 3600);
  assert.equal(moved, new Date(Math.ceil((now + (3 * 3600 + TIMING_SEC.teardownOpenSearch + EXPIRY_MARGIN_SEC) * 1000) / 60_000) * 60_000).toISOString().replace('.000Z', 'Z'));
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

test('a refused tag change is a warning naming the janitor\'s risk, not a failure', async () => {
  const { runner, failTags } = account();
  failTags.on = true;
  const warnings: string[] = [];
  const expiry = new BenchExpiry({ aws: runner, region: 'us-east-1', instanceIds: INSTANCES, warn: (w) => warnings.push(w) });
  assert.equal(await expiry.extend(3600), undefined);
  assert.match(warnings[0] ?? '', /could not move the bench's ExpiresAt tag to .* \(the janitor may destroy the bench at the plan's expiry\): An error occurred \(UnauthorizedOperation\)/);
});
