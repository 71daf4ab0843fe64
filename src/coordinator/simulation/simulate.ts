import type { UnboundedTest } from '../../config/schema.ts';
import { runUnbounded, type UnboundedResult } from '../unbounded.ts';
import { SharedSimClock, SimClock, SimSystem, type ModelParams } from './model.ts';
import { JointWindow } from '../joint-window.ts';

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

export interface DuetSimOptions {
  model: Omit<ModelParams, 'ceiling'>;
  /** Each side's ceiling while both search. */
  ceilings: [number, number];
  test: UnboundedTest;
  seeds: [number, number];
  hints?: [number | undefined, number | undefined];
  /** One window for both sides, as a duet runs; false: each side stops at its own equilibrium. */
  joint: boolean;
  /**
   * The shared machine: once one side's search has stopped (its users no longer join and
   * leave), the other side's ceiling rises by this share. 0: the sides do not interact.
   */
  freedPct?: number;
  /** A side whose health reads `factor` times too high for its first `seconds`: a cold start's early alert. */
  earlyAlert?: { side: 0 | 1; seconds: number; factor: number };
}

export interface DuetSimRun {
  results: [UnboundedResult, UnboundedResult];
}

/** Both sides of a duet on one virtual clock, each against its own model, started together. */
export async function simulateDuet(o: DuetSimOptions): Promise<DuetSimRun> {
  const clock = new SharedSimClock();
  const joint = o.joint ? new JointWindow(2) : undefined;
  const systems = o.ceilings.map((ceiling, i) => new SimSystem(clock, { ...o.model, ceiling }, o.seeds[i] as number));
  const sides = systems.map((system, i) => {
    const early = o.earlyAlert?.side === i ? o.earlyAlert : undefined;
    const health = early ? { query: async () => scaled(await system.query(), clock.now() < early.seconds * 1000 ? early.factor : 1) } : system;
    const hint = o.hints?.[i];
    return runUnbounded({
      test: o.test,
      users: system,
      health,
      clock,
      settleSec: 0,
      ...(hint !== undefined ? { startHint: { users: hint, source: 'simulated hint' } } : {}),
      ...(joint ? { joint: joint.party(`slot ${i === 0 ? 'a' : 'b'}`) } : {}),
    }).then((result) => {
      // This side's users no longer join and leave: the other side has more of the machine.
      const other = systems[1 - i] as SimSystem;
      other.params.ceiling *= 1 + (o.freedPct ?? 0) / 100;
      return result;
    });
  });
  const [a, b] = await Promise.all(sides);
  return { results: [a as UnboundedResult, b as UnboundedResult] };
}

const scaled = (value: number | null, factor: number): number | null => (value === null ? null : value * factor);
