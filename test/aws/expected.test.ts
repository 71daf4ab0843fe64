import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadGateConfig } from '../../src/config/load.ts';
import { estimateDuration } from '../../src/aws/cost.ts';
import { expectedDuration } from '../../src/aws/expected.ts';
import { resolveBench } from '../../src/aws/presets.ts';

const EXAMPLE = new URL('../../examples/aws-mattermost-sequential.yml', import.meta.url).pathname;

test('the AWS example is expected to take about half of a typical 9-10 h gate, each run well inside a 6 h job', async () => {
  const config = await loadGateConfig(EXAMPLE);
  const upper = estimateDuration(config, resolveBench(config.bench.aws, config.tests), 'empty');
  const e = await expectedDuration(config, upper, { simulations: 2 });
  assert.ok(e.totalSec <= 5 * 3600, `expected ${(e.totalSec / 3600).toFixed(2)} h`);
  assert.ok(e.totalSec < upper.totalSec, 'below the upper bound');
  assert.ok(e.longestRunSec <= 6 * 3600 - upper.provisionSec - upper.teardownSec, `longest run ${e.longestRunSec} s`);
  const unbounded = e.runs.filter((r) => r.test === 'unbounded');
  assert.equal(unbounded.length, 2);
  assert.ok(unbounded[0]!.basis.endsWith('(cold)') && !unbounded[1]!.basis.endsWith('(cold)'), 'the baseline climbs cold, the candidate starts warm');
  assert.ok(unbounded[1]!.seconds <= unbounded[0]!.seconds);
});

test('runsPerSide scales the expected runs, fractions included', async () => {
  const config = await loadGateConfig(EXAMPLE);
  const upper = estimateDuration(config, resolveBench(config.bench.aws, config.tests), 'empty');
  const one = await expectedDuration(config, upper, { simulations: 2 });
  const twoAndHalf = await expectedDuration(config, upper, { simulations: 2, runsPerSide: 2.5 });
  assert.equal(twoAndHalf.runs.length, 3 * 2 * config.tests.length);
  assert.ok(twoAndHalf.testsSec > 2 * one.testsSec && twoAndHalf.testsSec < 2.6 * one.testsSec, `${twoAndHalf.testsSec} vs ${one.testsSec}`);
  await assert.rejects(expectedDuration(config, upper, { runsPerSide: 0 }), /runsPerSide must be >= 1/);
});
