import { test } from 'node:test';
import assert from 'node:assert/strict';
import { unboundedTestSchema, type UnboundedTest } from '../../src/config/schema.ts';
import { runUnbounded, type UnboundedProgress } from '../../src/coordinator/unbounded.ts';
import { InputError } from '../../src/util/errors.ts';
import { FakeClock, FakeHealth, FakeUsers } from './fakes.ts';

const LATENCY = 'sum(rate(loadtest_http_request_time_sum[1m]))/sum(rate(loadtest_http_request_time_count[1m]))';
const ERRORS = 'errors_pct';

function unboundedTest(overrides: Record<string, unknown> = {}): UnboundedTest {
  return unboundedTestSchema.parse({
    type: 'unbounded',
    maxUsers: 1000,
    usersIncrement: 8,
    usersDecrement: 8,
    restTime: '2s',
    stabilityWindow: '60s',
    equilibriumSlope: 5,
    maxDuration: '30m',
    health: [{ name: 'Average client request duration (s)', query: LATENCY, threshold: 0.1 }],
    ...overrides,
  });
}

/** A system whose average latency crosses 0.1 s above `capacity` users. */
function latencyOf(users: FakeUsers, capacity: () => number): () => number {
  return () => (users.active <= capacity() ? 0.05 : 0.05 + (users.active - capacity()) * 0.02);
}

test('adds usersIncrement users every rest period while healthy', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  const health = new FakeHealth(clock, { [LATENCY]: latencyOf(users, () => 100) });
  const result = await runUnbounded({ test: unboundedTest(), users, health, clock });
  // 0 -> 8 -> 16 ... while healthy; the first 12 steps are all growth.
  assert.deepEqual(users.requested.slice(0, 12), [8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96]);
  assert.deepEqual(
    result.timeline.slice(0, 3).map((p) => p.tSec),
    [0, 2, 4],
    'one step every restTime',
  );
  assert.ok(result.timeline.slice(0, 12).every((p) => p.healthy));
});

test('starts at initialUsers and climbs from there, converging on the same ceiling', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  const health = new FakeHealth(clock, { [LATENCY]: latencyOf(users, () => 100) });
  const result = await runUnbounded({ test: unboundedTest({ initialUsers: 40 }), users, health, clock, settleSec: 0 });
  assert.deepEqual(users.requested.slice(0, 4), [40, 48, 56, 64], 'the initial users first, then one increment per step');
  assert.equal(result.timeline[0]!.users, 48);
  assert.ok(result.converged, result.reason);
  assert.ok(Math.abs(result.supportedUsers - 100) <= 8, `supported ${result.supportedUsers}`);
});

test('initialUsers above maxUsers is refused with its path', () => {
  const parsed = unboundedTestSchema.safeParse({ ...unboundedTest(), maxUsers: 10, initialUsers: 20 });
  assert.equal(parsed.success, false);
  assert.deepEqual(
    parsed.error?.issues.map((i) => [i.path.join('.'), i.message]),
    [['initialUsers', 'must not exceed maxUsers']],
  );
});

test('removes usersDecrement users while a query is over its threshold', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  const health = new FakeHealth(clock, { [LATENCY]: latencyOf(users, () => 100) });
  const result = await runUnbounded({ test: unboundedTest({ usersDecrement: 4 }), users, health, clock, settleSec: 0 });
  const firstUnhealthy = result.timeline.findIndex((p) => !p.healthy);
  assert.ok(firstUnhealthy > 0, 'becomes unhealthy once above capacity');
  const before = result.timeline[firstUnhealthy - 1]!.users;
  assert.equal(before, 104, 'the step that went over capacity');
  assert.equal(result.timeline[firstUnhealthy]!.users, 100, 'backs off by usersDecrement');
  assert.ok((result.timeline[firstUnhealthy]!.values['Average client request duration (s)'] ?? 0) > 0.1);
});

test('converges to the known plateau and reports the mean over the stability window', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  const health = new FakeHealth(clock, { [LATENCY]: latencyOf(users, () => 200) });
  const spec = unboundedTest({ equilibriumSlope: 1 });
  const result = await runUnbounded({ test: spec, users, health, clock });
  assert.equal(result.converged, true, result.reason);
  assert.equal(result.stopCause, 'equilibrium');
  // Oscillates 200 <-> 208: the mean of the window is between the two.
  assert.ok(result.supportedUsers >= 200 && result.supportedUsers <= 208, `supported ${result.supportedUsers}`);
  assert.equal(result.window.endSec - result.window.startSec, 60);
  assert.ok(Math.abs(result.slopePerMinute) <= 0.01 * result.supportedUsers);
  // It needed 48 s to climb to 200 users plus one full window of oscillation.
  assert.ok(result.durationSec >= 48 + 60 && result.durationSec < 300, `took ${result.durationSec} s`);
  assert.match(result.reason, /equilibrium/);
});

