import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RUN_SETUP_SEC, TIMING_SEC, estimateCost, estimateDuration } from '../../src/aws/cost.ts';
import { accountNeeds, buildPlan, instanceVcpus, planJson, renderPlanText } from '../../src/aws/bench-plan.ts';
import { SEED_CEILING_PRESETS, resolveBench } from '../../src/aws/presets.ts';
import { AURORA_HOURLY_USD, EC2_HOURLY_USD, OPENSEARCH_HOURLY_USD, PRICES_AS_OF } from '../../src/aws/prices.ts';
import { awsGate } from './fixtures.ts';

test('duration: provisioning, both sides of every test and repeat with the build switch, teardown', () => {
  const gate = awsGate({}, { maxRepeats: 1 });
  const bench = resolveBench(gate.bench.aws, gate.tests);
  const estimate = estimateDuration(gate, bench, 'empty');
  assert.equal(estimate.provisionSec, TIMING_SEC.networkAndNodes + TIMING_SEC.auroraCreate);
  assert.deepEqual(
    estimate.runs.map((r) => `${r.test}/${r.side}/${r.repeat}/${r.seconds}`),
    ['bounded/baseline/0/6690', 'bounded/candidate/0/6690', 'unbounded/baseline/0/15690', 'unbounded/candidate/0/15690'],
  );
  // Each run: its test (90 min bounded, 4 h unbounded) and its set-up (21.5 min, RUN_SETUP_SEC).
  assert.equal(TIMING_SEC.runOverhead, 1290);
  assert.equal(estimate.totalSec, 1500 + 2 * (5400 + 1290) + 2 * (14400 + 1290) + 900);

  // The worst case covers every pair the sequential decision may add (maxRepeats, default 3).
  assert.equal(estimateDuration(awsGate(), bench, 'empty').runs.length, 12);
  const repeated = awsGate({ preset: '2XL.552' }, { repeats: 3 });
  const withSearch = resolveBench(repeated.bench.aws, repeated.tests);
  const fromSnapshot = estimateDuration(repeated, withSearch, 'snapshot');
  assert.equal(fromSnapshot.runs.length, 12);
  assert.equal(fromSnapshot.provisionSec, TIMING_SEC.networkAndNodes + Math.max(TIMING_SEC.auroraRestore, TIMING_SEC.openSearchCreate));
  assert.equal(fromSnapshot.teardownSec, TIMING_SEC.teardownOpenSearch);
  assert.equal(estimateDuration(gate, bench, 'dump').provisionSec, 1500 + TIMING_SEC.dumpLoad);
});

test("duration in duets: one slot per test and repeat runs both versions at once, with one run's set-up and a second restore", () => {
  const sequential = awsGate({}, { maxRepeats: 2 });
  const duet = { ...sequential, mode: 'duet' as const };
  const bench = resolveBench(sequential.bench.aws, sequential.tests);
  const estimate = estimateDuration(duet, bench, 'empty');
  assert.deepEqual(
    estimate.runs.map((r) => `${r.test}/${r.side}/${r.repeat}/${r.seconds}`),
    ['bounded/duet/0/6990', 'unbounded/duet/0/15990', 'bounded/duet/1/6990', 'unbounded/duet/1/15990'],
  );
  const both = estimateDuration(sequential, bench, 'empty');
  // The two slots' restores take turns under app0's dataset lock.
  assert.equal(
    estimate.testsSec,
    both.testsSec / 2 + estimate.runs.length * RUN_SETUP_SEC.restore,
    'half the run time of the same pairs run one side after the other, and a second restore per duet',
  );
  assert.equal(estimate.provisionSec, both.provisionSec);
  assert.equal(estimate.teardownSec, both.teardownSec);
});

