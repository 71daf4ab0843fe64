import type { BoundedTest } from '../config/schema.ts';
import { InputError } from '../util/errors.ts';
import { abortReason, sleepUnlessAborted } from './clock.ts';
import { holdEstimate, type Sample } from './estimate.ts';
import type { Clock, UserControl } from './types.ts';
import type { JointParty } from './joint-window.ts';

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
  earlyStop?: { atSec: number; halfWidthPct?: number };
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
  /**
   * One side of a duet with earlyStop: the hold stops when both sides' watched metrics are
   * known well enough, at the same moment for both (joint-window.ts).
   */
  joint?: JointParty;
}

export async function runBounded(options: RunBoundedOptions): Promise<BoundedResult> {
  const { test } = options;
  if (test.rampUp >= test.duration) {
    throw new InputError(`tests "${test.name}": rampUp (${test.rampUp} s) must be shorter than duration (${test.duration} s), or nothing is measured`);
  }
  const run = new BoundedRun(options);
  return (await run.ramp()) ?? (await run.hold());
}

/** One bounded run: its clock, its timeline, and the ways it can end. */
class BoundedRun {
  private readonly test: BoundedTest;
  private readonly start: number;
  private readonly rampStep: number;
  private readonly holdStep: number;
  private readonly batchSec: number;
  private readonly timeline: BoundedResult['timeline'] = [];

  constructor(private readonly o: RunBoundedOptions) {
    this.test = o.test;
    this.rampStep = o.rampStepSec ?? 2;
    this.holdStep = o.holdReportSec ?? 5;
    this.batchSec = o.batchSec ?? 60;
    if (!(this.rampStep > 0) || !(this.holdStep > 0)) throw new RangeError('rampStepSec and holdReportSec must be > 0');
    this.start = o.clock.now();
  }

  /**
   * Ramp: at step k (time k*rampStep) set the users due one step later, so the last batch
   * starts no later than rampUp. Returns a result only when aborted.
   */
  async ramp(): Promise<BoundedResult | undefined> {
    const { test, rampStep } = this;
    for (let k = 0; ; k++) {
      if (this.o.signal?.aborted) return this.aborted();
      const at = k * rampStep;
      const due = test.rampUp === 0 ? test.users : Math.min(test.users, Math.ceil((test.users * (at + rampStep)) / test.rampUp));
      await this.o.users.setUsers(due);
      await this.record('ramp-up');
      if (due >= test.users) return undefined;
      if (await this.sleepUntil(at + rampStep)) return this.aborted();
    }
  }

  /**
   * Hold: report every few seconds until the duration is reached, or, with earlyStop,
   * until the watched metric's mean over the hold is known within its half-width (in a
   * duet, on both sides: they stop together).
   */
  async hold(): Promise<BoundedResult> {
    const { test, o } = this;
    const samples: Sample[] = [];
    const early = test.earlyStop && o.sample ? test.earlyStop : undefined;
    const joint = early ? o.joint : undefined;
    try {
      for (let at = (Math.floor(this.elapsedSec() / this.holdStep) + 1) * this.holdStep; ; at += this.holdStep) {
        const next = Math.min(at, test.duration);
        if (await this.sleepUntil(next)) return this.aborted();
        const agreed = joint?.decision();
        if (agreed) return this.stoppedEarly((agreed.endMs - this.start) / 1000, samples);
        await this.record('steady');
        if (next >= test.duration) return this.held();
        if (!early || !o.sample) continue;
        const value = await o.sample().catch(() => null);
        // Samples start one batch after the ramp: the rate window still holds ramp-up requests.
        if (value !== null && Number.isFinite(value) && next >= test.rampUp + this.batchSec) samples.push({ tSec: next, users: value });
        const estimate = holdEstimate(samples, this.batchSec);
        const sure = next - test.rampUp >= early.minHold && estimate !== undefined && estimate.batches >= 4 && estimate.halfWidthPct <= early.halfWidthPct;
        const endSec = round2(this.elapsedSec());
        if (!joint || joint.alone()) {
          if (sure) return this.stoppedEarly(endSec, samples);
          continue;
        }
        joint.ready(sure);
        if (!sure || !joint.allReady()) continue;
        const decided = joint.decide({ startMs: this.start + test.rampUp * 1000, endMs: this.start + endSec * 1000 }, 'settled');
        return this.stoppedEarly((decided.endMs - this.start) / 1000, samples);
      }
    } finally {
      joint?.leave();
    }
  }

  private elapsedSec(): number {
    return (this.o.clock.now() - this.start) / 1000;
  }

  /** Sleeps until `at` seconds after start; true when aborted. */
  private sleepUntil(at: number): Promise<boolean> {
    return sleepUnlessAborted(this.o.clock, Math.max(0, this.start + at * 1000 - this.o.clock.now()), this.o.signal);
  }

  private async record(phase: BoundedProgress['phase']): Promise<void> {
    const tSec = round2(this.elapsedSec());
    const active = await this.o.users.activeUsers();
    this.timeline.push({ tSec, users: active });
    this.o.onProgress?.({ phase, tSec, users: active, timeLeftSec: Math.max(0, this.test.duration - tSec) });
  }

  private aborted(): BoundedResult {
    const { test } = this;
    return {
      window: { startSec: test.rampUp, endSec: test.duration },
      completed: false,
      reason: `stopped after ${Math.round(this.elapsedSec())} s of ${test.duration} s: ${abortReason(this.o.signal)}`,
      durationSec: this.elapsedSec(),
      timeline: this.timeline,
    };
  }

  private held(): BoundedResult {
    const { test } = this;
    return {
      window: { startSec: test.rampUp, endSec: test.duration },
      completed: true,
      reason: `held ${test.users} users from ${test.rampUp} s to ${test.duration} s`,
      durationSec: this.elapsedSec(),
      timeline: this.timeline,
    };
  }

  private stoppedEarly(endSec: number, samples: readonly Sample[]): BoundedResult {
    const { test } = this;
    const halfWidthPct = round2(holdEstimate(samples, this.batchSec)?.halfWidthPct ?? Infinity);
    const sure = Number.isFinite(halfWidthPct)
      ? `the watched metric's mean is within ±${halfWidthPct}%`
      : 'the watched metric has too few batches for an interval';
    return {
      window: { startSec: test.rampUp, endSec },
      completed: true,
      earlyStop: { atSec: endSec, ...(Number.isFinite(halfWidthPct) ? { halfWidthPct } : {}) },
      reason: `held ${test.users} users from ${test.rampUp} s and stopped early at ${Math.round(endSec)} s of ${test.duration} s: ${sure} (asked ±${test.earlyStop?.halfWidthPct}%)`,
      durationSec: this.elapsedSec(),
      timeline: this.timeline,
    };
  }
}

const round2 = (x: number): number => Math.round(x * 100) / 100;
