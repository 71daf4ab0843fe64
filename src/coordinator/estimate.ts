import { studentTQuantile } from '../util/stats.ts';

/**
 * The hold-mean estimate of supported users: the time-weighted mean of the users from the
 * moment the search settled at the ceiling (its step at the floor) to now, with a 95 %
 * batch-means interval. Near the ceiling the users wander (the health queries lag them and
 * their noise flips single steps), so neighbouring points are correlated; batches at least
 * a couple of lags long are nearly independent, and the t-interval over their means is an
 * honest uncertainty, which the adaptive hold stops on. Unlike load-test-ng's window mean,
 * it uses the whole settled hold, not its last window, and it never averages the climb.
 */

export interface HoldEstimate {
  supportedUsers: number;
  /** Whole batches used. */
  batches: number;
  /** Standard deviation of one batch's mean, % of the estimate. */
  sdPct: number;
  /** Half-width of the 95 % t-interval of the estimate, % of it (Infinity under 2 batches). */
  halfWidthPct: number;
  /** Seconds since start the batches span. */
  startSec: number;
  endSec: number;
}

export interface Sample {
  tSec: number;
  users: number;
}

/** Estimate over the whole batches of `batchSec` seconds in the samples; undefined before one. */
export function holdEstimate(samples: readonly Sample[], batchSec: number): HoldEstimate | undefined {
  const first = samples[0];
  const last = samples[samples.length - 1];
  if (!first || !last) return undefined;
  return windowEstimate(samples, first.tSec, last.tSec, batchSec);
}

/**
 * Estimate over the whole batches of `batchSec` seconds that fit in [fromSec, toSec], the
 * newest first: the oldest remainder is the part nearest the transient. The samples are a
 * step function (each value holds until the next sample); a batch takes its time-weighted mean.
 */
export function windowEstimate(samples: readonly Sample[], fromSec: number, toSec: number, batchSec: number): HoldEstimate | undefined {
  if (!samples.length || !(batchSec > 0)) return undefined;
  const batches = Math.floor((toSec - fromSec) / batchSec + 1e-9);
  if (batches < 1) return undefined;
  const startSec = toSec - batches * batchSec;
  const means: number[] = [];
  for (let b = 0; b < batches; b++) {
    const from = startSec + b * batchSec;
    means.push(timeMean(samples, from, from + batchSec));
  }
  const mean = means.reduce((a, m) => a + m, 0) / batches;
  let sd = 0;
  let halfWidth = Infinity;
  if (batches >= 2) {
    sd = Math.sqrt(means.reduce((a, m) => a + (m - mean) ** 2, 0) / (batches - 1));
    halfWidth = (t975(batches - 1) * sd) / Math.sqrt(batches);
  }
  return {
    supportedUsers: mean,
    batches,
    sdPct: mean > 0 ? (100 * sd) / mean : 0,
    halfWidthPct: mean > 0 ? (100 * halfWidth) / mean : Infinity,
    startSec,
    endSec: toSec,
  };
}

/** Mean of the step function the samples describe (each value holds until the next sample) over [from, to). */
function timeMean(samples: readonly Sample[], from: number, to: number): number {
  let area = 0;
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i] as Sample;
    const next = samples[i + 1]?.tSec ?? to;
    const a = Math.max(from, s.tSec);
    const b = Math.min(to, next);
    if (b > a) area += s.users * (b - a);
  }
  return area / (to - from);
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