test('follows a ceiling that moves, and converges only once it stops moving', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  // Capacity 100 until 60 s, then 300: the first plateau lasts less than a window, so
  // only the second one may be reported.
  const capacity = (): number => (clock.elapsedSec() < 60 ? 100 : 300);
  const health = new FakeHealth(clock, { [LATENCY]: latencyOf(users, capacity) });
  const result = await runUnbounded({ test: unboundedTest({ equilibriumSlope: 1 }), users, health, clock, settleSec: 0 });
  assert.equal(result.converged, true, result.reason);
  assert.ok(result.supportedUsers >= 296 && result.supportedUsers <= 304, `supported ${result.supportedUsers}`);
  assert.ok(result.window.startSec > 60);
  assert.ok(
    result.timeline.some((p) => p.tSec < 60 && !p.healthy),
    'it did hit the first ceiling',
  );
  // Every timeline point follows the rule: +8 when healthy, -8 when not.
  for (let i = 1; i < result.timeline.length; i++) {
    const prev = result.timeline[i - 1]!;
    const cur = result.timeline[i]!;
    assert.equal(cur.users - prev.users, cur.healthy ? 8 : -8, `step ${i}`);
  }
});

test('evaluates a query no more often than its minInterval and reuses the last value in between', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  let errorValue = 0;
  const health = new FakeHealth(clock, {
    [LATENCY]: latencyOf(users, () => 50),
    [ERRORS]: () => errorValue++, // grows with every evaluation: 0, 1, 2, ...
  });
  const spec = unboundedTest({
    maxDuration: '2m',
    health: [
      { name: 'latency', query: LATENCY, threshold: 0.1 },
      { name: 'errors', query: ERRORS, threshold: 1000, minInterval: '10s' },
    ],
  });
  const result = await runUnbounded({ test: spec, users, health, clock });
  const errorCalls = health.callsOf(ERRORS);
  const latencyCalls = health.callsOf(LATENCY);
  assert.ok(latencyCalls.length > errorCalls.length * 4, 'the latency query runs every step');
  for (let i = 1; i < errorCalls.length; i++) {
    assert.ok(errorCalls[i]! - errorCalls[i - 1]! >= 10, `evaluations ${errorCalls[i - 1]} and ${errorCalls[i]} are < 10 s apart`);
  }
  // Between evaluations the timeline carries the previous value.
  const points = result.timeline.filter((p) => p.tSec > 0 && p.tSec < 10);
  assert.ok(points.length >= 4);
  assert.ok(
    points.every((p) => p.values.errors === 0),
    'value from t=0 reused until t=10 s',
  );
  assert.equal(result.timeline.find((p) => p.tSec === 10)?.values.errors, 1);
});

test('a query without data at the start does not block growth; data arriving later is used', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  // No data for the first 20 s (like rate()[1m] before two scrapes), then a real value.
  const health = new FakeHealth(clock, {
    [LATENCY]: () => (clock.elapsedSec() < 20 ? null : latencyOf(users, () => 80)()),
  });
  const result = await runUnbounded({ test: unboundedTest({ equilibriumSlope: 1 }), users, health, clock });
  assert.equal(result.converged, true, result.reason);
  assert.deepEqual(users.requested.slice(0, 5), [8, 16, 24, 32, 40]);
  assert.equal(result.timeline[0]!.values['Average client request duration (s)'], null);
  assert.ok(result.supportedUsers >= 80 && result.supportedUsers <= 88);
});

test('stops with converged false and names the query when Prometheus never has data', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  const health = new FakeHealth(clock, { [LATENCY]: () => null, [ERRORS]: () => 0 });
  const spec = unboundedTest({
    health: [
      { name: 'Average client request duration (s)', query: LATENCY, threshold: 0.1 },
      { name: 'errors', query: ERRORS, threshold: 1 },
    ],
  });
  const result = await runUnbounded({ test: spec, users, health, clock, noDataLimit: 10 });
  assert.equal(result.converged, false);
  assert.equal(result.stopCause, 'no-data');
  assert.match(result.reason, /Prometheus has no data for "Average client request duration \(s\)"/);
  assert.match(result.reason, /after 10 evaluations/);
  assert.equal(health.callsOf(LATENCY).length, 10);
  assert.ok(result.durationSec < 30);
});

test('NaN (0/0 before any request) counts as no data, and a throwing query is reported with its error', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  let calls = 0;
  const health = {
    async query(): Promise<number | null> {
      calls++;
      if (calls <= 3) return Number.NaN;
      throw new Error('connect ECONNREFUSED 127.0.0.1:9090');
    },
  };
  const result = await runUnbounded({ test: unboundedTest(), users, health, clock, noDataLimit: 6 });
  assert.equal(result.stopCause, 'no-data');
  assert.match(result.reason, /last error: connect ECONNREFUSED 127\.0\.0\.1:9090/);
  assert.equal(calls, 6);
});

