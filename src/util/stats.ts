/** Plain statistics, shared by the verdict, the user-count search and the speed probe. */

import normalQuantileStdlib from '@stdlib/stats-base-dists-normal-quantile';
import tCdf from '@stdlib/stats-base-dists-t-cdf';
import tQuantile from '@stdlib/stats-base-dists-t-quantile';

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

/** Inverse of the standard normal CDF. */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile: p must be in (0, 1), got ${p}`);
  return normalQuantileStdlib(p, 0, 1);
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
