import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadGateConfig, parseGateConfig } from '../../src/config/load.ts';
import { buildPlan } from '../../src/aws/bench-plan.ts';
import { fitJobSummary, STEP_SUMMARY_LIMIT } from '../../src/github/outputs.ts';
import { planGate, planMarkdown } from '../../src/github/check-run-plan.ts';
import { publishStart } from '../../src/github/publish.ts';
import { GitHubStandin, startStandin } from '../support/github-standin/server.ts';
import { contextFor } from './fixtures.ts';

let warm: GitHubStandin;
before(async () => {
  warm = await startStandin();
});
after(() => warm.close());

test('the AWS plan in the check run: resources, cost with the price date, duration, budget', async () => {
  const config = await loadGateConfig('examples/aws-mattermost.yml');
  const plan = planGate(config, { baseline: 'v10.12.0', candidate: 'v11.0.1-rc2', tests: [], repeats: 1, bench: 'aws', maxCost: 10 });
  const aws = buildPlan(config, {
    dbSource: config.bench.aws.database?.snapshotIdentifier ? 'snapshot' : config.bench.aws.database?.dumpUrl ? 'dump' : 'empty',
    maxCostUsd: 10,
  });
  assert.ok(plan.aws && !('error' in plan.aws));
  assert.equal(plan.estimatedSeconds, aws.duration.totalSec, "the duration is the AWS plan's");
  const md = planMarkdown(plan);
  assert.match(md, /### AWS bench: preset perfcomp in us-east-1/);
  assert.match(md, /\| app \| 2 \| c7i\.2xlarge \| aws_instance \|/);
  assert.match(
    md,
    new RegExp(
      `Worst-case cost: \\*\\*\\$${aws.cost.totalUsd.toFixed(2)}\\*\\*, every pair maxRepeats allows \\(on-demand us-east-1 prices as of ${aws.cost.pricesAsOf}\\)`,
    ),
  );
  assert.match(md, /worst case over the max-cost of \$10\.00 \(max-cost caps the worst case\): provisioning will refuse it/);
  assert.match(md, /Estimated duration: up to .*provisioning, both sides of every run/);
  assert.match(md, /<details><summary>Full plan/);
});

test('the AWS plan follows the tests and repeats chosen for this gate', async () => {
  const config = await loadGateConfig('examples/aws-mattermost.yml');
  const one = planGate(config, { baseline: 'v10.12.0', candidate: 'v11.0.1-rc2', tests: [config.tests[0]?.name as string], repeats: 1, bench: 'aws' });
  const five = planGate(config, { baseline: 'v10.12.0', candidate: 'v11.0.1-rc2', tests: [config.tests[0]?.name as string], repeats: 5, bench: 'aws' });
  assert.ok(five.estimatedSeconds > one.estimatedSeconds, '5 pairs exceed the maxRepeats of 3 in the config');
  assert.match(planMarkdown(one), /no max-cost set|within the max-cost/);
});

test('a plan that cannot be built is said in the check run instead of stopping the gate', () => {
  const config = parseGateConfig(
    {
      version: 1,
      name: 'g',
      target: { system: 'mattermost' },
      bench: { kind: 'aws', aws: { appInstanceType: 'x9.unpriced' } },
      tests: [{ type: 'bounded', users: 100, rampUp: '1m', duration: '5m' }],
    },
    'inline',
  );
  const plan = planGate(config, { baseline: 'v1.0.0', candidate: 'v1.1.0-rc1', tests: [], repeats: 1, bench: 'aws' });
  assert.ok(plan.aws && 'error' in plan.aws);
  assert.match(planMarkdown(plan), /\*\*AWS plan unavailable:\*\*/);
});

test("publish start posts the AWS plan on the check run, within GitHub's limits", async (t) => {
  const s = await new GitHubStandin({ tags: ['v10.12.0'] }).start();
  t.after(() => s.close());
  s.addTag('v11.0.1-rc2', s.commitOnDefaultBranch('rc2'));
  const config = await loadGateConfig('examples/aws-mattermost.yml');
  const plan = planGate(config, { baseline: 'v10.12.0', candidate: 'v11.0.1-rc2', tests: [], repeats: 1, bench: 'aws' });
  await publishStart(contextFor(s), { checkName: 'loadgate', candidate: 'v11.0.1-rc2', plan });
  assert.match(s.checkRuns[0]?.output.summary ?? '', /Worst-case cost: \*\*\$[0-9.]+\*\*, every pair maxRepeats allows \(on-demand us-east-1 prices as of /);
  assert.deepEqual(s.rejected, []);
});

test('the job summary is cut to 1 MiB in bytes, never mid-character', () => {
  const small = '## ok';
  assert.equal(fitJobSummary(small), small);
  const big = 'é'.repeat(STEP_SUMMARY_LIMIT); // 2 bytes each: 2 MiB
  const cut = fitJobSummary(big);
  assert.ok(Buffer.byteLength(cut) + 1 <= STEP_SUMMARY_LIMIT, `${Buffer.byteLength(cut)} bytes`);
  assert.ok(cut.length < STEP_SUMMARY_LIMIT, 'fewer characters than the byte limit: it counts bytes');
  assert.match(cut, /cut to fit the 1 MiB job summary limit/);
  assert.ok(!cut.includes('\uFFFD'));
});