test('the default no-data limit covers a minute of evaluations', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  const health = new FakeHealth(clock, { [LATENCY]: () => null });
  const result = await runUnbounded({ test: unboundedTest(), users, health, clock });
  assert.equal(result.stopCause, 'no-data');
  assert.equal(health.callsOf(LATENCY).length, 30, '60 s / restTime 2 s');
});

test('reaching maxDuration without equilibrium is reported as not converged', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  // The ceiling keeps rising (a warming cache, say): the users never settle.
  const health = new FakeHealth(clock, { [LATENCY]: latencyOf(users, () => 20 + clock.elapsedSec() * 1.5) });
  const spec = unboundedTest({ maxDuration: '5m', equilibriumSlope: 0.5 });
  const result = await runUnbounded({ test: spec, users, health, clock });
  assert.equal(result.converged, false);
  assert.equal(result.stopCause, 'max-duration');
  assert.match(result.reason, /did not reach equilibrium within maxDuration \(300 s\)/);
  assert.ok(result.durationSec >= 300 && result.durationSec < 303);
  assert.ok(result.supportedUsers > 0, 'still reports the last window mean');
  assert.ok(result.timeline.at(-1)!.tSec < 300);
});

test('an abort signal stops the run between steps, without waiting for the rest period', async () => {
  const clock = new FakeClock();
  const controller = new AbortController();
  const users = new FakeUsers(() => {
    if (clock.elapsedSec() >= 30) controller.abort(new Error('SIGINT received'));
  });
  const health = new FakeHealth(clock, { [LATENCY]: latencyOf(users, () => 1000) });
  const result = await runUnbounded({ test: unboundedTest(), users, health, clock, signal: controller.signal });
  assert.equal(result.stopCause, 'aborted');
  assert.equal(result.converged, false);
  assert.match(result.reason, /SIGINT received/);
  assert.equal(result.timeline.at(-1)!.tSec, 30);
  assert.equal(clock.elapsedSec(), 30, 'no sleep after the abort');
});

test('an already aborted signal stops before the first step', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  const health = new FakeHealth(clock, { [LATENCY]: () => 0 });
  const result = await runUnbounded({ test: unboundedTest(), users, health, clock, signal: AbortSignal.abort('cancelled') });
  assert.equal(result.stopCause, 'aborted');
  assert.equal(result.timeline.length, 0);
  assert.equal(users.requested.length, 0);
  assert.equal(result.supportedUsers, 0);
});

test('healthy all the way to maxUsers is equilibrium at the cap, and says the ceiling was not found', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  const progress: UnboundedProgress[] = [];
  const health = new FakeHealth(clock, { [LATENCY]: () => 0.01 });
  const spec = unboundedTest({ maxUsers: 40 });
  const result = await runUnbounded({ test: spec, users, health, clock, onProgress: (p) => progress.push(p) });
  assert.equal(result.converged, true);
  assert.equal(result.stopCause, 'cap');
  assert.ok(result.supportedUsers >= 38 && result.supportedUsers <= 40, `supported ${result.supportedUsers}`);
  assert.match(result.reason, /could not find the ceiling; supported users >= 40/);
  assert.ok(Math.max(...users.requested) === 40, 'never asks for more than maxUsers');
  assert.equal(progress.length, result.timeline.length);
  assert.ok(progress.every((p) => p.timeLeftSec <= 1800 && p.over.length === 0));
});

test('a system unhealthy even without users converges at 0 supported users', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  const health = new FakeHealth(clock, { [LATENCY]: () => 5 });
  const result = await runUnbounded({ test: unboundedTest(), users, health, clock });
  assert.equal(result.stopCause, 'equilibrium');
  assert.equal(result.supportedUsers, 0);
  assert.match(result.reason, /unhealthy even without users/);
  assert.ok(
    users.requested.every((n) => n === 0),
    'never below 0',
  );
});

test('disabled health queries are never evaluated', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  const health = new FakeHealth(clock, { [LATENCY]: () => 0.01 });
  const spec = unboundedTest({
    maxUsers: 16,
    health: [
      { name: 'latency', query: LATENCY, threshold: 0.1 },
      { name: 'broken', query: 'not evaluated', threshold: 1, enabled: false },
    ],
  });
  const result = await runUnbounded({ test: spec, users, health, clock });
  assert.equal(result.stopCause, 'cap');
  assert.equal(health.calls.filter((c) => c.query === 'not evaluated').length, 0);
  assert.deepEqual(Object.keys(result.timeline[0]!.values), ['latency']);
});

