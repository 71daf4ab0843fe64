import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LOCAL } from '../../src/coordinator/simulation/profiles.ts';
import { simulateDuet, type DuetSimOptions } from '../../src/coordinator/simulation/simulate.ts';
import { JointWindow } from '../../src/coordinator/joint-window.ts';
import type { UnboundedResult } from '../../src/coordinator/index.ts';

/**
 * Both sides of an unbounded duet on one virtual clock, each against its own capacity
 * model. The scenario is the one a fresh machine met: both sides have the same ceiling, one
 * side's first alert comes early (a cold start's transient), so it crawls up and settles
 * minutes after the other; and the sides share the machine, so once one side stops
 * searching the other can hold more users.
 */

const QUIET = { ...LOCAL.model, noiseSd: 0.1 };
const SCENARIO: Omit<DuetSimOptions, 'joint' | 'seeds'> = {
  model: QUIET,
  ceilings: [30, 30],
  test: { ...LOCAL.scaleFree, initialUsers: 15 },
  earlyAlert: { side: 0, seconds: 40, factor: 2 },
  freedPct: 15,
};

/** A result's measured window on the shared clock (both sides start at 0). */
const span = (r: UnboundedResult) => ({ start: r.window.startSec, end: r.window.endSec });
const ratio = ([a, b]: [UnboundedResult, UnboundedResult]) => b.supportedUsers / a.supportedUsers;

test('alone, each side stops at its own equilibrium: the late side is measured later, on a machine its partner has left', async () => {
  const { results } = await simulateDuet({ ...SCENARIO, joint: false, seeds: [1, 2] });
  const [a, b] = results.map(span) as [ReturnType<typeof span>, ReturnType<typeof span>];
  assert.ok(
    results.every((r) => r.converged),
    results.map((r) => r.reason).join('; '),
  );
  // The stand-in reproduces what the fresh machine showed: windows minutes apart, and a
  // ratio far from 1 between two identical systems.
  assert.ok(Math.abs(a.end - b.end) > 60, `windows ${JSON.stringify([a, b])}`);
  assert.ok(Math.abs(ratio(results) - 1) > 0.05, `b/a ${ratio(results).toFixed(3)}`);
});

test('in a duet both sides stop together and are measured over the same interval, from the later side settling', async () => {
  for (const seeds of [
    [1, 2],
    [3, 4],
    [5, 6],
    [7, 8],
  ] as const) {
    const { results } = await simulateDuet({ ...SCENARIO, joint: true, seeds: [...seeds] });
    const [a, b] = results.map(span) as [ReturnType<typeof span>, ReturnType<typeof span>];
    assert.ok(
      results.every((r) => r.converged),
      results.map((r) => r.reason).join('; '),
    );
    assert.deepEqual(a, b, `seeds ${seeds}: one window for both`);
    assert.ok(
      results.every((r) => /both sides of the duet/.test(r.reason)),
      results[0].reason,
    );
    // Two identical systems measured over the same minutes agree (the noise is small here).
    assert.ok(Math.abs(ratio(results) - 1) <= 0.03, `seeds ${seeds}: b/a ${ratio(results).toFixed(3)}`);
  }
});

test('a duet stopped by maxDuration is measured over at least the last stability window, even when the sides began their shared hold just before', async () => {
  // Side a alerts at once; side b climbs one user per step to a ceiling twice as high and
  // settles about 110 s in, a few steps before maxDuration.
  const test = { ...LOCAL.constantStep, maxDuration: 120, equilibriumSlope: 0.01 };
  const { results } = await simulateDuet({ model: QUIET, ceilings: [45, 90], test, seeds: [1, 2], joint: true });
  for (const r of results) {
    assert.equal(r.stopCause, 'max-duration', r.reason);
    assert.ok(r.window.endSec - r.window.startSec >= test.stabilityWindow, `window ${r.window.startSec}-${r.window.endSec} s`);
  }
  assert.deepEqual(span(results[0]), span(results[1]), 'one window for both');
});

test('a partner that leaves after fixing the window frees nobody: the side still in its step ends on that window', () => {
  // On a real bench both sides' steps are in flight at once (Prometheus and k6 answer over
  // the network): one side can fix the window and stop while the other is mid-step.
  const window = new JointWindow(2);
  const a = window.party('slot a');
  const b = window.party('slot b');
  a.decide({ startMs: 3000, endMs: 9000 }, 'settled');
  a.leave();
  assert.equal(b.alone(), false, 'bound by the window its partner fixed');
  assert.deepEqual(b.decision(), { startMs: 3000, endMs: 9000, cause: 'settled', by: 'slot a' });
});

test('a side whose partner left goes on alone and stops by its own rule', async () => {
  const window = new JointWindow(2);
  const a = window.party('slot a');
  const b = window.party('slot b');
  assert.equal(a.alone(), false);
  b.leave();
  assert.equal(a.alone(), true);
  assert.equal(a.allReady(), false, 'nothing is ready before a side says so');
  a.ready(true);
  assert.equal(a.allReady(), true, 'the sides still here are all ready');
});

test('the first side to decide fixes the window; a later decision keeps it', () => {
  const window = new JointWindow(2);
  const a = window.party('slot a');
  const b = window.party('slot b');
  assert.equal(a.commonStartMs(), undefined, 'no common hold before both settle');
  a.settled(1000);
  a.settled(5000);
  assert.equal(a.commonStartMs(), undefined);
  b.settled(3000);
  assert.equal(b.commonStartMs(), 3000, 'the later side settling starts the common hold; a side settles once');
  const first = b.decide({ startMs: 3000, endMs: 9000 }, 'settled');
  const second = a.decide({ startMs: 3000, endMs: 9500 }, 'settled');
  assert.deepEqual(second, first);
  assert.deepEqual(a.decision(), { startMs: 3000, endMs: 9000, cause: 'settled', by: 'slot b' });
  assert.throws(() => window.party('slot c'), /has its 2 sides already/);
});

test('a side once ready stays ready, so two jittery searches need not read flat at the same step', () => {
  const window = new JointWindow(2);
  const a = window.party('slot a');
  const b = window.party('slot b');
  a.ready(true);
  a.ready(false);
  assert.equal(b.allReady(), false, 'its partner is not ready yet');
  b.ready(true);
  assert.equal(b.allReady(), true, 'slot a read flat once; the step where slot b does ends both');
});
