import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PERFCOMP, SEED_CEILING_PRESETS, presetSize, resolveBench, usersNeeded } from '../../src/aws/presets.ts';
import { InputError } from '../../src/util/errors.ts';
import { buildPlan } from '../../src/aws/bench-plan.ts';
import { awsGate } from './fixtures.ts';

test('perfcomp is the release-comparison bench of the seed reports', () => {
  assert.deepEqual(presetSize('perfcomp'), {
    appInstanceType: 'c7i.2xlarge',
    appCount: 2,
    agentInstanceType: 'c7i.xlarge',
    agentCount: 11,
    proxyInstanceType: 'c7i.xlarge',
    metricsInstanceType: 'm7i.xlarge',
    dbInstanceType: 'db.r7g.2xlarge',
    dbCount: 2,
    openSearchCount: 0,
    openSearchInstanceType: 'r6g.xlarge.search',
  });
  assert.notEqual(presetSize('perfcomp'), PERFCOMP, 'callers get a copy');
});

test('ceiling-test names decode as in the seed report tables', () => {
  // Rows of the report: name, proxy, app, db, ES.
  const rows: Array<[string, string, string, string, 0 | 2]> = [
    ['L.110', 'm7i.4xlarge', '1 x c7i.large', '1 x db.r7g.large', 0],
    ['L.222', 'm7i.4xlarge', '2 x c7i.large', '2 x db.r7g.large', 2],
    ['XL.220', 'm7i.4xlarge', '2 x c7i.xlarge', '2 x db.r7g.xlarge', 0],
    ['2XL.552', 'm7i.4xlarge', '5 x c7i.2xlarge', '5 x db.r7g.2xlarge', 2],
    ['4XL.440', 'm6in.8xlarge', '4 x c7i.4xlarge', '4 x db.r7g.4xlarge', 0],
    ['4XL.662', 'm6in.8xlarge', '6 x c7i.4xlarge', '6 x db.r7g.4xlarge', 2],
  ];
  for (const [name, proxy, app, db, es] of rows) {
    const size = presetSize(name);
    assert.equal(size.proxyInstanceType, proxy, name);
    assert.equal(`${size.appCount} x ${size.appInstanceType}`, app, name);
    assert.equal(`${size.dbCount} x ${size.dbInstanceType}`, db, name);
    assert.equal(size.openSearchCount, es, name);
    assert.equal(size.agentInstanceType, 'c7i.xlarge');
    assert.equal(size.agentCount, 'auto');
  }
  for (const name of SEED_CEILING_PRESETS) assert.doesNotThrow(() => presetSize(name), name);
  assert.equal(SEED_CEILING_PRESETS.length, 16);
});

test('unknown preset names are refused with the list of valid ones', () => {
  for (const name of ['3XL.220', '2XL.221', '2XL.020', 'XL.22', 'perf', '']) {
    assert.throws(
      () => presetSize(name),
      (error: unknown) =>
        error instanceof InputError &&
        error.message.includes(`unknown preset "${name}"`) &&
        error.message.includes('"perfcomp"') &&
        error.message.includes('FAMILY.ABC') &&
        error.message.includes('2XL.552'),
      name,
    );
  }
});

test('explicit bench.aws fields override the preset and are reported', () => {
  const bench = resolveBench(awsGate({ preset: '2XL.220', appCount: 3, dbInstanceType: 'db.r7g.4xlarge', openSearchCount: 2 }).bench.aws, awsGate().tests);
  assert.equal(bench.appCount, 3);
  assert.equal(bench.appInstanceType, 'c7i.2xlarge');
  assert.equal(bench.dbInstanceType, 'db.r7g.4xlarge');
  assert.equal(bench.dbCount, 2);
  assert.equal(bench.openSearchCount, 2);
  assert.deepEqual(bench.overridden.sort(), ['appCount', 'dbInstanceType', 'openSearchCount']);
});

