import type { BoundedTest } from '../config/schema.ts';
import { InputError } from '../util/errors.ts';
import { abortReason, sleepUnlessAborted } from './clock.ts';
import { holdEstimate, type Sample } from './estimate.ts';
import type { Clock, UserControl } from './types.ts';

/**
 * The bounded test: ramp linearly to `users` over `rampUp`, hold until `duration`. The
 * measurement window is [rampUp, duration]; by rampUp every user is active, so the
 * window holds the full load only. Pure logic on the injected clock.
 */

export interface BoundedProgress {
  phase: 'ramp-up' | 'steady';
  tSec: number;
  users: number;
  timeLeftSec: number;
}

export interface BoundedResult {
  /** Seconds since start the stable-phase metrics are taken over. */
  window: { startSec: number; endSec: number };
  /** False when aborted; the window is then incomplete. */
  completed: boolean;
  /** Set when the hold stopped before `duration` (test.earlyStop): when, and the half-width reached. */
  earlyStop?: { atSec: number; halfWidthPct: number };
  reason: string;
  durationSec: number;
  timeline: Array<{ tSec: number; users: number }>;
}

export interface RunBoundedOptions {
  test: BoundedTest;
  users: UserControl;
  clock: Clock;
  onProgress?: (progress: BoundedProgress) => void;
  signal?: AbortSignal;
  /** Seconds between ramp steps; default 2 (the unbounded tests' pace). */
  rampStepSec?: number;
  /** Seconds between progress reports while holding; default 5. */
  holdReportSec?: number;
  /** test.earlyStop's query, evaluated at every hold report (null: no data). */
  sample?: () => Promise<number | null>;
  /** Batches of the early-stop estimate, seconds: about two rate windows. Default 60. */
  batchSec?: number;
}

export async function runBounded(options: RunBoundedOptions): Promise<BoundedResult> {
  const { test, users, clock, signal } = options;
  if (test.rampUp >= test.duration) {
    throw new InputError(
      `tests "${test.name}": rampUp (${test.rampUp} s) must be shorter than duration (${test.duration} s), or nothing is measured`,
    );
  }
  const rampStep = options.rampStepSec ?? 2;
  const holdStep = options.holdReportSec ?? 5;
  if (!(rampStep > 0) || !(holdStep > 0)) throw new RangeError('rampStepSec and holdReportSec must be > 0');

  const start = clock.now();
  const elapsedSec = (): number => (clock.now() - start) / 1000;
  const timeline: BoundedResult['timeline'] = [];
  const window = { startSec: test.rampUp, endSec: test.duration };
  const record = async (phase: BoundedProgress['phase']): Promise<void> => {
    const tSec = Math.round(elapsedSec() * 100) / 100;
    const active = await users.activeUsers();
    timeline.push({ tSec, users: active });
    options.onProgress?.({ phase, tSec, users: active, timeLeftSec: Math.max(0, test.duration - tSec) });
  };
  const aborted = (): BoundedResult => ({
    window,
    completed: false,
    reason: `stopped after ${Math.round(elapsedSec())} s of ${test.duration} s: ${abortReason(signal)}`,
    durationSec: elapsedSec(),
    timeline,
  });
  // Sleeps until `at` seconds after start; true when aborted.
  const sleepUntil = (at: number): Promise<boolean> =>
    sleepUnlessAborted(clock, Math.max(0, start + at * 1000 - clock.now()), signal);

  // Ramp: at step k (time k*rampStep) set the users due one step later, so the last
  // batch starts no later than rampUp.
  for (let k = 0; ; k++) {
    if (signal?.aborted) return aborted();
    const at = k * rampStep;
    const due = test.rampUp === 0 ? test.users : Math.min(test.users, Math.ceil((test.users * (at + rampStep)) / test.rampUp));
    await users.setUsers(due);
    await record('ramp-up');
    if (due >= test.users) break;
    if (await sleepUntil(at + rampStep)) return aborted();
  }

  // Hold: report every few seconds until the duration is reached, or, with earlyStop,
  // until the watched metric's mean over the hold is known within its half-width.
  const samples: Sample[] = [];
  const early = test.earlyStop && options.sample ? test.earlyStop : undefined;
  for (let at = (Math.floor(elapsedSec() / holdStep) + 1) * holdStep; ; at += holdStep) {
    const next = Math.min(at, test.duration);
    if (await sleepUntil(next)) return aborted();
    await record('steady');
    if (next >= test.duration) break;
    if (!early || !options.sample) continue;
    const value = await options.sample().catch(() => null);
    // Samples start one batch after the ramp: the rate window still holds ramp-up requests.
    const batchSec = options.batchSec ?? 60;
    if (value !== null && Number.isFinite(value) && next >= test.rampUp + batchSec) samples.push({ tSec: next, users: value });
    const estimate = holdEstimate(samples, batchSec);
    if (next - test.rampUp >= early.minHold && estimate && estimate.batches >= 4 && estimate.halfWidthPct <= early.halfWidthPct) {
      const endSec = Math.round(elapsedSec() * 100) / 100;
      return {
        window: { startSec: test.rampUp, endSec },
        completed: true,
        earlyStop: { atSec: endSec, halfWidthPct: Math.round(estimate.halfWidthPct * 100) / 100 },
        reason: `held ${test.users} users from ${test.rampUp} s and stopped early at ${Math.round(endSec)} s of ${test.duration} s: the watched metric's mean is within ±${Math.round(estimate.halfWidthPct * 100) / 100}% (asked ±${early.halfWidthPct}%)`,
        durationSec: elapsedSec(),
        timeline,
      };
    }
  }
  return {
    window,
    completed: true,
    reason: `held ${test.users} users from ${test.rampUp} s to ${test.duration} s`,
    durationSec: elapsedSec(),
    timeline,
  };
}
