import { test } from 'node:test';
import assert from 'node:assert/strict';
import { unboundedTestSchema } from '../../../src/config/schema.ts';
import { runUnbounded } from '../../../src/coordinator/unbounded.ts';
import { overThreshold } from '../../../src/engine/loadtest-ng/alert.ts';
import { FakeClock, FakeHealth, FakeUsers } from '../../coordinator/fakes.ts';

/** Finding 7: load-test-ng alerts at value >= threshold; loadgate only alerted above it. */

test('a value at the threshold alerts, as in load-test-ng; no data never does', () => {
  assert.equal(overThreshold(0.1, 0.1), true);
  assert.equal(overThreshold(0.0999, 0.1), false);
  assert.equal(overThreshold(Number.POSITIVE_INFINITY, 2), true);
  assert.equal(overThreshold(null, 0), false);
  assert.equal(overThreshold(Number.NaN, 0), false);
});

test('the coordinator backs off when a query sits exactly at its threshold', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  const QUERY = 'errors_pct';
  // Exactly the ceiling-test error threshold once 40 users run, below it before.
  const health = new FakeHealth(clock, { [QUERY]: () => (users.active >= 40 ? 0.025 : 0.01) });
  const spec = unboundedTestSchema.parse({
    type: 'unbounded',
    maxUsers: 200,
    usersIncrement: 8,
    usersDecrement: 8,
    restTime: '2s',
    stabilityWindow: '20s',
    equilibriumSlope: 5,
    maxDuration: '2m',
    health: [{ name: 'HTTP 5xx server errors (%)', query: QUERY, threshold: 0.025 }],
  });
  const result = await runUnbounded({ test: spec, users, health, clock, settleSec: 0 });
  assert.ok(Math.max(...users.requested) <= 48, `never grows past the threshold: ${Math.max(...users.requested)}`);
  assert.ok(
    result.timeline.some((p) => !p.healthy && p.values['HTTP 5xx server errors (%)'] === 0.025),
    'the value at the threshold was unhealthy',
  );
});