test('refuses settings that would spin or never evaluate anything', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  const health = new FakeHealth(clock, {});
  await assert.rejects(runUnbounded({ test: unboundedTest({ restTime: 0 }), users, health, clock }), InputError);
  await assert.rejects(
    runUnbounded({ test: unboundedTest({ health: [{ name: 'x', query: 'x', threshold: 1, enabled: false }] }), users, health, clock }),
    /every health query is disabled/,
  );
});

test('keeps the step cadence on the clock even when evaluations take time', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  const slow = {
    async query(): Promise<number> {
      clock.advance(700); // Prometheus takes 0.7 s to answer
      return 0.01;
    },
  };
  const result = await runUnbounded({ test: unboundedTest({ maxUsers: 24 }), users, health: slow, clock });
  assert.deepEqual(
    result.timeline.slice(0, 4).map((p) => p.tSec),
    [0, 2, 4, 6],
  );
  assert.ok(clock.sleeps.slice(0, 3).every((ms) => ms === 1300));
});

/**
 * Health as Prometheus reports it: rate()[1m] over 5 s scrapes is the mean load of the
 * last minute (or `rateWindowSec`), seen a scrape late. With +8 users every 2 s, the users overshoot the
 * ceiling by minutes' worth of growth before the query reacts.
 */
function laggedLatency(clock: FakeClock, users: FakeUsers, capacity: number, rateWindowSec = 60): () => number | null {
  const history: Array<[number, number]> = [];
  return () => {
    const t = clock.elapsedSec();
    history.push([t, users.active]);
    const seen = history.filter(([ts]) => ts <= t - 5 && ts > t - 5 - rateWindowSec);
    if (seen.length < 2) return null;
    const mean = seen.reduce((a, [, u]) => a + u, 0) / seen.length;
    return mean <= capacity ? 0.05 : 0.05 + (mean - capacity) * 0.01;
  };
}

test('the climb and its overshoot peak are never the equilibrium window', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  const health = new FakeHealth(clock, { [LATENCY]: laggedLatency(clock, users, 100, 30) });
  const result = await runUnbounded({ test: unboundedTest({ equilibriumSlope: 3, maxDuration: '10m' }), users, health, clock });
  // Rising to the overshoot peak and falling back is flat by least squares; counting it
  // (as a slope-only rule would, at ~76 s) reported ~130 users for a ceiling of 100.
  const firstUnhealthy = result.timeline.find((p) => !p.healthy)!.tSec;
  assert.equal(result.converged, true, result.reason);
  assert.ok(result.window.startSec >= firstUnhealthy, `window starts at ${result.window.startSec}, first back-off at ${firstUnhealthy}`);
  assert.ok(Math.abs(result.supportedUsers - 100) <= 20, `supported ${result.supportedUsers}`);
});

test('with a window spanning several oscillations, a lagging system converges near its ceiling', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  const health = new FakeHealth(clock, { [LATENCY]: laggedLatency(clock, users, 100) });
  const spec = unboundedTest({ stabilityWindow: '10m', equilibriumSlope: 2, maxDuration: '40m' });
  const result = await runUnbounded({ test: spec, users, health, clock });
  assert.equal(result.converged, true, result.reason);
  // The lag makes it oscillate well above and below 100; the mean stays close to it.
  assert.ok(result.supportedUsers > 90 && result.supportedUsers < 140, `supported ${result.supportedUsers}`);
});

test('with rate()[30s] lag, a 2-minute window converges within 10 % of the ceiling', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  const health = new FakeHealth(clock, { [LATENCY]: laggedLatency(clock, users, 100, 30) });
  const spec = unboundedTest({ stabilityWindow: '2m', equilibriumSlope: 3, maxDuration: '10m' });
  const result = await runUnbounded({ test: spec, users, health, clock });
  assert.equal(result.converged, true, result.reason);
  assert.ok(result.durationSec < 240, `took ${result.durationSec} s`);
  assert.ok(Math.abs(result.supportedUsers - 100) <= 10, `supported ${result.supportedUsers}`);
});

test('stale over-threshold values from the previous run do not drain the users at the start', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  // For the first 60 s the 1-minute rate window still holds the previous test's slow
  // requests; afterwards the value describes this run (capacity 200).
  const fresh = latencyOf(users, () => 200);
  const health = new FakeHealth(clock, { [LATENCY]: () => (clock.elapsedSec() < 60 ? 0.5 : fresh()) });
  const result = await runUnbounded({ test: unboundedTest(), users, health, clock });
  const settled = result.timeline.filter((p) => p.tSec < 70);
  assert.ok(
    settled.every((p, i) => i === 0 || p.users >= settled[i - 1]!.users),
    'held, not removed, while the data may be stale',
  );
  assert.ok(!result.reason.includes('supported users 0'), result.reason);
  assert.equal(result.converged, true, result.reason);
  assert.ok(result.supportedUsers >= 185 && result.supportedUsers <= 215, `supported ${result.supportedUsers}`);
});
