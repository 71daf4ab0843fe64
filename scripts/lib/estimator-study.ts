/**
 * A search for a steadier estimator (keep whatever measurably lowers the spread):
 * supported users re-estimated from a finished unbounded run's stored series by estimators
 * the coordinator does not use, so that their run-to-run spread can be set beside the
 * shipped hold mean's on the same runs. Used by scripts/bench-estimators.ts.
 *
 * The alternatives read the binding health query (the target's CPU, at its threshold)
 * against the active users: CPU ∝ users through the origin over the
 * settled hold or over the whole run, and a straight line over the whole run.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { mean, sampleVariance, studentTQuantile } from '../../src/util/stats.ts';
import { leastSquaresSlope } from '../../src/coordinator/equilibrium.ts';
import { fitOfSums, speedSums, type SpeedGroup } from '../../src/noise/speed.ts';
import { RATE_WINDOW } from '../../src/chat-servers/synapse/queries.ts';
import { loadRunResult } from '../../src/results/load.ts';
import type { RunResult, Series } from '../../src/results/schema.ts';

export const ESTIMATORS = ['hold-mean', 'window-mean', 'cpu-ratio-hold', 'cpu-ratio-run', 'cpu-line-run'] as const;
export type EstimatorName = (typeof ESTIMATORS)[number];

export const ESTIMATOR_DESCRIPTIONS: Record<EstimatorName, string> = {
  'hold-mean': 'the shipped estimate: time-mean users over the settled hold',
  'window-mean': "load-test-ng's: mean users over the last stability window",
  'cpu-ratio-hold': 'CPU threshold x users/CPU over the measured window (CPU proportional to users)',
  'cpu-ratio-run': 'the same over the whole run, climb included',
  'cpu-line-run': 'users where a straight line of CPU against users, over the whole run, crosses the threshold',
};

/** The window the stored cpuPercent series rates over (src/chat-servers/synapse/queries.ts), in seconds. */
export const RATE_WINDOW_SEC = Number(/^(\d+)s$/.exec(RATE_WINDOW)?.[1]);
if (!(RATE_WINDOW_SEC > 0)) throw new Error(`RATE_WINDOW "${RATE_WINDOW}" is not a whole number of seconds`);

/** One run's estimates, with what the spread comparison needs beside them. */
export interface RunEstimates {
  source: string;
  /** The target version: one intercept per version in the speed fit, as in the noise model's. */
  version: string;
  estimates: Partial<Record<EstimatorName, number>>;
  /** The speed probe's median (CPU ms) and workload, when the run carries one. */
  probe?: { cpuMs: number; workload: string };
  /** Standard error of the hold mean, % of it, from its batch-means interval. */
  holdSePct?: number;
}

/**
 * The CPU health query's threshold: the health query reading the target's CPU seconds
 * (the same counter the stored `cpuPercent` series rates). Undefined when the run had none.
 */
export function cpuThreshold(result: RunResult): number | undefined {
  if (result.test.type !== 'unbounded') return undefined;
  return result.test.health.find((h) => /cpu_seconds_total/.test(h.query))?.threshold;
}

/** Time-mean of the step function a series describes (each value holds until the next point) over [from, to]. */
export function stepMean(series: Series, from: number, to: number): number | undefined {
  if (!(to > from)) return undefined;
  let area = 0;
  let covered = 0;
  for (let i = 0; i < series.t.length; i++) {
    const a = Math.max(from, series.t[i] as number);
    const b = Math.min(to, series.t[i + 1] ?? to);
    if (b > a) {
      area += (series.v[i] as number) * (b - a);
      covered += b - a;
    }
  }
  return covered > 0 ? area / covered : undefined;
}

/**
 * (users, CPU %) pairs: each CPU point against the users averaged over the rate window that
 * point's rate() covered, from the first point whose window lies wholly inside the run.
 */
export function cpuAgainstUsers(result: RunResult, rateWindowSec: number, span?: { from: number; to: number }): Array<{ users: number; cpu: number }> {
  const cpu = result.series.cpuPercent;
  const users = result.series.connectedUsers;
  if (!cpu || !users) return [];
  const out: Array<{ users: number; cpu: number }> = [];
  cpu.t.forEach((t, i) => {
    if (t < rateWindowSec || (span && (t < span.from || t > span.to))) return;
    const u = stepMean(users, t - rateWindowSec, t);
    if (u !== undefined) out.push({ users: u, cpu: cpu.v[i] as number });
  });
  return out;
}

/** Users at the threshold if CPU is proportional to users: threshold · Σusers / ΣCPU. */
export function ratioCrossing(pairs: ReadonlyArray<{ users: number; cpu: number }>, threshold: number): number | undefined {
  const cpu = pairs.reduce((a, p) => a + p.cpu, 0);
  const users = pairs.reduce((a, p) => a + p.users, 0);
  return pairs.length && cpu > 0 ? (threshold * users) / cpu : undefined;
}

/** Users where the least-squares line CPU = a + b·users crosses the threshold; undefined for a flat or falling line. */
export function lineCrossing(pairs: ReadonlyArray<{ users: number; cpu: number }>, threshold: number): number | undefined {
  if (pairs.length < 3) return undefined;
  const users = pairs.map((p) => p.users);
  const cpu = pairs.map((p) => p.cpu);
  const slope = leastSquaresSlope(users, cpu);
  if (!(slope > 0)) return undefined;
  const crossing = mean(users) + (threshold - mean(cpu)) / slope;
  return crossing > 0 ? crossing : undefined;
}

