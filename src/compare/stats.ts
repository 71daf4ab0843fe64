/**
 * The statistics behind the verdict. Everything works on the log of the ratio
 * candidate/baseline, because performance changes are multiplicative (a 5 % loss is the
 * same finding at 200 users and at 20000), and returns intervals as % change.
 */

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

/** Inverse of the standard normal CDF (Acklam's rational approximation, |error| < 1.2e-9). */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile: p must be in (0, 1), got ${p}`);
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  const poly = (k: number[], x: number) => k.reduce((acc, coef) => acc * x + coef, 0);
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return poly(c, q) / (poly(d, q) * q + 1);
  }
  if (p > 1 - low) {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    return -poly(c, q) / (poly(d, q) * q + 1);
  }
  const q = p - 0.5;
  const r = q * q;
  return (poly(a, r) * q) / (poly(b, r) * r + 1);
}

function logGamma(x: number): number {
  // Lanczos approximation, g = 7.
  const g = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
    -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  x -= 1;
  let a = g[0] as number;
  const t = x + 7.5;
  for (let i = 1; i < 9; i++) a += (g[i] as number) / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Regularized incomplete beta I_x(a, b) by Lentz's continued fraction. */
function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - incompleteBeta(1 - x, b, a);
  const front = Math.exp(Math.log(x) * a + Math.log(1 - x) * b - (logGamma(a) + logGamma(b) - logGamma(a + b))) / a;
  const tiny = 1e-300;
  let f = 1;
  let c = 1;
  let d = 0;
  for (let i = 0; i <= 400; i++) {
    const m = Math.floor(i / 2);
    let numerator: number;
    if (i === 0) numerator = 1;
    else if (i % 2 === 0) numerator = (m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m));
    else numerator = -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1));
    d = 1 + numerator * d;
    if (Math.abs(d) < tiny) d = tiny;
    d = 1 / d;
    c = 1 + numerator / c;
    if (Math.abs(c) < tiny) c = tiny;
    const cd = c * d;
    f *= cd;
    if (Math.abs(1 - cd) < 1e-12) break;
  }
  return front * (f - 1);
}

/**
 * Regularized upper incomplete gamma Q(a, x): the series for x < a + 1, Lentz's continued
 * fraction otherwise (the standard split; both converge fast on their side).
 */
function upperGammaQ(a: number, x: number): number {
  if (x <= 0) return 1;
  const logFront = a * Math.log(x) - x - logGamma(a);
  if (x < a + 1) {
    let term = 1 / a;
    let sum = term;
    for (let n = 1; n < 500 && Math.abs(term) > Math.abs(sum) * 1e-15; n++) {
      term *= x / (a + n);
      sum += term;
    }
    return 1 - sum * Math.exp(logFront);
  }
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let f = d;
  for (let i = 1; i < 500; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const cd = c * d;
    f *= cd;
    if (Math.abs(cd - 1) < 1e-15) break;
  }
  return Math.exp(logFront) * f;
}

/** P(X ≥ x) for X chi-square with `df` degrees of freedom. */
export function chiSquareSf(x: number, df: number): number {
  if (!(df > 0)) throw new RangeError(`chiSquareSf: df must be > 0, got ${df}`);
  return upperGammaQ(df / 2, x / 2);
}

/** CDF of Student's t with `df` degrees of freedom. */
export function studentTCdf(t: number, df: number): number {
  const x = df / (df + t * t);
  const tail = 0.5 * incompleteBeta(x, df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/** Quantile of Student's t, found by bisection on the CDF (deterministic, ~1e-10). */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`studentTQuantile: p must be in (0, 1), got ${p}`);
  if (!(df > 0)) throw new RangeError(`studentTQuantile: df must be > 0, got ${df}`);
  let lo = -1e3;
  let hi = 1e3;
  for (let i = 0; i < 200 && hi - lo > 1e-10; i++) {
    const mid = (lo + hi) / 2;
    if (studentTCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
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
