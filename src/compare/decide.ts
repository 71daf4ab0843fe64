import type { CheckOutcome } from './verdict-schema.ts';
import { logRatioTInterval, mean, pctChange, poissonRateRatioInterval, type Interval } from './stats.ts';

/**
 * One metric's decision. Deltas are "candidate vs baseline" in %; `worse` says which
 * sign is a regression. Inside, everything is turned into "badness" (positive = worse)
 * so one rule serves supported users (lower is worse) and latencies (higher is worse).
 */
export interface Decision {
  deltaPct: number;
  interval: Interval | null;
  method: 'noise-floor' | 't-interval' | 'poisson-rate';
  verdict: CheckOutcome;
  reason: string;
}

export const fmtPct = (x: number): string => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(2)}%`;
const fmtInterval = (i: Interval): string => `[${fmtPct(i.low)}, ${fmtPct(i.high)}]`;

function toBad(deltaPct: number, worse: 'lower' | 'higher'): number {
  return worse === 'higher' ? deltaPct : -deltaPct;
}

function badRange(interval: Interval, worse: 'lower' | 'higher'): Interval {
  const a = toBad(interval.low, worse);
  const b = toBad(interval.high, worse);
  return { low: Math.min(a, b), high: Math.max(a, b) };
}

const direction = (worse: 'lower' | 'higher'): string => (worse === 'lower' ? 'loss' : 'increase');

/**
 * Relative metrics (supported users, latencies, CPU, memory).
 * - One run on either side: the seed reports' rule. A change within the tolerance passes;
 *   a regression beyond the tolerance fails when it is also beyond the noise floor, and is
 *   inconclusive when it is not (only possible when the noise floor exceeds the tolerance).
 * - Two or more runs per side: a t-interval on the log ratio. Pass when the whole interval
 *   is within the tolerance, fail when it lies wholly beyond it, inconclusive otherwise.
 */
export function decideRelative(
  baseline: readonly number[],
  candidate: readonly number[],
  tolerancePct: number,
  noiseFloorPct: number,
  worse: 'lower' | 'higher',
  confidence: number,
): Decision {
  const deltaPct = pctChange(mean(baseline), mean(candidate));
  const bad = toBad(deltaPct, worse);
  const tInterval = logRatioTInterval(baseline, candidate, confidence);
  if (tInterval) {
    const range = badRange(tInterval, worse);
    const conf = `${Math.round(confidence * 100)}% interval ${fmtInterval(tInterval)}`;
    if (range.high <= tolerancePct) {
      return { deltaPct, interval: tInterval, method: 't-interval', verdict: 'pass', reason: `${conf} is within the ${tolerancePct}% tolerance` };
    }
    if (range.low > tolerancePct) {
      return {
        deltaPct,
        interval: tInterval,
        method: 't-interval',
        verdict: 'fail',
        reason: `${conf} lies wholly beyond the ${tolerancePct}% tolerance for a ${direction(worse)}`,
      };
    }
    return {
      deltaPct,
      interval: tInterval,
      method: 't-interval',
      verdict: 'inconclusive',
      reason: `${conf} straddles the ${tolerancePct}% tolerance; more repeats would narrow it`,
    };
  }
  const interval = { low: deltaPct - noiseFloorPct, high: deltaPct + noiseFloorPct };
  if (bad <= tolerancePct) {
    const inNoise = Math.abs(deltaPct) <= noiseFloorPct;
    return {
      deltaPct,
      interval,
      method: 'noise-floor',
      verdict: 'pass',
      reason: inNoise
        ? `${fmtPct(deltaPct)} is inside the ±${noiseFloorPct}% run-to-run noise`
        : `${fmtPct(deltaPct)} is within the ${tolerancePct}% tolerance`,
    };
  }
  if (bad > noiseFloorPct) {
    return {
      deltaPct,
      interval,
      method: 'noise-floor',
      verdict: 'fail',
      reason: `${fmtPct(deltaPct)} is a ${direction(worse)} beyond the ${tolerancePct}% tolerance and the ±${noiseFloorPct}% noise floor`,
    };
  }
  return {
    deltaPct,
    interval,
    method: 'noise-floor',
    verdict: 'inconclusive',
    reason: `${fmtPct(deltaPct)} exceeds the ${tolerancePct}% tolerance but is inside the ±${noiseFloorPct}% noise floor of a single run; repeat the runs`,
  };
}

export interface RateCounts {
  events: number;
  requests: number;
}

/**
 * Rates per request (errors, timeouts). Healthy rates (at or below `ignoreBelowPct` of
 * requests) pass whatever their change, as the coordinator's thresholds do. Above it, the
 * Poisson interval on the rate ratio decides against the tolerance; with repeats on both
 * sides the t-interval on per-run rates is also computed and the wider of the two is used,
 * since runs vary more than counting noise alone says.
 */
export function decideRate(
  baseline: readonly RateCounts[],
  candidate: readonly RateCounts[],
  tolerancePct: number,
  ignoreBelowPct: number,
  confidence: number,
): Decision {
  const sum = (xs: readonly RateCounts[]) =>
    xs.reduce((acc, x) => ({ events: acc.events + x.events, requests: acc.requests + x.requests }), { events: 0, requests: 0 });
  const b = sum(baseline);
  const c = sum(candidate);
  const rb = b.requests ? b.events / b.requests : 0;
  const rc = c.requests ? c.events / c.requests : 0;
  const deltaPct = rb > 0 ? pctChange(rb, rc) : rc > 0 ? Number.POSITIVE_INFINITY : 0;
  let interval = poissonRateRatioInterval(b.events, b.requests, c.events, c.requests, confidence);
  let method: Decision['method'] = 'poisson-rate';
  const perRun = (xs: readonly RateCounts[]) => xs.map((x) => (x.requests ? x.events / x.requests : 0));
  const tInterval = logRatioTInterval(perRun(baseline), perRun(candidate), confidence);
  if (interval && tInterval && tInterval.high - tInterval.low > interval.high - interval.low) {
    interval = tInterval;
    method = 't-interval';
  }
  const ratePct = (r: number) => `${(r * 100).toFixed(4)}%`;
  const shownDelta = Number.isFinite(deltaPct) ? deltaPct : 0;
  if (rc * 100 <= ignoreBelowPct) {
    return {
      deltaPct: shownDelta,
      interval,
      method,
      verdict: 'pass',
      reason: `${ratePct(rc)} of requests (was ${ratePct(rb)}) is at or below the ${ignoreBelowPct}% healthy level`,
    };
  }
  if (!interval) {
    return { deltaPct: shownDelta, interval: null, method, verdict: 'inconclusive', reason: 'no requests were recorded, so no rate can be computed' };
  }
  const conf = `${Math.round(confidence * 100)}% interval on the rate change ${fmtInterval(interval)}`;
  if (interval.high <= tolerancePct) {
    return { deltaPct: shownDelta, interval, method, verdict: 'pass', reason: `${ratePct(rc)} of requests (was ${ratePct(rb)}); ${conf} is within the ${tolerancePct}% tolerance` };
  }
  if (interval.low > tolerancePct) {
    return {
      deltaPct: shownDelta,
      interval,
      method,
      verdict: 'fail',
      reason: `${ratePct(rc)} of requests (was ${ratePct(rb)}); ${conf} lies wholly above the ${tolerancePct}% tolerance`,
    };
  }
  return {
    deltaPct: shownDelta,
    interval,
    method,
    verdict: 'inconclusive',
    reason: `${ratePct(rc)} of requests (was ${ratePct(rb)}); ${conf} straddles the ${tolerancePct}% tolerance (too few events to tell)`,
  };
}
