import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LOCAL } from '../../src/coordinator/simulation/profiles.ts';
import { SimClock, SimSystem } from '../../src/coordinator/simulation/model.ts';
import { CapacityHints } from '../../src/bench/capacity-hints.ts';
import { driveTest } from '../../src/bench/drive-test.ts';

/** One unbounded run of the local profile against the capacity model, through drive-test. */
async function drive(hints: CapacityHints, version: string, repeat: number, seed: number, side?: string, ceiling = 90) {
  const clock = new SimClock();
  const system = new SimSystem(clock, { ...LOCAL.model, noiseSd: 0.1, ceiling }, seed);
  const info: string[] = [];
  const driven = await driveTest({
    test: LOCAL.scaleFree,
    users: system,
    health: system,
    clock,
    signal: new AbortController().signal,
    progress: { status: () => {}, info: (m) => info.push(m) },
    label: { version, repeat },
    ...(side ? { side } : {}),
    hints,
  });
  assert.equal(driven.coordinator.kind, 'unbounded');
  if (driven.coordinator.kind !== 'unbounded') throw new Error('unreachable');
  return { result: driven.coordinator.result, info };
}

test("a gate's later runs start warm from its first converged run; the first starts cold", async () => {
  const hints = new CapacityHints();
  const first = await drive(hints, '1.162.0', 0, 1);
  assert.ok(first.result.converged, first.result.reason);
  assert.equal(first.result.capacity.startSource, 'initialUsers');
  const second = await drive(hints, '1.163.2', 0, 2);
  assert.equal(second.result.capacity.startSource, '1.162.0 run 0');
  assert.equal(second.result.capacity.startUsers, Math.floor(first.result.supportedUsers * 0.85));
  assert.ok(
    second.info.some((m) => /warm start at \d+ users, 15% below the expected capacity of \d+ \(1\.162\.0 run 0\)/.test(m)),
    second.info.join('\n'),
  );
  assert.ok(second.result.converged, second.result.reason);
});

test('--expect-users is the hint when the gate has no run yet', async () => {
  const hints = new CapacityHints({ expectUsers: 120 });
  const run = await drive(hints, '1.162.0', 0, 3);
  assert.equal(run.result.capacity.startSource, '--expect-users');
  assert.equal(run.result.capacity.startUsers, 102);
  assert.ok(run.result.converged, run.result.reason);
});

test("each side warm-starts from its own last run: a quota'd candidate's lower ceiling does not become the baseline's start", async () => {
  const hints = new CapacityHints();
  const baseline = await drive(hints, '1.162.0', 0, 4, 'baseline', 90);
  assert.ok(baseline.result.converged, baseline.result.reason);
  const candidate = await drive(hints, '1.162.0', 0, 5, 'candidate', 60);
  assert.equal(candidate.result.capacity.startSource, 'baseline 1.162.0 run 0', 'no run of its own yet: the other side');
  assert.ok(candidate.result.converged, candidate.result.reason);
  const again = await drive(hints, '1.162.0', 1, 6, 'baseline', 90);
  assert.equal(again.result.capacity.startSource, 'baseline 1.162.0 run 0');
  assert.equal(again.result.capacity.startUsers, Math.floor(baseline.result.supportedUsers * 0.85));
  const candidateAgain = await drive(hints, '1.162.0', 1, 7, 'candidate', 60);
  assert.equal(candidateAgain.result.capacity.startSource, 'candidate 1.162.0 run 0');
});
