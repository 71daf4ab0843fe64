import type { RunResult, Series, Timing } from '../results/schema.ts';
import type { RangeSeries } from './prometheus.ts';

/**
 * What a target's collector reads from Prometheus for one run, whatever the chat server:
 * the window it reads, the numbers it returns, and the helpers every collector shares.
 */

export interface CollectWindow {
  /** Unix seconds. */
  runStart: number;
  runEnd: number;
  stableStart: number;
  stableEnd: number;
}

export interface Collected {
  series: RunResult['series'];
  api: Timing[];
  store: Timing[];
  totals: RunResult['totals'];
  engineCpuPercentMax?: number;
  /** One line per missing or failed measurement, naming the component. */
  problems: string[];
  /** True when a measurement the gate needs is missing: the run cannot be judged. */
  missingEssential: boolean;
}

/** Turns a Prometheus range result into a run-result series: finite points only, t relative to the run start. */
export function toSeries(range: RangeSeries, runStart: number, unit: Series['unit']): Series | undefined {
  const t: number[] = [];
  const v: number[] = [];
  range.t.forEach((ts, i) => {
    const value = range.v[i] as number;
    const rel = Math.round((ts - runStart) * 1000) / 1000;
    if (Number.isFinite(value) && rel >= 0 && (t.length === 0 || rel > (t[t.length - 1] as number))) {
      t.push(rel);
      v.push(value);
    }
  });
  return t.length ? { unit, t, v } : undefined;
}

/** Nearest-rank percentile of finite values. */
export function percentile(values: readonly number[], p: number): number | undefined {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (!sorted.length) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
