/**
 * Plain statistics, shared by the verdict, the user-count search and the speed probe.
 * The verdict's intervals work on the log of the ratio candidate/baseline, because
 * performance changes are multiplicative (a 5 % loss is the same finding at 200 users
 * and at 20000), and are returned as % change.
 */

import gammainc from '@stdlib/math-base-special-gammainc';
import normalQuantileStdlib from '@stdlib/stats-base-dists-normal-quantile';
import tCdf from '@stdlib/stats-base-dists-t-cdf';
import tQuantile from '@stdlib/stats-base-dists-t-quantile';

export interface Interval {
  low: number;
  high: number;
}

export function mean(values: readonly number[]): number {
  let sum = 0;
  for (const v of values) sum += v;
  return values.length ? sum / values.length : Number.NaN;
}

/** The middle value (the mean of the two middle ones for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Geometric mean of the first `step` values (a side's probe times, or its raw values, up to that pair). */
export function geometricMeanAt(values: readonly number[], step: number): number {
  return Math.exp(mean(values.slice(0, step).map(Math.log)));
}

export function sampleVariance(values: readonly number[]): number {
  if (values.length < 2) return Number.NaN;
  const m = mean(values);
  let ss = 0;
  for (const v of values) ss += (v - m) ** 2;
  return ss / (values.length - 1);
}

export function pctChange(baseline: number, candidate: number): number {
  return (candidate / baseline - 1) * 100;
}

const logRatioToPct = (x: number): number => (Math.exp(x) - 1) * 100;

/** Inverse of the standard normal CDF. */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile: p must be in (0, 1), got ${p}`);
  return normalQuantileStdlib(p, 0, 1);
}

/** P(X ≥ x) for X chi-square with `df` degrees of freedom. */
export function chiSquareSf(x: number, df: number): number {
  if (!(df > 0)) throw new RangeError(`chiSquareSf: df must be > 0, got ${df}`);
  // A chi-square variable is never negative; the library answers NaN below 0.
  if (x <= 0) return 1;
  // The upper regularized gamma Q(df/2, x/2) directly, not 1 − CDF, so tail p-values
  // far below 1e-6 keep their digits.
  return gammainc(x / 2, df / 2, true, true);
}

/** CDF of Student's t with `df` degrees of freedom. */
export function studentTCdf(t: number, df: number): number {
  return tCdf(t, df);
}

/** Quantile of Student's t with `df` degrees of freedom (df need not be an integer). */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`studentTQuantile: p must be in (0, 1), got ${p}`);
  if (!(df > 0)) throw new RangeError(`studentTQuantile: df must be > 0, got ${df}`);
  return tQuantile(p, df);
}

/**
 * Two-sided t-interval on the % change candidate/baseline, computed on log values.
 * Equal run counts are treated as interleaved pairs (pair i = the i-th baseline and
 * candidate run, which share bench conditions); otherwise Welch's unpaired interval.
 * Needs at least two runs per side; returns null otherwise or on non-positive values.
 */
export function logRatioTInterval(baseline: readonly number[], candidate: readonly number[], confidence: number): Interval | null {
  if (baseline.length < 2 || candidate.length < 2) return null;
  if ([...baseline, ...candidate].some((v) => !(v > 0))) return null;
  const lb = baseline.map(Math.log);
  const lc = candidate.map(Math.log);
  const alpha = 1 - confidence;
  let center: number;
  let se: number;
  let df: number;
  if (lb.length === lc.length) {
    const diffs = lc.map((v, i) => v - (lb[i] as number));
    center = mean(diffs);
    se = Math.sqrt(sampleVariance(diffs) / diffs.length);
    df = diffs.length - 1;
  } else {
    const vb = sampleVariance(lb) / lb.length;
    const vc = sampleVariance(lc) / lc.length;
    center = mean(lc) - mean(lb);
    se = Math.sqrt(vb + vc);
    df = (vb + vc) ** 2 / (vb ** 2 / (lb.length - 1) + vc ** 2 / (lc.length - 1));
    if (!Number.isFinite(df)) df = lb.length + lc.length - 2;
  }
  if (se === 0) return { low: logRatioToPct(center), high: logRatioToPct(center) };
  const half = studentTQuantile(1 - alpha / 2, df) * se;
  return { low: logRatioToPct(center - half), high: logRatioToPct(center + half) };
}

/**
 * Interval on the % change of a rate per request (errors/requests), treating each count
 * as Poisson: se(log ratio) = sqrt(1/e_c + 1/e_b). A zero count gets the usual 0.5
 * continuity correction so "0 errors before, 40 after" still yields a finite interval.
 */
export function poissonRateRatioInterval(
  baselineEvents: number,
  baselineExposure: number,
  candidateEvents: number,
  candidateExposure: number,
  confidence: number,
): Interval | null {
  if (!(baselineExposure > 0 && candidateExposure > 0)) return null;
  const eb = baselineEvents > 0 ? baselineEvents : 0.5;
  const ec = candidateEvents > 0 ? candidateEvents : 0.5;
  const center = Math.log(ec / candidateExposure) - Math.log(eb / baselineExposure);
  const half = normalQuantile(1 - (1 - confidence) / 2) * Math.sqrt(1 / eb + 1 / ec);
  return { low: logRatioToPct(center - half), high: logRatioToPct(center + half) };
}

/** Least-squares slope of y over x (units of y per unit of x); NaN with fewer than 2 points. */
export function slope(x: readonly number[], y: readonly number[]): number {
  const n = Math.min(x.length, y.length);
  if (n < 2) return Number.NaN;
  const mx = mean(x.slice(0, n));
  const my = mean(y.slice(0, n));
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += ((x[i] as number) - mx) * ((y[i] as number) - my);
    den += ((x[i] as number) - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}