test('cost: instance-hours times the dated price table, checked by hand for perfcomp', () => {
  const gate = awsGate();
  const bench = resolveBench(gate.bench.aws, gate.tests);
  const cost = estimateCost(bench, 12 * 3600);
  const line = (prefix: string) => cost.lines.find((l) => l.item.startsWith(prefix));
  assert.equal(line('app nodes')?.costUsd, 8.57); // 2 x 0.357 x 12
  assert.equal(line('load agents')?.costUsd, 23.56); // 11 x 0.1785 x 12
  assert.equal(line('proxy')?.costUsd, 2.14);
  assert.equal(line('metrics node')?.costUsd, 2.42); // 0.2016 x 12
  assert.equal(line('Aurora PostgreSQL db.r7g.2xlarge')?.costUsd, 26.5); // 2 x 1.104 x 12
  assert.equal(line('NAT gateway')?.costUsd, 0.54);
  assert.equal(line('public IPv4')?.quantity, 13); // 11 agents, metrics, NAT
  assert.equal(line('EBS')?.quantity, 2 * 20 + 11 * 20 + 20 + 200);
  assert.equal(cost.totalUsd, 65.14);
  assert.equal(cost.pricesAsOf, PRICES_AS_OF);
  assert.match(PRICES_AS_OF, /^\d{4}-\d{2}-\d{2}$/);
  assert.equal(cost.notes.length, 1, 'no region note in us-east-1');

  // OpenSearch bills started hours in full; Aurora has a 10-minute minimum.
  const search = resolveBench(awsGate({ preset: 'XL.222' }).bench.aws, gate.tests);
  const short = estimateCost(search, 30 * 60);
  assert.equal(short.lines.find((l) => l.item.startsWith('OpenSearch r6g'))?.hours, 1);
  assert.equal(estimateCost(search, 60).lines.find((l) => l.item.startsWith('Aurora'))?.hours, 10 / 60);
  assert.match(estimateCost({ ...bench, region: 'eu-west-1' }, 3600).notes.join(' '), /eu-west-1 may differ/);
});

test('every type a preset uses has a price', () => {
  const gate = awsGate();
  for (const name of ['perfcomp', ...SEED_CEILING_PRESETS]) {
    const bench = resolveBench(awsGate({ preset: name }).bench.aws, gate.tests);
    for (const type of [bench.appInstanceType, bench.agentInstanceType, bench.proxyInstanceType, bench.metricsInstanceType]) {
      assert.ok(EC2_HOURLY_USD[type], `${name}: ${type}`);
    }
    assert.ok(AURORA_HOURLY_USD[bench.dbInstanceType], `${name}: ${bench.dbInstanceType}`);
    if (bench.openSearchCount) assert.ok(OPENSEARCH_HOURLY_USD[bench.openSearchInstanceType]);
  }
});

test('the plan prints for every preset, with resources, duration and cost', (t) => {
  const totals: string[] = [];
  for (const name of ['perfcomp', ...SEED_CEILING_PRESETS]) {
    const gate = awsGate({ preset: name, maxCostUsd: 1000 });
    const plan = buildPlan(gate, { dbSource: name === 'perfcomp' ? 'dump' : 'snapshot' });
    const text = renderPlanText(plan);
    console.log(`\n${text}\n`);
    assert.match(text, new RegExp(`preset ${name.replace('.', '\\.')} in us-east-1`));
    assert.match(text, new RegExp(`app +${plan.bench.appCount} x ${plan.bench.appInstanceType.replace('.', '\\.')}`));
    assert.match(text, new RegExp(`db +${plan.bench.dbCount} x ${plan.bench.dbInstanceType.replace(/\./g, '\\.')}`));
    assert.equal(text.includes('opensearch'), plan.bench.openSearchCount > 0, `${name}: OpenSearch listed only when used`);
    assert.match(text, /total +\d+h/);
    assert.match(text, new RegExp(`as of ${PRICES_AS_OF}`));
    assert.match(text, /total +\$\d+\.\d\d/);
    // Lines are rounded to cents, the total is rounded once.
    assert.ok(Math.abs(plan.cost.lines.reduce((s, l) => s + l.costUsd, 0) - plan.cost.totalUsd) <= 0.005 * plan.cost.lines.length);
    totals.push(`${name} ${(plan.duration.totalSec / 3600).toFixed(2)} h $${plan.cost.totalUsd}`);
  }
  t.diagnostic(totals.join('; '));
  assert.equal(totals.length, 17);
});

