import { studentTQuantile } from '../util/stats.ts';
import type { SpeedFit } from './schema.ts';

/** The probe workload's name without its interpreter ("python-json-v1 CPython 3.11.2" → "python-json-v1"). */
export function workloadName(workload: string): string {
  return workload.split(' ')[0] as string;
}

/**
 * Taking the machine's speed out of a metric. The local bench is a shared VM whose speed
 * moves by up to a fifth between runs minutes apart, within a pair as well as between
 * pairs; supported users follow it (docs/local.md, "The machine's own speed"). The CPU probe
 * (src/bench/local/speed-probe.ts) times a fixed workload on the target's core during
 * every run, and its cost does not depend on the release under test. So
 *
 *   ln(value) = side + slope · ln(probe ms) + noise
 *
 * with one intercept per side (a version, or in an A/A calibration the one version) and one
 * slope for all, fitted by least squares; the decision then judges
 * ln(value) − slope · (ln(probe ms) − reference) at the noise left around the line.
 * A real change between the sides sits in the intercepts and is never fitted away; only
 * the part of a run's value that its own probe predicts is.
 */

/** One group's values in run order: x = ln(probe CPU ms), y = ln(value). */
export interface SpeedGroup {
  x: readonly number[];
  y: readonly number[];
}

/** Within-group sums: what a least-squares fit with one intercept per group rests on. */
export interface SpeedSums {
  sxx: number;
  sxy: number;
  syy: number;
  /** Σ(n − 1) over the groups: degrees of freedom before the slope takes one. */
  dfWithin: number;
  runs: number;
}

export function speedSums(groups: readonly SpeedGroup[]): SpeedSums {
  const out: SpeedSums = { sxx: 0, sxy: 0, syy: 0, dfWithin: 0, runs: 0 };
  for (const { x, y } of groups) {
    if (x.length !== y.length) throw new Error('speedSums: a group has unequal x and y');
    if (x.length < 2) continue;
    const mx = x.reduce((a, v) => a + v, 0) / x.length;
    const my = y.reduce((a, v) => a + v, 0) / y.length;
    x.forEach((xi, i) => {
      const dx = xi - mx;
      const dy = (y[i] as number) - my;
      out.sxx += dx * dx;
      out.sxy += dx * dy;
      out.syy += dy * dy;
    });
    out.dfWithin += x.length - 1;
    out.runs += x.length;
  }
  return out;
}

/** The sums a stored fit stands for: sxy = slope·sxx, syy = residual ss + slope²·sxx. */
export function sumsOfFit(fit: SpeedFit): SpeedSums {
  return { sxx: fit.sxx, sxy: fit.slope * fit.sxx, syy: fit.df * fit.sdLog ** 2 + fit.slope ** 2 * fit.sxx, dfWithin: fit.df + 1, runs: fit.runs };
}

/**
 * The least-squares slope and the spread left around it, or null when the sums cannot
 * carry a fit: fewer than 2 degrees of freedom left, or a probe that did not move.
 */
export function fitOfSums(s: SpeedSums): { slope: number; sdLog: number; sxx: number; df: number; runs: number } | null {
  const df = s.dfWithin - 1;
  if (df < 2 || !(s.sxx > 1e-12)) return null;
  const slope = s.sxy / s.sxx;
  const ss = Math.max(0, s.syy - (s.sxy * s.sxy) / s.sxx);
  return { slope, sdLog: Math.sqrt(ss / df), sxx: s.sxx, df, runs: s.runs };
}

/** Two sets of sums as one: exact, since least squares only needs the sums. */
export function addSums(a: SpeedSums, b: SpeedSums): SpeedSums {
  return { sxx: a.sxx + b.sxx, sxy: a.sxy + b.sxy, syy: a.syy + b.syy, dfWithin: a.dfWithin + b.dfWithin, runs: a.runs + b.runs };
}

/** Variance of the fitted slope: σ²/sxx. */
export function slopeVariance(fit: Pick<SpeedFit, 'sdLog' | 'sxx'>): number {
  return fit.sdLog ** 2 / fit.sxx;
}

/** The probe's own per-run spread behind the fit (sd of ln ms within the groups). */
export function probeSdLog(fit: Pick<SpeedFit, 'sxx' | 'df'>): number {
  return Math.sqrt(fit.sxx / (fit.df + 1));
}

/** Two-sided level at which a fit's slope must differ from zero before the decision uses it. */
const SPEED_SLOPE_LEVEL = 0.05;

/**
 * Whether the fit shows that the probe explains the metric: its slope differs from zero
 * (Student's t on the fit's df, two-sided at SPEED_SLOPE_LEVEL). A slope that does not
 * adjusts each run by noise of its own, so the check is then judged as measured, at the
 * entry's unadjusted σ, until more runs make the slope clear. Returns why not, or null.
 */
