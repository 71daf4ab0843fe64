import type { Tolerances } from '../config/schema.ts';
import { HANDLER_ALPHA, MIN_CALLS_PER_RUN, type HandlerJudgement, type TimingDelta, type TimingDeltas } from '../results/comparison.ts';
import type { RunResult, Timing } from '../results/schema.ts';
import { mean, pctChange, sampleVariance, studentTCdf } from '../util/stats.ts';

/**
 * Per-handler (and per-store-method) changes, ranked by the time they add and judged one
 * by one. The runs hold, per handler, its call count, mean and p99 over the measured window;
 * the unit of replication is the baseline/candidate pair, as for the gate's own checks.
 */

/** Count-weighted mean timing per name across runs, so repeats merge into one row. */
function mergeTimings(runs: readonly RunResult[], pick: (r: RunResult) => Timing[]): Map<string, Timing> {
  const acc = new Map<string, { count: number; avg: number; p99: number; w: number }>();
  for (const run of runs) {
    for (const t of pick(run)) {
      const a = acc.get(t.name) ?? { count: 0, avg: 0, p99: 0, w: 0 };
      const w = Math.max(t.count, 1e-9);
      a.count += t.count;
      a.avg += t.avgMs * w;
      a.p99 += t.p99Ms * w;
      a.w += w;
      acc.set(t.name, a);
    }
  }
  const out = new Map<string, Timing>();
  for (const [name, a] of acc) out.set(name, { name, count: a.count, avgMs: a.avg / a.w, p99Ms: a.p99 / a.w });
  return out;
}

/**
 * The log ratio of the handler's mean, candidate over baseline, in each pair (same repeat
 * index) where both runs called it at least MIN_CALLS_PER_RUN times.
 */
function pairLogRatios(name: string, baseline: readonly RunResult[], candidate: readonly RunResult[], pick: (r: RunResult) => Timing[]): number[] {
  const ratios: number[] = [];
  for (const b of baseline) {
    const c = candidate.find((r) => r.repeat === b.repeat);
    const bt = pick(b).find((t) => t.name === name);
    const ct = c && pick(c).find((t) => t.name === name);
    if (!bt || !ct || bt.count < MIN_CALLS_PER_RUN || ct.count < MIN_CALLS_PER_RUN || !(bt.avgMs > 0) || !(ct.avgMs > 0)) continue;
    ratios.push(Math.log(ct.avgMs / bt.avgMs));
  }
  return ratios;
}

/**
 * A one-sample t-test of the pairs' log ratios against zero (two-sided): a change is
 * significant when p < HANDLER_ALPHA. One usable pair cannot be tested, and no usable
 * pair means the handler is too rare to judge.
 */
export function judgeHandler(logRatios: readonly number[]): HandlerJudgement {
  const n = logRatios.length;
  if (n === 0) return { kind: 'too-rare' };
  if (n === 1) return { kind: 'untested', n };
  const m = mean(logRatios);
  const sd = Math.sqrt(sampleVariance(logRatios));
  // Identical ratios in every pair: no spread to test against; a change is as sure as it gets.
  const p = sd === 0 ? (m === 0 ? 1 : 0) : 2 * (1 - studentTCdf(Math.abs(m) / (sd / Math.sqrt(n)), n - 1));
  return { kind: p < HANDLER_ALPHA ? 'significant' : 'not-significant', p, n };
}

/**
 * Worsened and improved handlers, ranked by the time they add per run (calls per run ×
 * change in mean), skipping mean changes under either listing threshold; handlers too rare
 * to judge go in their own list, whatever their change.
 */
export function timingDeltas(
  baseline: readonly RunResult[],
  candidate: readonly RunResult[],
  pick: (r: RunResult) => Timing[],
  listing: Tolerances['listing'],
): TimingDeltas {
  const b = mergeTimings(baseline, pick);
  const c = mergeTimings(candidate, pick);
  const runs = baseline.length + candidate.length;
  const out: TimingDeltas = { worsened: [], improved: [], rare: [] };
  for (const [name, bt] of b) {
    const ct = c.get(name);
    if (!ct || !(bt.avgMs > 0)) continue;
    const deltaMs = ct.avgMs - bt.avgMs;
    const deltaPct = pctChange(bt.avgMs, ct.avgMs);
    if (Math.abs(deltaPct) < listing.minDeltaPct || Math.abs(deltaMs) < listing.minDeltaMs) continue;
    const callsPerRun = (bt.count + ct.count) / runs;
    const judgement = judgeHandler(pairLogRatios(name, baseline, candidate, pick));
    const delta: TimingDelta = {
      name,
      callsPerRun,
      baselineMs: bt.avgMs,
      candidateMs: ct.avgMs,
      deltaMs,
      deltaPct,
      baselineP99Ms: bt.p99Ms,
      candidateP99Ms: ct.p99Ms,
      addedMsPerRun: callsPerRun * deltaMs,
      judgement,
    };
    (judgement.kind === 'too-rare' ? out.rare : deltaMs > 0 ? out.worsened : out.improved).push(delta);
  }
  const byTime = (x: TimingDelta, y: TimingDelta) => Math.abs(y.addedMsPerRun) - Math.abs(x.addedMsPerRun) || x.name.localeCompare(y.name);
  out.worsened.sort(byTime);
  out.improved.sort(byTime);
  out.rare.sort((x, y) => y.callsPerRun - x.callsPerRun || x.name.localeCompare(y.name));
  return out;
}
