import { workloadName } from '../noise/pool.ts';
import type { SpeedFit } from '../noise/schema.ts';
import { slopeVariance } from '../noise/speed.ts';

/**
 * A relative check's values taken to one machine speed (src/noise/speed.ts): each run's
 * ln(value) − slope · (ln(its probe ms) − the mean ln(probe ms) of all the check's runs),
 * so adjusted values stay on the scale of the raw ones. What the adjustment cannot know
 * exactly is the slope; its error moves every pair alike, by (slope error) × (the sides'
 * mean probe difference), so that variance is added to the evidence after each pair.
 */

/** Probe CPU ms per run, in the order of the check's values. */
export interface RunProbes {
  baseline: number[];
  candidate: number[];
  /** The probes' workload with its interpreter (both sides ran the same). */
  workload: string;
}

export interface SpeedAdjusted {
  baseline: number[];
  candidate: number[];
  /** Added to the evidence's variance after k pairs (index k − 1). */
  extraVariance: number[];
  fit: SpeedFit;
  probes: RunProbes;
}

/** Adjusted values, or why the model's fit does not apply to these runs. */
export function speedAdjust(values: { baseline: readonly number[]; candidate: readonly number[] }, probes: RunProbes, fit: SpeedFit): SpeedAdjusted | { skipped: string } {
  if (workloadName(probes.workload) !== fit.workload) {
    return { skipped: `the runs' speed probe ran ${workloadName(probes.workload)}, the noise model's fit ${fit.workload}` };
  }
  if (probes.baseline.length !== values.baseline.length || probes.candidate.length !== values.candidate.length) {
    return { skipped: 'not every run carries a speed probe' };
  }
  const lb = probes.baseline.map(Math.log);
  const lc = probes.candidate.map(Math.log);
  const all = [...lb, ...lc];
  const ref = all.reduce((a, x) => a + x, 0) / all.length;
  const adjust = (v: number, lp: number) => v * Math.exp(-fit.slope * (lp - ref));
  const slopeVar = slopeVariance(fit);
  const steps = Math.max(lb.length, lc.length);
  const extraVariance: number[] = [];
  for (let k = 1; k <= steps; k++) {
    const mb = meanOf(lb.slice(0, Math.min(k, lb.length)));
    const mc = meanOf(lc.slice(0, Math.min(k, lc.length)));
    extraVariance.push(slopeVar * (mc - mb) ** 2);
  }
  return {
    baseline: values.baseline.map((v, i) => adjust(v, lb[i] as number)),
    candidate: values.candidate.map((v, i) => adjust(v, lc[i] as number)),
    extraVariance,
    fit,
    probes,
  };
}

function meanOf(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, x) => a + x, 0) / xs.length : 0;
}

/**
 * Each side's values after `step` pairs taken to the mean speed of those pairs' runs (for
 * display: the reference speed cancels in the change, so the evidence may use any).
 */
export function adjustedValuesAt(raw: { baseline: readonly number[]; candidate: readonly number[] }, s: SpeedAdjusted, step: number): { baseline: number[]; candidate: number[] } {
  const lb = s.probes.baseline.slice(0, step).map(Math.log);
  const lc = s.probes.candidate.slice(0, step).map(Math.log);
  const ref = meanOf([...lb, ...lc]);
  const at = (values: readonly number[], lp: readonly number[]) => values.slice(0, step).map((v, i) => v * Math.exp(-s.fit.slope * ((lp[i] as number) - ref)));
  return { baseline: at(raw.baseline, lb), candidate: at(raw.candidate, lc) };
}

/** Geometric mean of the first `step` probes: the side's typical probe time up to that pair. */
export function probeMsAt(ms: readonly number[], step: number): number {
  const xs = ms.slice(0, step).map(Math.log);
  return Math.exp(meanOf(xs));
}
