import type { SpeedFit } from '../noise/schema.ts';
import { slopeVariance, speedFitOutOfScope, workloadName, type SpeedMachine } from '../noise/speed.ts';
import { mean } from '../util/stats.ts';

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
  /** The hosts the runs named (their bench fingerprint); none: the fit's range is checked alone. */
  machines?: readonly SpeedMachine[];
}

export interface SpeedAdjusted {
  baseline: number[];
  candidate: number[];
  /** Added to the evidence's variance after k pairs (index k − 1). */
  extraVariance: number[];
  fit: SpeedFit;
  probes: RunProbes;
}

/**
 * Adjusted values, or why the model's fit does not apply to these runs: another probe, a
 * run without one, or runs beyond the speeds or off the machine the fit was measured on.
 */
export function speedAdjust(
  values: { baseline: readonly number[]; candidate: readonly number[] },
  probes: RunProbes,
  fit: SpeedFit,
): SpeedAdjusted | { skipped: string } {
  if (workloadName(probes.workload) !== fit.workload) {
    return { skipped: `the runs' speed probe ran ${workloadName(probes.workload)}, the noise model's fit ${fit.workload}` };
  }
  if (probes.baseline.length !== values.baseline.length || probes.candidate.length !== values.candidate.length) {
    return { skipped: 'not every run carries a speed probe' };
  }
  const outside = speedFitOutOfScope(fit, [...probes.baseline, ...probes.candidate], probes.machines);
  if (outside) return { skipped: outside };
  const lb = probes.baseline.map(Math.log);
  const lc = probes.candidate.map(Math.log);
  const ref = mean([...lb, ...lc]);
  const slopeVar = slopeVariance(fit);
  const steps = Math.max(lb.length, lc.length);
  const extraVariance: number[] = [];
  for (let k = 1; k <= steps; k++) {
    const mb = mean(lb.slice(0, Math.min(k, lb.length)));
    const mc = mean(lc.slice(0, Math.min(k, lc.length)));
    extraVariance.push(slopeVar * (mc - mb) ** 2);
  }
  return {
    baseline: toOneSpeed(values.baseline, lb, fit.slope, ref),
    candidate: toOneSpeed(values.candidate, lc, fit.slope, ref),
    extraVariance,
    fit,
    probes,
  };
}

/** Each value times exp(−slope · (its ln probe − ref)): the one adjustment, for the evidence and for display. */
function toOneSpeed(values: readonly number[], lnProbes: readonly number[], slope: number, ref: number): number[] {
  return values.map((v, i) => v * Math.exp(-slope * ((lnProbes[i] as number) - ref)));
}

/**
 * Each side's values after `step` pairs taken to the mean speed of those pairs' runs (for
 * display: the reference speed cancels in the change, so the evidence may use any).
 */
export function adjustedValuesAt(
  raw: { baseline: readonly number[]; candidate: readonly number[] },
  s: SpeedAdjusted,
  step: number,
): { baseline: number[]; candidate: number[] } {
  const lb = s.probes.baseline.slice(0, step).map(Math.log);
  const lc = s.probes.candidate.slice(0, step).map(Math.log);
  const ref = mean([...lb, ...lc]);
  return { baseline: toOneSpeed(raw.baseline.slice(0, step), lb, s.fit.slope, ref), candidate: toOneSpeed(raw.candidate.slice(0, step), lc, s.fit.slope, ref) };
}
