import { studentTQuantile } from '../compare/stats.ts';

/**
 * The cycle-mean estimate of supported users. Near the ceiling the users oscillate
 * because the health queries lag them: up while the (late) values are healthy, down
 * while they are not. With equal steps up and down the oscillation is symmetric about
 * the users where the binding query crosses its threshold, so the mean over *whole*
 * cycles estimates that point; a window of fixed length (load-test-ng's) also holds a
 * partial cycle, whose phase is random from run to run and adds its swing to the noise.
 * Each whole cycle's mean is one sample, so the estimate carries its own uncertainty
 * (a t-interval over the cycle means), which the adaptive hold stops on.
 */

export interface CycleEstimate {
  /** Time-weighted mean users over whole cycles (peak to peak). */
  supportedUsers: number;
  /** Whole cycles used. */
  cycles: number;
  /** Standard deviation of one cycle's mean, % of the estimate. */
  sdPct: number;
  /** Half-width of the 95 % t-interval of the estimate, % of it (Infinity under 2 cycles). */
  halfWidthPct: number;
  /** Seconds since start the cycles span. */
  startSec: number;
  endSec: number;
}

export interface Sample {
  tSec: number;
  users: number;
  /** Direction of the move at this step: +1 up, -1 down. */
  direction: number;
}

/**
 * Estimate from the samples of the ceiling phase. Cycles run from one peak (the last
 * step up before a step down) to the next; the first cycle after the first alert holds
 * the climb's overshoot and is skipped. Undefined until one whole cycle exists.
 */
export function cycleEstimate(samples: readonly Sample[], skipCycles = 1): CycleEstimate | undefined {
  const peaks: number[] = [];
  for (let i = 1; i < samples.length; i++) {
    if ((samples[i - 1] as Sample).direction > 0 && (samples[i] as Sample).direction < 0) peaks.push(i);
  }
  const bounds = peaks.slice(skipCycles);
  if (bounds.length < 2) return undefined;
  const means: number[] = [];
  const weights: number[] = [];
  for (let c = 0; c + 1 < bounds.length; c++) {
    const from = bounds[c] as number;
    const to = bounds[c + 1] as number;
    let area = 0;
    for (let i = from; i < to; i++) {
      const dt = (samples[i + 1] as Sample).tSec - (samples[i] as Sample).tSec;
      area += (samples[i] as Sample).users * dt;
    }
    const span = (samples[to] as Sample).tSec - (samples[from] as Sample).tSec;
    means.push(area / span);
    weights.push(span);
  }
  const total = weights.reduce((a, b) => a + b, 0);
  const mean = means.reduce((a, m, i) => a + m * (weights[i] as number), 0) / total;
  const k = means.length;
  let sd = 0;
  let halfWidth = Infinity;
  if (k >= 2) {
    sd = Math.sqrt(means.reduce((a, m) => a + (m - mean) ** 2, 0) / (k - 1));
    halfWidth = (t975(k - 1) * sd) / Math.sqrt(k);
  }
  return {
    supportedUsers: mean,
    cycles: k,
    sdPct: mean > 0 ? (100 * sd) / mean : 0,
    halfWidthPct: mean > 0 ? (100 * halfWidth) / mean : Infinity,
    startSec: (samples[bounds[0] as number] as Sample).tSec,
    endSec: (samples[bounds[bounds.length - 1] as number] as Sample).tSec,
  };
}

const t975Cache = new Map<number, number>();
/** studentTQuantile bisects its CDF; the coordinator asks at every step, so memoise. */
function t975(df: number): number {
  let t = t975Cache.get(df);
  if (t === undefined) {
    t = studentTQuantile(0.975, df);
    t975Cache.set(df, t);
  }
  return t;
}