test('ceiling presets size the agents from the largest test; perfcomp keeps its 11', () => {
  const gate = awsGate({ preset: '4XL.662' });
  assert.equal(usersNeeded(gate.tests), 20000);
  const ceiling = resolveBench(gate.bench.aws, gate.tests);
  assert.equal(ceiling.agentCount, 10, '20000 users / 2000 per agent');
  const denser = resolveBench(awsGate({ preset: '4XL.662', usersPerAgent: 3000 }).bench.aws, gate.tests);
  assert.equal(denser.agentCount, 7, 'ceil(20000 / 3000)');
  assert.equal(resolveBench(awsGate().bench.aws, gate.tests).agentCount, 11);
});

test('a bench that cannot drive the tests or has no price is refused', () => {
  const gate = awsGate({ agentCount: 3 });
  assert.throws(
    () => resolveBench(gate.bench.aws, gate.tests),
    (error: unknown) =>
      error instanceof InputError && /3 agents x 2000 users = 6000, fewer than the 20000 users/.test(error.message) && /remove agentCount/.test(error.message),
  );
  assert.throws(
    () => resolveBench(awsGate({ appInstanceType: 'c9z.huge' }).bench.aws, gate.tests),
    (error: unknown) => error instanceof InputError && /bench\.aws\.appInstanceType: no price for "c9z\.huge"/.test(error.message),
  );
  assert.throws(
    () => resolveBench(awsGate({ dbInstanceType: 'r7g.large' }).bench.aws, gate.tests),
    (error: unknown) => error instanceof InputError && /not a database instance class/.test(error.message),
  );
  assert.throws(
    () => resolveBench(awsGate({ proxyInstanceType: 'db.r7g.large' }).bench.aws, gate.tests),
    (error: unknown) => error instanceof InputError && /not an EC2 instance type/.test(error.message),
  );
});

test('a single app node has no proxy (the seed ran L.110 without one), and none is billed', () => {
  const single = resolveBench(awsGate({ preset: 'L.110' }).bench.aws, awsGate().tests);
  assert.equal(single.proxyCount, 0);
  const plan = buildPlan(awsGate({ preset: 'L.110' }), { dbSource: 'snapshot' });
  assert.ok(!plan.resources.some((r) => r.role === 'proxy'), 'no proxy resource');
  assert.ok(!plan.cost.lines.some((l) => l.item.startsWith('proxy')), 'no proxy cost');
  const cluster = resolveBench(awsGate({ preset: 'L.220' }).bench.aws, awsGate().tests);
  assert.equal(cluster.proxyCount, 1);
  // perfcomp with one app node drops its proxy too.
  assert.equal(resolveBench(awsGate({ appCount: 1 }).bench.aws, awsGate().tests).proxyCount, 0);
});

test('the metrics node type can be overridden and must have a price', () => {
  const bench = resolveBench(awsGate({ metricsInstanceType: 'm7i.2xlarge' }).bench.aws, awsGate().tests);
  assert.equal(bench.metricsInstanceType, 'm7i.2xlarge');
  assert.deepEqual(bench.overridden, ['metricsInstanceType']);
  assert.throws(
    () => resolveBench(awsGate({ metricsInstanceType: 'q9.huge' }).bench.aws, awsGate().tests),
    /bench\.aws\.metricsInstanceType: no price for "q9\.huge"/,
  );
});

test('a duet gives each side its own agent group able to drive the largest test', () => {
  const gate = awsGate();
  // perfcomp's 11 agents drive 20000 users in sequence; in a duet each side needs 10.
  assert.equal(resolveBench(gate.bench.aws, gate.tests, 'duet').agentCount, 20);
  const perSide = awsGate({}, { tests: [{ type: 'bounded', users: 3750, rampUp: '15m', duration: '90m' }] });
  assert.equal(resolveBench(perSide.bench.aws, perSide.tests, 'duet').agentCount, 12, "the preset's 11 raised to two equal groups");
  assert.equal(resolveBench(awsGate({ preset: '4XL.662' }).bench.aws, gate.tests, 'duet').agentCount, 20, 'auto: two groups of ceil(20000 / 2000)');
  // An explicit count is taken as given, and refused when a group cannot drive the test.
  assert.throws(
    () => resolveBench(awsGate({ agentCount: 12 }).bench.aws, gate.tests, 'duet'),
    /6 agents per side x 2000 users = 12000, fewer than the 20000 users the largest test needs on each side/,
  );
});