/** The hold mean's standard error, % of it: its 95 % batch-means half-width over t(0.975, batches − 1). */
export function holdStandardErrorPct(capacity: RunResult['capacity']): number | undefined {
  if (!capacity || capacity.halfWidthPct === undefined || capacity.batches === undefined || capacity.batches < 2) return undefined;
  return capacity.halfWidthPct / studentTQuantile(0.975, capacity.batches - 1);
}

/** Every estimator on one completed unbounded run. */
export function estimateRun(result: RunResult, source: string, rateWindowSec: number): RunEstimates {
  const estimates: Partial<Record<EstimatorName, number>> = {};
  if (result.supportedUsers !== undefined) estimates['hold-mean'] = result.supportedUsers;
  if (result.capacity) estimates['window-mean'] = result.capacity.windowMeanUsers;
  const threshold = cpuThreshold(result);
  if (threshold !== undefined) {
    const window = { from: result.stableWindow.startSec, to: result.stableWindow.endSec };
    const whole = cpuAgainstUsers(result, rateWindowSec);
    const hold = ratioCrossing(cpuAgainstUsers(result, rateWindowSec, window), threshold);
    const run = ratioCrossing(whole, threshold);
    const line = lineCrossing(whole, threshold);
    if (hold !== undefined) estimates['cpu-ratio-hold'] = hold;
    if (run !== undefined) estimates['cpu-ratio-run'] = run;
    if (line !== undefined) estimates['cpu-line-run'] = line;
  }
  const se = holdStandardErrorPct(result.capacity);
  return {
    source,
    version: result.target.version,
    estimates,
    ...(result.speedProbe ? { probe: { cpuMs: result.speedProbe.cpuMsMedian, workload: result.speedProbe.workload } } : {}),
    ...(se !== undefined ? { holdSePct: se } : {}),
  };
}

/**
 * The workload-mix index of each run, ms: its API calls costed at the handlers' average
 * times pooled over all the runs. It moves only when the mix of calls moves, so its spread
 * says how much of the runs' spread the random choice of actions can explain.
 */
export function mixIndexMs(results: readonly RunResult[]): number[] {
  const pooled = new Map<string, { count: number; sumMs: number }>();
  for (const r of results) {
    for (const a of r.api) {
      const p = pooled.get(a.name) ?? { count: 0, sumMs: 0 };
      p.count += a.count;
      p.sumMs += a.count * a.avgMs;
      pooled.set(a.name, p);
    }
  }
  return results.map((r) => {
    const calls = r.api.reduce((a, t) => a + t.count, 0);
    const cost = r.api.reduce((a, t) => {
      const p = pooled.get(t.name) as { count: number; sumMs: number };
      return a + t.count * (p.sumMs / p.count);
    }, 0);
    return calls > 0 ? cost / calls : Number.NaN;
  });
}

/** Spread of a set of positive values: sample sd of their logs, as %, with n − 1 df. */
export function spreadPct(values: readonly number[]): { sdPct: number; df: number } | undefined {
  if (values.length < 2 || values.some((v) => !(v > 0))) return undefined;
  return { sdPct: 100 * Math.sqrt(sampleVariance(values.map(Math.log))), df: values.length - 1 };
}

/**
 * Spread left at one machine speed: the decision's own fit (src/noise/speed.ts), one
 * intercept per version (an A/A calibration has one) and one slope on ln(probe ms). Undefined unless every run has the
 * estimate and a probe of one workload, and the fit keeps at least 2 df.
 */
export function spreadAtOneSpeedPct(runs: readonly RunEstimates[], estimator: EstimatorName): { sdPct: number; df: number; slope: number } | undefined {
  const workloads = new Set(runs.map((r) => r.probe?.workload));
  if (workloads.size !== 1 || workloads.has(undefined)) return undefined;
  if (runs.some((r) => !((r.estimates[estimator] ?? 0) > 0))) return undefined;
  const groups: SpeedGroup[] = [...new Set(runs.map((r) => r.version))].map((version) => {
    const mine = runs.filter((r) => r.version === version);
    return { x: mine.map((r) => Math.log((r.probe as { cpuMs: number }).cpuMs)), y: mine.map((r) => Math.log(r.estimates[estimator] as number)) };
  });
  const fit = fitOfSums(speedSums(groups));
  return fit ? { sdPct: 100 * fit.sdLog, df: fit.df, slope: fit.slope } : undefined;
}

/** Spreads pooled over calibrations (variances weighted by df): one figure per estimator. */
export function pooledPct(parts: ReadonlyArray<{ sdPct: number; df: number } | undefined>): { sdPct: number; df: number } | undefined {
  let ss = 0;
  let df = 0;
  for (const p of parts) {
    if (!p) continue;
    ss += p.df * p.sdPct ** 2;
    df += p.df;
  }
  return df > 0 ? { sdPct: Math.sqrt(ss / df), df } : undefined;
}

/** A calibration folder's completed unbounded runs, estimated; undefined under 3 such runs. */
export interface Calibration {
  dir: string;
  runs: RunEstimates[];
  /** mixIndexMs of the same runs, in the same order. */
  mix: number[];
}

export async function loadCalibration(dir: string, rateWindowSec: number): Promise<Calibration | undefined> {
  const resultsDir = join(dir, 'results');
  const files = (await readdir(resultsDir)).filter((f) => f.endsWith('.json')).sort();
  const results: Array<{ file: string; result: RunResult }> = [];
  for (const file of files) {
    const result = await loadRunResult(join(resultsDir, file));
    if (result.test.type === 'unbounded' && result.status === 'completed') results.push({ file, result });
  }
  if (results.length < 3) return undefined;
  return {
    dir,
    runs: results.map(({ file, result }) => estimateRun(result, file, rateWindowSec)),
    mix: mixIndexMs(results.map((r) => r.result)),
  };
}
