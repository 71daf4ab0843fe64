import { test } from 'node:test';
import assert from 'node:assert/strict';
import { atLevel, capacityChartSpecs, capacitySection, levelsOf } from '../../src/report/capacity-curve.ts';
import type { TestComparison } from '../../src/results/comparison.ts';
import type { RunResult } from '../../src/results/schema.ts';
import { bounded, unbounded } from '../support/runs.ts';

/** An unbounded run whose users climb 1 per 5 s to 100: every metric a known function of users. */
function ramp(version: string, supportedUsers: number, apiAt: (u: number) => number, o: { quantilesAndErrors?: boolean } = {}): RunResult {
  const run = unbounded(version, supportedUsers);
  const t = Array.from({ length: 101 }, (_, i) => i * 5);
  const users = t.map((_, i) => i);
  const series = (v: number[], unit: 'users' | 'rps' | 'ms' | 'percent') => ({ unit, t, v });
  // Results recorded before these series existed have none of them.
  const newer =
    o.quantilesAndErrors === false
      ? {}
      : {
          apiP50Ms: series(
            users.map((u) => 0.8 * apiAt(u)),
            'ms',
          ),
          apiP95Ms: series(
            users.map((u) => 3 * apiAt(u)),
            'ms',
          ),
          errorPercent: series(
            users.map((u) => u / 100),
            'percent',
          ),
        };
  return {
    ...run,
    series: {
      connectedUsers: series(users, 'users'),
      rps: series(
        users.map((u) => 0.7 * u),
        'rps',
      ),
      apiAvgMs: series(users.map(apiAt), 'ms'),
      apiP99Ms: series(
        users.map((u) => 4 * apiAt(u)),
        'ms',
      ),
      storeAvgMs: series(
        users.map((u) => 1 + u / 100),
        'ms',
      ),
      storeP99Ms: series(
        users.map((u) => 5 + u / 10),
        'ms',
      ),
      ...newer,
    },
  };
}

const comparison = (baseline: RunResult[], candidate: RunResult[]): TestComparison =>
  ({
    name: baseline[0]!.test.name,
    type: baseline[0]!.test.type,
    baseline,
    candidate,
    problems: [],
    api: { worsened: [], improved: [] },
    store: { worsened: [], improved: [] },
  }) as unknown as TestComparison;

test('each level is the mean of the points within ±5 % of it, after the first minute', () => {
  const run = ramp('1.0.0', 80, (u) => 20 + u);
  // Users 57..63 are within ±5 % of 60 (57 to 63); the metric is linear, so the mean is at 60.
  const level = atLevel([run], 60, () => 60);
  assert.ok(level);
  assert.equal(level.points, 7);
  assert.ok(Math.abs((level.values.rps ?? 0) - 42) < 1e-9);
  assert.ok(Math.abs((level.values.apiAvgMs ?? 0) - 80) < 1e-9);
  assert.equal(
    atLevel([run], 200, () => 0),
    undefined,
    'never reached: no row',
  );
});

test('the unbounded table has levels at fractions of the knee, baseline / candidate side by side', () => {
  const t = comparison([ramp('1.0.0', 80, (u) => 20 + u)], [ramp('1.1.0', 72, (u) => 20 + 2 * u)]);
  assert.deepEqual(levelsOf(t), [20, 40, 60, 72, 80]);
  const md = capacitySection(t) ?? '';
  // Users | req/s | API avg | p50 | p95 | p99 | errors %, each baseline / candidate.
  assert.match(md, /\| Users \| Requests\/s \| API avg \(ms\) \| API p50 \(ms\) \| API p95 \(ms\) \| API p99 \(ms\) \| Errors \(%\) \|/);
  assert.match(md, /\| 80 \(knee\) \| 56\.0 \/ 56\.0 \| 100\.0 \/ 180\.0 \| 80\.0 \/ 144\.0 \| 300\.0 \/ 540\.0 \| 400\.0 \/ 720\.0 \| 0\.80 \/ 0\.80 \|/);
  assert.match(md, /\| 40 \| 28\.0 \/ 28\.0 \| 60\.0 \/ 100\.0 \|/);
  assert.match(md, /Store times by load/);
  assert.match(md, /\| 72 \| 1\.72 \/ 1\.72 \| 12\.20 \/ 12\.20 \|/);
  assert.equal(capacityChartSpecs('unbounded', t.baseline, t.candidate).length, 3);
});

test('results recorded before the p50, p95 and error series show n/a in those columns, not zeros', () => {
  const t = comparison([ramp('1.0.0', 80, (u) => 20 + u, { quantilesAndErrors: false })], [ramp('1.1.0', 80, (u) => 20 + u)]);
  const md = capacitySection(t) ?? '';
  assert.match(md, /\| 80 \(knee\) \| 56\.0 \/ 56\.0 \| 100\.0 \/ 100\.0 \| n\/a \/ 80\.0 \| n\/a \/ 300\.0 \| 400\.0 \/ 400\.0 \| n\/a \/ 0\.80 \|/);
});

test('a bounded test gets the same table at its one level, over its hold only', () => {
  const t = comparison([bounded('1.0.0')], [bounded('1.1.0')]);
  assert.deepEqual(levelsOf(t), [40]);
  const md = capacitySection(t) ?? '';
  assert.match(md, /Capacity curve - Bounded/);
  assert.match(md, /^\| 40 \| /m);
  assert.equal(capacityChartSpecs('bounded', t.baseline, t.candidate).length, 0, 'no curve from one level');
});

test('an early-stopped bounded run and an unbounded estimate are stated', () => {
  const b = { ...bounded('1.0.0'), earlyStop: { atSec: 120, halfWidthPct: 1.7 } };
  const u = {
    ...ramp('1.0.0', 80, (x) => 20 + x),
    capacity: { estimator: 'hold-mean' as const, supportedUsers: 80, windowMeanUsers: 81.5, halfWidthPct: 1.2, startUsers: 68, startSource: '--expect-users' },
  };
  assert.match(capacitySection(comparison([b], [bounded('1.1.0')])) ?? '', /stopped early at 2\.0 min of 2\.5 min \(the watched metric within ±1\.7%\)/);
  assert.match(
    capacitySection(comparison([u], [u])) ?? '',
    /80 ±1\.2% supported users \(hold-mean; load-test-ng's window mean 81\.5\), started at 68 users \(--expect-users\)/,
  );
});
