import type { GateConfig, TestSpec, UnboundedTest } from '../config/schema.ts';
import { healthLagSec } from '../coordinator/unbounded.ts';
import { AWS, queryFor, THRESHOLD } from '../coordinator/simulation/profiles.ts';
import { simulateMany } from '../coordinator/simulation/simulate.ts';
import { slotOverheadSec, slotSides, type DurationEstimate, type RunSlot } from './cost.ts';

/**
 * The expected duration of a gate, beside the plan's upper bound: each
 * unbounded run is simulated (the real coordinator against the capacity model fitted to
 * the ceiling-test seed, src/coordinator/simulation) with its own rate windows, at a
 * ceiling of `ceilingFraction` x maxUsers; the first run climbs cold, later runs start
 * warm from it. A bounded run with earlyStop is expected to stop after its minimum hold.
 * `runsPerSide` is the decision rule's expected number of runs per side, or of duets (1 is
 * the ceiling-test reports' single run). A duet's sides climb at once, each to its own
 * ceiling on half the nodes' CPU; the search scales with the ceiling it finds, so a duet is
 * timed as one run.
 */

export interface ExpectedOptions {
  runsPerSide?: number;
  /** Assumed ceiling as a fraction of maxUsers (the config sets maxUsers above the expected ceiling). */
  ceilingFraction?: number;
  /** Seeded runs per simulated figure. */
  simulations?: number;
}

export interface ExpectedRun extends RunSlot {
  /** How the figure was made. */
  basis: string;
}

export interface ExpectedDuration {
  runsPerSide: number;
  runs: ExpectedRun[];
  testsSec: number;
  totalSec: number;
  /** The longest single run (it must fit a 6 h GitHub-hosted job with the rest). */
  longestRunSec: number;
}

export async function expectedDuration(config: GateConfig, upper: DurationEstimate, options: ExpectedOptions = {}): Promise<ExpectedDuration> {
  const runsPerSide = options.runsPerSide ?? 1;
  if (!(runsPerSide >= 1)) throw new RangeError(`runsPerSide must be >= 1, got ${runsPerSide}`);
  const fraction = options.ceilingFraction ?? 0.85;
  const simulations = options.simulations ?? 3;
  const perTest = new Map<string, { cold: number; warm: number; basis: string }>();
  for (const test of config.tests) perTest.set(test.name, await expectedTestSec(test, fraction, simulations));
  const runs: ExpectedRun[] = [];
  // Runs per side may be fractional (an expectation): whole runs, then the remainder.
  for (let repeat = 0; repeat < Math.ceil(runsPerSide); repeat++) {
    const share = Math.min(1, runsPerSide - repeat);
    for (const test of config.tests) {
      const figures = perTest.get(test.name) as { cold: number; warm: number; basis: string };
      for (const side of slotSides(config.mode)) {
        const first = repeat === 0 && side !== 'candidate';
        const seconds = share * ((first ? figures.cold : figures.warm) + slotOverheadSec(side));
        runs.push({ test: test.name, side, repeat, seconds: Math.round(seconds), basis: figures.basis + (first ? ' (cold)' : '') });
      }
    }
  }
  const testsSec = runs.reduce((a, r) => a + r.seconds, 0);
  return {
    runsPerSide,
    runs,
    testsSec,
    totalSec: upper.provisionSec + testsSec + upper.teardownSec,
    longestRunSec: Math.max(...runs.map((r) => r.seconds)),
  };
}

async function expectedTestSec(test: TestSpec, fraction: number, simulations: number): Promise<{ cold: number; warm: number; basis: string }> {
  if (test.type === 'bounded') {
    const sec = test.earlyStop ? Math.min(test.duration, test.rampUp + test.earlyStop.minHold) : test.duration;
    return { cold: sec, warm: sec, basis: test.earlyStop ? 'ramp-up + minimum hold (early stop)' : 'duration' };
  }
  const ceiling = Math.max(1, Math.round(test.maxUsers * fraction));
  const window = Math.max(AWS.model.scrapeSec * 2, rateWindowOf(test));
  const model = { ...AWS.model, rateWindowSec: window };
  // The model answers one latency-like query: the binding one, with the test's lag.
  const simulated: UnboundedTest = {
    ...test,
    health: [{ name: 'binding health query (simulated)', query: queryFor(window), threshold: THRESHOLD, minInterval: 0, enabled: true }],
  };
  const cold = await simulateMany({ model, ceiling, test: simulated }, simulations);
  const warm = test.warmStart ? await simulateMany({ model, ceiling, test: simulated, hint: ceiling }, simulations) : cold;
  return {
    cold: Math.min(test.maxDuration, cold.meanDurationSec),
    warm: Math.min(test.maxDuration, warm.meanDurationSec),
    basis: `simulated at ${ceiling} users`,
  };
}

function rateWindowOf(test: UnboundedTest): number {
  return healthLagSec(test.health.filter((q) => q.enabled)) - 10 || 60;
}