export function speedFitUnclear(fit: SpeedFit): string | null {
  const se = Math.sqrt(slopeVariance(fit));
  const t = Math.abs(fit.slope) / se;
  const needed = studentTQuantile(1 - SPEED_SLOPE_LEVEL / 2, fit.df);
  if (t >= needed) return null;
  return `the noise model's speed fit does not show that the probe explains it (slope ${fit.slope.toFixed(2)} ± ${se.toFixed(2)}, t = ${t.toFixed(2)} < ${needed.toFixed(2)} on ${fit.df} df; ${fit.runs} runs)`;
}

/** A host as the runs' bench fingerprint and a speed fit name it. */
export type SpeedMachine = NonNullable<SpeedFit['machine']>;

export function machineName(m: SpeedMachine): string {
  return `${m.cpuModel} (${m.cores} ${m.cores === 1 ? 'core' : 'cores'})`;
}

export function sameMachine(a: SpeedMachine, b: SpeedMachine): boolean {
  return a.cpuModel === b.cpuModel && a.cores === b.cores;
}

/** The lowest and highest of some probe times (ms). */
export function probeRange(ms: readonly number[]): { min: number; max: number } {
  return { min: Math.min(...ms), max: Math.max(...ms) };
}

/**
 * Where two fits pooled into one were measured: the probe range spanning both, and the
 * machine when both name the same one. Either left unknown stays unknown, so the pooled
 * fit never claims a range or a machine that part of its runs may not share.
 */
export function pooledScope(a: Pick<SpeedFit, 'probeMs' | 'machine'>, b: Pick<SpeedFit, 'probeMs' | 'machine'>): Pick<SpeedFit, 'probeMs' | 'machine'> {
  const probeMs = a.probeMs && b.probeMs ? { min: Math.min(a.probeMs.min, b.probeMs.min), max: Math.max(a.probeMs.max, b.probeMs.max) } : undefined;
  const machine = a.machine && b.machine && sameMachine(a.machine, b.machine) ? a.machine : undefined;
  return { ...(probeMs ? { probeMs } : {}), ...(machine ? { machine } : {}) };
}

/**
 * How far beyond the probe range it was measured over a fit is still applied: 10 % at
 * either end (ln 1.1 in log terms). The line is only known where its runs were, but a fit
 * spans only the few % the probe moved during its calibration, and another calibration on
 * the same kind of VM reads a little beyond it: without a margin the fit would be refused
 * to the very machine it describes. 10 % is about four times the probe's own run-to-run
 * spread (docs/research/2026-11-25-speed-probe.md), and far short of a machine twice as slow.
 */
export const SPEED_RANGE_MARGIN = 0.1;

const ms = (x: number) => x.toFixed(1);

/**
 * Why a fit must not be applied to runs with these probe times (a run's median CPU ms, as
 * the fit's own runs recorded them), or null. A slope measured on one machine over a few
 * percent of speed says nothing of another machine, nor of a speed twice as slow: applied
 * there it would turn the machine's own speed into a change of the release. `machines` are
 * the hosts the runs named; a fit or runs that name none are checked by the range alone,
 * and a fit without a recorded range by the machine alone.
 */
export function speedFitOutOfScope(fit: SpeedFit, probeMs: readonly number[], machines: readonly SpeedMachine[] = []): string | null {
  if (!probeMs.length) return null;
  const runs = probeRange(probeMs);
  const where = `${fit.probeMs ? `the fit's ${ms(fit.probeMs.min)}–${ms(fit.probeMs.max)} ms` : 'the fit (its probe range not recorded)'} on ${fit.machine ? machineName(fit.machine) : 'a machine it does not name'}`;
  const read = `probe ${ms(runs.min)}–${ms(runs.max)} ms against ${where}`;
  const others = fit.machine ? machines.filter((m) => !sameMachine(m, fit.machine!)) : [];
  if (others.length) {
    return `the runs ran on ${others.map(machineName).join(', ')}, not the machine the noise model's speed fit was measured on (${read}): a fit is not carried to another machine; a calibration on this one (loadgate calibrate) gives it a fit of its own`;
  }
  if (fit.probeMs && (runs.min < fit.probeMs.min / (1 + SPEED_RANGE_MARGIN) || runs.max > fit.probeMs.max * (1 + SPEED_RANGE_MARGIN))) {
    return `the runs' speed probe lies outside the noise model's speed fit (${read}, more than ${SPEED_RANGE_MARGIN * 100} % beyond either end): the fit is not applied to speeds it was not measured at; a calibration at these speeds (loadgate calibrate) gives a fit that covers them`;
  }
  return null;
}
