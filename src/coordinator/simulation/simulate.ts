import type { UnboundedTest } from '../../config/schema.ts';
import { runUnbounded, type UnboundedResult } from '../unbounded.ts';
import { SimClock, SimSystem, type ModelParams } from './model.ts';
import type { Profile } from './profiles.ts';

/**
 * Runs the real coordinator (runUnbounded) against the capacity model on a virtual clock,
 * and summarises many seeded runs: the figures scripts/bench-capacity.ts prints and
 * test/coordinator/simulation.test.ts checks.
 */

export interface SimRun {
  result: UnboundedResult;
  /** Most users started within one second (a warm start's ramp keeps this low). */
  peakStartsPerSec: number;
}

export interface SimOptions {
  model: Omit<ModelParams, 'ceiling'>;
  ceiling: number;
  test: UnboundedTest;
  seed: number;
  hint?: number;
}

export async function simulateRun(o: SimOptions): Promise<SimRun> {
  const clock = new SimClock();
  const system = new SimSystem(clock, { ...o.model, ceiling: o.ceiling }, o.seed);
  const result = await runUnbounded({
    test: o.test,
    users: system,
    health: system,
    clock,
    // The model has no previous run whose load lingers in the rate windows.
    settleSec: 0,
    ...(o.hint !== undefined ? { startHint: { users: o.hint, source: 'simulated hint' } } : {}),
  });
  return { result, peakStartsPerSec: system.peakStartsPerSec };
}

export interface SimSummary {
  runs: number;
  converged: number;
  /** Mean supported users / ceiling. */
  meanRatio: number;
  /** Per-run sd of supported users, % of their mean. */
  sdPct: number;
  meanDurationSec: number;
  maxDurationSec: number;
  /** Mean of the runs' own half-widths (hold-mean only), %. */
  meanHalfWidthPct?: number;
}

export async function simulateMany(o: Omit<SimOptions, 'seed'>, runs: number, firstSeed = 1): Promise<SimSummary> {
  const results: SimRun[] = [];
  for (let i = 0; i < runs; i++) results.push(await simulateRun({ ...o, seed: firstSeed + i }));
  return summarise(results, o.ceiling);
}

function summarise(results: readonly SimRun[], ceiling: number): SimSummary {
  const users = results.map((r) => r.result.supportedUsers);
  const mean = users.reduce((a, b) => a + b, 0) / users.length;
  const sd = Math.sqrt(users.reduce((a, u) => a + (u - mean) ** 2, 0) / Math.max(1, users.length - 1));
  const durations = results.map((r) => r.result.durationSec);
  const halfWidths = results.map((r) => r.result.capacity.halfWidthPct).filter((h): h is number => h !== undefined);
  return {
    runs: results.length,
    converged: results.filter((r) => r.result.converged).length,
    meanRatio: mean / ceiling,
    sdPct: (100 * sd) / mean,
    meanDurationSec: durations.reduce((a, b) => a + b, 0) / durations.length,
    maxDurationSec: Math.max(...durations),
    ...(halfWidths.length ? { meanHalfWidthPct: halfWidths.reduce((a, b) => a + b, 0) / halfWidths.length } : {}),
  };
}

/** A profile's test with another maxUsers, for ceilings far from the fitted one. */
export function forCeiling(test: UnboundedTest, ceiling: number): UnboundedTest {
  return { ...test, maxUsers: Math.max(test.maxUsers, Math.ceil(ceiling * 4)) };
}

export type { Profile };
