import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadTestNgRunResult, RunMappingError, type LoadTestNgRunParts, type MeasuredRun } from '../../support/loadtest-ng/result.ts';
import { coordinatorResponseSchema } from '../../../src/engine/loadtest-ng/schema.ts';
import { runResultSchema } from '../../../src/results/schema.ts';
import { testSchema } from '../../../src/config/schema.ts';
import { fixture } from './stand-in.ts';

const unbounded = testSchema.parse({
  type: 'unbounded',
  maxUsers: 20000,
  initialUsers: 400,
  stabilityWindow: '30m',
  maxDuration: '4h',
  health: [
    { name: 'p99', query: 'histogram_quantile(0.99, x)', threshold: 2 },
    { name: 'off', query: 'y', threshold: 1, enabled: false },
  ],
});
const bounded = testSchema.parse({ type: 'bounded', users: 7500, rampUp: '15m', duration: '90m' });

const measured: MeasuredRun = {
  stableWindow: { startSec: 9400, endSec: 11200 },
  totals: { requests: 51_234_567, errors: 1200, timeouts: 3 },
  api: [{ name: 'getPostsForChannel', count: 1_000_000, avgMs: 21.5, p99Ms: 180 }],
  store: [{ name: 'PostStore.GetPosts', count: 900_000, avgMs: 3.2, p99Ms: 41 }],
  series: { connectedUsers: { unit: 'users', t: [0, 60, 120], v: [0, 480, 960] } },
  supportedUsers: 17_052.4,
};

function parts(over: Partial<LoadTestNgRunParts> = {}): LoadTestNgRunParts {
  const status = coordinatorResponseSchema.parse(fixture('coordinator-status-done-200.json')).status!;
  return {
    test: unbounded,
    target: { system: 'mattermost', version: 'v11.0.1-rc2' },
    repeat: 0,
    coordinator: status,
    hitMaxDuration: false,
    measured,
    bench: { kind: 'aws', instances: { app: '2 x c7i.2xlarge' }, versions: { engine: 'load-test-ng v1.29.0' } },
    links: [{ title: 'Grafana (unbounded)', url: 'https://grafana.example/dashboard/snapshot/abc' }],
    ...over,
  };
}

test('maps a coordinator that reached equilibrium into a valid unbounded run result', () => {
  const result = loadTestNgRunResult(parts());
  assert.doesNotThrow(() => runResultSchema.parse(result));
  assert.equal(result.startedAt, '2025-09-30T14:05:00.120Z');
  assert.equal(result.finishedAt, '2025-09-30T17:11:42.881Z');
  assert.equal(result.status, 'completed');
  assert.equal(result.converged, true);
  // Prometheus' mean over the stability window wins over the coordinator's estimate (17040).
  assert.equal(result.supportedUsers, 17_052.4);
  assert.deepEqual(result.problems, ['load-test-ng agents reported 41 errors']);
  assert.equal(result.test.type, 'unbounded');
  if (result.test.type === 'unbounded') {
    assert.deepEqual([result.test.maxDurationSec, result.test.stabilityWindowSec, result.test.restSec], [14400, 1800, 2]);
    // The coordinator starts the run there, so the result records it as the other benches' do.
    assert.equal(result.test.initialUsers, 400);
    assert.deepEqual(
      result.test.health.map((h) => h.name),
      ['p99'],
    );
  }
  assert.equal(result.links[0]?.url, 'https://grafana.example/dashboard/snapshot/abc');
});

test('falls back to the coordinator estimate and flags a run stopped at maxDuration', () => {
  const stopped = coordinatorResponseSchema.parse(fixture('coordinator-stop-200.json')).status!;
  const result = loadTestNgRunResult(parts({ coordinator: stopped, hitMaxDuration: true, measured: { ...measured, supportedUsers: undefined } }));
  assert.equal(result.supportedUsers, 16912);
  assert.equal(result.converged, false);
  assert.ok(result.problems.some((p) => /did not reach equilibrium within maxDuration \(14400s\)/.test(p)));
});

test('bounded runs carry no supported users; a saturated generator makes the run invalid', () => {
  const result = loadTestNgRunResult(parts({ test: bounded, measured: { ...measured, generator: { cpuPercentMax: 97, saturated: true } } }));
  assert.equal(result.supportedUsers, undefined);
  assert.equal(result.converged, undefined);
  assert.equal(result.status, 'invalid');
  assert.deepEqual(result.test, { type: 'bounded', name: 'bounded', users: 7500, rampUpSec: 900, durationSec: 5400 });
});

test('refuses runs that are not over or never started, and numbers the schema rejects', () => {
  const running = coordinatorResponseSchema.parse(fixture('coordinator-status-running-200.json')).status!;
  assert.throws(
    () => loadTestNgRunResult(parts({ coordinator: running })),
    (e: unknown) => e instanceof RunMappingError && /still running/.test(e.message),
  );
  const never = coordinatorResponseSchema.parse(fixture('coordinator-create-201.json')).status!;
  assert.throws(() => loadTestNgRunResult(parts({ coordinator: never })), /never started/);
  const badSeries = { ...measured, series: { rps: { unit: 'rps' as const, t: [0, 0], v: [1, 2] } } };
  assert.throws(() => loadTestNgRunResult(parts({ measured: badSeries })), /series\.rps\.t: t must be strictly increasing/);
});
