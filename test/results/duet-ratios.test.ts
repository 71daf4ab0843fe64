import { test } from 'node:test';
import assert from 'node:assert/strict';
import { duetRatios } from '../../src/results/duet-ratios.ts';
import { RELATIVE_METRICS } from '../../src/results/judged-metrics.ts';
import type { RunResult } from '../../src/results/schema.ts';
import { unbounded } from '../support/runs.ts';

const users = RELATIVE_METRICS.find((m) => m.key === 'supportedUsers')!;
const inSlot = (run: RunResult, slot: 'a' | 'b'): RunResult => ({ ...run, duet: { slot, cpuShare: 0.5 } });

test('duetRatios pairs each baseline run with the candidate run of the same repeat, whatever order they are listed in', () => {
  const baseline = [inSlot(unbounded('1.0', 40, 0), 'a'), inSlot(unbounded('1.0', 50, 1), 'b')];
  const candidate = [inSlot(unbounded('2.0', 55, 1), 'a'), inSlot(unbounded('2.0', 36, 0), 'b')];
  const duets = duetRatios(baseline, candidate, 'unbounded', users);
  assert.deepEqual(
    duets.map((d) => [d.baselineRun.repeat, d.baselineRun.duet?.slot, d.baseline, d.candidate]),
    [
      [0, 'a', 40, 36],
      [1, 'b', 50, 55],
    ],
  );
  assert.ok(Math.abs(duets[0]!.logRatio - Math.log(0.9)) < 1e-12);
  assert.ok(Math.abs(duets[1]!.logRatio - Math.log(1.1)) < 1e-12);
});

test('duetRatios leaves out a duet whose other side is missing, unusable or without the metric', () => {
  const baseline = [unbounded('1.0', 40, 0), unbounded('1.0', 40, 1), unbounded('1.0', 40, 2), unbounded('1.0', 40, 3)];
  const { supportedUsers: _, ...withoutUsers } = unbounded('2.0', 40, 2);
  const candidate = [{ ...unbounded('2.0', 44, 0), status: 'crashed' as const }, withoutUsers as RunResult, unbounded('2.0', 44, 3)];
  assert.deepEqual(
    duetRatios(baseline, candidate, 'unbounded', users).map((d) => d.baselineRun.repeat),
    [3],
  );
  // The caller's own rule for a usable run: here, no problems either.
  const flagged = [{ ...unbounded('2.0', 44, 3), problems: ['the load generator saturated'] }];
  assert.deepEqual(
    duetRatios(baseline, flagged, 'unbounded', users, (r) => r.status === 'completed' && !r.problems.length),
    [],
  );
  assert.deepEqual(duetRatios(baseline, candidate, 'bounded', users), []);
});