test('a plan over budget is refused; the flag wins over the config', () => {
  const gate = awsGate({ maxCostUsd: 50 }, { maxRepeats: 1 });
  const refused = buildPlan(gate, { dbSource: 'empty' });
  assert.equal(refused.withinBudget, false);
  assert.equal(refused.maxCostSource, 'config');
  assert.match(
    renderPlanText(refused),
    /REFUSED: the worst case \$71\.11 \(every pair maxRepeats allows, unbounded tests at their maxDuration\) exceeds the max-cost of \$50\.00 \(bench\.aws\.maxCostUsd\)/,
  );
  const allowed = buildPlan(gate, { dbSource: 'empty', maxCostUsd: 100 });
  assert.equal(allowed.withinBudget, true);
  assert.equal(allowed.maxCostSource, 'flag');
  assert.match(renderPlanText(allowed), /the worst case \$71\.11 is within the max-cost of \$100\.00 \(--max-cost\)/);
  assert.equal(buildPlan(awsGate(), { dbSource: 'empty' }).withinBudget, true, 'no limit, no refusal');
});

test('the plan says what the account must allow: Standard on-demand vCPUs, Aurora instances and clusters, Elastic IPs', () => {
  assert.deepEqual(
    ['c7i.large', 'c7i.xlarge', 'c7i.2xlarge', 'm7i.8xlarge', 'm6in.8xlarge', 'c5.4xlarge', 'r6g.xlarge', 't3.medium', 'g5.xlarge'].map(instanceVcpus),
    [2, 4, 8, 32, 32, 16, 4, undefined, undefined],
  );
  const plan = buildPlan(awsGate(), { dbSource: 'snapshot' });
  const needs = Object.fromEntries(plan.accountNeeds.map((n) => [n.code, n.needed]));
  // perfcomp: 2 x c7i.2xlarge app, 11 x c7i.xlarge agents, a c7i.xlarge proxy, an m7i.xlarge metrics node.
  assert.deepEqual(needs, { 'L-1216C47A': 2 * 8 + 11 * 4 + 4 + 4, 'L-7B6409FD': 2, 'L-952B80B8': 1, 'L-0263D0A3': 1 });
  const text = renderPlanText(plan);
  assert.match(
    text,
    /^ {3}68 {2}Running On-Demand Standard \(A, C, D, H, I, M, R, T, Z\) instances \(vCPUs\) \[ec2 L-1216C47A\]: app 2 x c7i\.2xlarge = 16, agent 11 x c7i\.xlarge = 44, proxy 1 x c7i\.xlarge = 4, metrics 1 x m7i\.xlarge = 4$/m,
  );
  assert.match(text, /^ {4}2 {2}DB instances \[rds L-7B6409FD\]: Aurora PostgreSQL 2 x db\.r7g\.2xlarge$/m);
  assert.match(text, /^ {4}1 {2}EC2-VPC Elastic IPs \[ec2 L-0263D0A3\]/m);
  assert.deepEqual(planJson(plan).accountNeeds, plan.accountNeeds);
  // Every priced type is sized; a type the plan cannot size is named, not counted as 0 silently.
  assert.deepEqual(
    Object.keys(EC2_HOURLY_USD).filter((t) => instanceVcpus(t) === undefined),
    [],
  );
  const odd = accountNeeds({ ...plan.bench, agentInstanceType: 't3.medium' })[0]!;
  assert.equal(odd.needed, 16 + 4 + 4);
  assert.match(odd.detail, /vCPUs of t3\.medium not counted \(check their family's quota\)/);
});
