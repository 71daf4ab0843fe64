/**
 * The sequential decision: Wald's sequential probability ratio test (SPRT) on the log
 * ratio candidate/baseline, one per check, evaluated after every baseline/candidate pair.
 *
 * Everything is in "badness" (log units, positive = worse). H0: no change (δ = 0) against
 * H1: the material regression (δ = m). With the mean badness x̄ after k steps and its
 * variance V (from the noise model), the log likelihood ratio of the two normal models is
 *   Λ = (m / V) · (x̄ − m/2)
 * (for equal pairs this is (m/σ_d²)·Σ(b_i − m/2)). Λ ≥ log((1−β)/α) fails the check,
 * Λ ≤ log(β/(1−α)) passes it. Under H0, exp(Λ) is a nonnegative martingale with mean 1,
 * so by Ville's inequality P(it ever reaches (1−β)/α) ≤ α/(1−β): the false-fail bound
 * holds whenever the gate stops, which is what lets it add pairs only while undecided.
 * Reference: A. Wald, "Sequential Tests of Statistical Hypotheses", Ann. Math. Statist.
 * 16(2), 1945, §3 (bounds A, B and the ASN approximation used in `morePairs`).
 */

import { seededRandom } from '../util/random.ts';
import { chiSquareSf } from './stats.ts';

/** The gate's false-fail budget at no change, over all gating checks together. */
export const GATE_FALSE_FAIL = 0.01;
/** Each check's false-pass probability at its material regression. */
export const CHECK_FALSE_PASS = 0.01;
/**
 * The chance, over all gating relative checks, that a gate at its model's noise is
 * stopped as noisier than the model at a look (split over the checks like alpha).
 */
export const GATE_FALSE_NOISY = 0.01;
/**
 * Per-run noise below a tenth of the material regression cannot matter: a pair's
 * difference would have to be 3.5 of its standard deviations off to reach even half of
 * it. So the noise check tests against at least m/10 (heap's 0.1 % model noise tripled
 * is still nothing next to its 20 % material regression).
 */
export const NOISE_THAT_MATTERS = 10;

export interface SprtRule {
  /** False-fail probability per check: the gate budget split over the gating checks (Bonferroni). */
  alpha: number;
  beta: number;
  /** log((1−β)/α): Λ at or above it fails. */
  upper: number;
  /** log(β/(1−α)): Λ at or below it passes. */
  lower: number;
  gatingChecks: number;
}

export function sprtRule(gatingChecks: number, gateFalseFail = GATE_FALSE_FAIL, falsePass = CHECK_FALSE_PASS): SprtRule {
  const k = Math.max(1, gatingChecks);
  const alpha = gateFalseFail / k;
  return { alpha, beta: falsePass, upper: Math.log((1 - falsePass) / alpha), lower: Math.log(falsePass / (1 - alpha)), gatingChecks: k };
}

/** The evidence after one more pair: mean badness (log units) and its variance. */
export interface Evidence {
  bad: number;
  variance: number;
  /** Healthy rates pass at once, whatever their change. */
  healthy?: boolean;
  /** Λ when the normal approximation does not hold (rates: see rateEvidence). */
  llr?: number;
  /** σ of ln(value) per run this step was judged at (relative checks with a prior). */
  sdLog?: number;
  /** The gate's own spread of the pair differences up to this step (runSpread). */
  spread?: Spread;
}

export interface CheckPath {
  /** `noisy`: the runs vary more than the noise model allows, so neither bound can be trusted. */
  outcome: 'pass' | 'fail' | 'undecided' | 'noisy';
  /** 1-based step at which a bound was crossed; null while undecided. */
  decidedAt: number | null;
  /** Λ after each step, up to and including the deciding one. */
  llr: number[];
}

/** The log likelihood ratio of H1 (δ = m) against H0 (δ = 0). */
export function logLikelihoodRatio(e: Evidence, m: number): number {
  return e.llr ?? (m / e.variance) * (e.bad - m / 2);
}

/**
 * Walks the steps in pair order; the first bound crossed decides, and stays decided.
 * Steps before `firstLook` (the gate's `repeats`) are not looked at: a check cannot
 * decide before the gate may stop. Skipping looks keeps Ville's bound (it holds at any
 * stopping time).
 */
export function sprtPath(steps: readonly Evidence[], m: number, rule: SprtRule, firstLook = 1, noiseCheck?: NoiseCheck): CheckPath {
  const llr: number[] = [];
  for (const [i, e] of steps.entries()) {
    if (e.healthy) {
      llr.push(Number.NEGATIVE_INFINITY);
      return { outcome: 'pass', decidedAt: i + 1, llr };
    }
    const l = logLikelihoodRatio(e, m);
    llr.push(l);
    if (i + 1 < firstLook) continue;
    if (noiseCheck && noisierThanModel(e, noiseCheck)) return { outcome: 'noisy', decidedAt: i + 1, llr };
    if (l >= rule.upper) return { outcome: 'fail', decidedAt: i + 1, llr };
    if (l <= rule.lower) return { outcome: 'pass', decidedAt: i + 1, llr };
  }
  return { outcome: 'undecided', decidedAt: null, llr };
}

/** The model's σ and the per-check level of the test that the runs fit it. */
export interface NoiseCheck {
  sigmaLog: number;
  alpha: number;
}

/**
 * True when the gate's own spread (runSpread) rejects the model: under the model,
 * ss/σ² is chi-square with the spread's df, so a value in its upper `alpha` tail says the
 * bench is noisier today than it was calibrated, and the SPRT's error rates (worked out at
 * the model's σ) do not hold.
 */
export function noisierThanModel(e: Evidence, check: NoiseCheck): boolean {
  if (!e.spread || e.spread.df < 1) return false;
  return chiSquareSf(e.spread.ss / (check.sigmaLog * check.sigmaLog), e.spread.df) < check.alpha;
}

/** The check's state as the gate saw it after `step` pairs. */
export function pathAt(path: CheckPath, step: number): CheckPath {
  if (path.decidedAt !== null && path.decidedAt <= step) return path;
  return { outcome: 'undecided', decidedAt: null, llr: path.llr.slice(0, step) };
}

export interface GateStep {
  /** `noisy`: some gating check's runs rejected the noise model before the gate could decide. */
  outcome: 'pass' | 'fail' | 'undecided' | 'noisy';
  /** The pair count at which the gate stopped (or the last one seen). */
  stopAt: number;
}

/**
 * The gate after each pair: fail as soon as any gating check fails, pass once every
 * gating check has passed, never before `minPairs`. `run` stops there; `compare` replays
 * the same walk over the recorded pairs, so both reach the same verdict.
 */
export function gateWalk(paths: readonly CheckPath[], pairs: number, minPairs: number): GateStep {
  for (let k = Math.max(1, minPairs); k <= pairs; k++) {
    const at = paths.map((p) => pathAt(p, k));
    if (at.some((p) => p.outcome === 'fail')) return { outcome: 'fail', stopAt: k };
    // A noisy check can never pass, and more pairs at several times the modelled noise
    // would take far beyond maxRepeats: stop and say so.
    if (at.some((p) => p.outcome === 'noisy')) return { outcome: 'noisy', stopAt: k };
    if (at.length && at.every((p) => p.outcome === 'pass')) return { outcome: 'pass', stopAt: k };
  }
  return { outcome: 'undecided', stopAt: pairs };
}

/**
 * About how many more pairs would decide an undecided check: the expected exit time of
 * Λ, as Brownian motion with the drift and spread it has per pair at the current
 * estimate, from its current value to either bound (Wald's ASN approximation).
 */
export function morePairs(last: Evidence, llr: number, perPairVariance: number, m: number, rule: SprtRule): number {
  const s2 = (m * m) / perPairVariance;
  const mu = (m / perPairVariance) * (last.bad - m / 2);
  const up = rule.upper - llr;
  const down = llr - rule.lower;
  let expected: number;
  if (Math.abs(mu) * (up + down) < 1e-6 * s2) {
    expected = (up * down) / s2;
  } else {
    const width = up + down;
    const pUp = -Math.expm1((-2 * mu * down) / s2) / -Math.expm1((-2 * mu * width) / s2);
    expected = (pUp * up - (1 - pUp) * down) / mu;
  }
  return Math.max(1, Math.ceil(expected));
}

/**
 * The noise a check is judged at. From the second pair on, the gate's own runs estimate
 * the per-run spread too. The estimate pools the model's df·σ² with the runs' sum of
 * squares, as a conjugate prior would, so a model measured on many runs moves little. It
 * never goes below the model: a quiet gate keeps the calibrated error rates, a noisy one
 * is judged at the noise it shows.
 */
export interface NoisePrior {
  /** The model's degrees of freedom behind σ (> 0: only a measured σ has a weight). */
  df: number;
}

/** The runs' own spread of ln(value): half the sum of squares of the pair differences around their mean, and its degrees of freedom. */
export interface Spread {
  ss: number;
  df: number;
}

/**
 * The spread of the runs so far, from the pair differences d = ln(candidate) − ln(baseline)
 * of the complete pairs: ss = Σ(d − d̄)² / 2 with one degree of freedom per pair after the
 * first. Under the model each d has variance 2σ², so ss/σ² is chi-square on k − 1 df.
 * A real change between the sides moves every d alike and does not count; neither does
 * anything that moves both runs of a pair alike, such as the machine running faster in
 * one pair than the next. That is also all the verdict sees (with equal counts): it is built
 * from the same differences, so this measures the noise the SPRT's error rates rest on.
 * (A fit of each side's mean and one line in run order, used before, counted a step in
 * the machine's speed between pairs as noise and stopped A/A gates as noisy.) A steady
 * drift adds +δ to the d of pairs run baseline first and −δ to those run candidate first
 * (ABBA); it is counted, because the verdict cancels it only after an even number of pairs.
 * Runs are paired by their pair index (`pairs`, a run result's `repeat`) when given, so a
 * run lost in the middle does not pair the next pair's run with this one's; by position
 * otherwise.
 */
export function runSpread(lb: readonly number[], lc: readonly number[], pairs?: RunPairs): Spread {
  const pairOf = (side: 'baseline' | 'candidate', i: number) => pairs?.[side][i] ?? i;
  const cAt = new Map(lc.map((c, i) => [pairOf('candidate', i), c]));
  const d: number[] = [];
  lb.forEach((b, i) => {
    const c = cAt.get(pairOf('baseline', i));
    if (c !== undefined) d.push(c - b);
  });
  const k = d.length;
  if (k < 2) return { ss: 0, df: 0 };
  const mean = d.reduce((a, x) => a + x, 0) / k;
  return { ss: d.reduce((a, x) => a + (x - mean) ** 2, 0) / 2, df: k - 1 };
}

/** Position of a side's run of pair `pair` (0-based) in the gate's run order. */
export function runSlot(pair: number, side: 'baseline' | 'candidate'): number {
  const first = candidateFirst(pair) ? 'candidate' : 'baseline';
  return 2 * pair + (side === first ? 0 : 1);
}

/** The pair index of each side's values (a run result's `repeat`), in the values' order. */
export interface RunPairs {
  baseline: readonly number[];
  candidate: readonly number[];
}

/**
 * Evidence after each pair for a relative metric (values in pair order, one per run).
 * `extraVariance[k − 1]`, when given, is added to the variance after k pairs: the part of
 * the error common to all pairs, such as a speed adjustment's uncertain slope.
 */
export function relativeEvidence(
  baseline: readonly number[],
  candidate: readonly number[],
  worse: 'lower' | 'higher',
  sigmaLog: number,
  prior?: NoisePrior,
  pairs?: RunPairs,
  extraVariance?: readonly number[],
): Evidence[] {
  const sign = worse === 'higher' ? 1 : -1;
  const lb = baseline.map(Math.log);
  const lc = candidate.map(Math.log);
  const steps = Math.max(lb.length, lc.length);
  const out: Evidence[] = [];
  let sb = 0;
  let sc = 0;
  for (let k = 1; k <= steps; k++) {
    const nb = Math.min(k, lb.length);
    const nc = Math.min(k, lc.length);
    if (k <= lb.length) sb += lb[k - 1] as number;
    if (k <= lc.length) sc += lc[k - 1] as number;
    const spread = runSpread(lb.slice(0, nb), lc.slice(0, nc), pairs);
    let sd = sigmaLog;
    if (prior && spread.df > 0) {
      const pooled = (prior.df * sigmaLog * sigmaLog + spread.ss) / (prior.df + spread.df);
      sd = Math.sqrt(Math.max(sigmaLog * sigmaLog, pooled));
    }
    // Unequal counts (a side lost a run): the difference of the means, σ²(1/n_b + 1/n_c).
    out.push({ bad: sign * (sc / nc - sb / nb), variance: sd * sd * (1 / nb + 1 / nc) + (extraVariance?.[k - 1] ?? 0), sdLog: sd, spread });
  }
  return out;
}

export interface RateCount {
  events: number;
  requests: number;
}

/**
 * Evidence after each pair for a rate per request (errors, timeouts). Rates at or below
 * `ignoreBelowPct` on both sides are healthy and pass at once. Otherwise Λ is the exact
 * Poisson likelihood ratio of "rate ratio 1+material" against "ratio 1", conditioned on
 * the total count (the candidate's share of events is binomial), divided by the
 * overdispersion φ = max(1, model variance / Poisson variance) as in a quasi-Poisson fit,
 * so runs that vary more than counting noise weigh less. A normal approximation with
 * the 0.5 continuity correction cannot do this: 0 errors before and 1000 after has a log
 * ratio variance of 2 and would never fail. `bad`/`variance` (with the 0.5 correction)
 * remain for the displayed interval and the more-pairs estimate.
 */
export function rateEvidence(baseline: readonly RateCount[], candidate: readonly RateCount[], ignoreBelowPct: number, sigmaLog: number, m: number): Evidence[] {
  const steps = Math.max(baseline.length, candidate.length);
  const out: Evidence[] = [];
  const b = { events: 0, requests: 0 };
  const c = { events: 0, requests: 0 };
  for (let k = 1; k <= steps; k++) {
    const nb = Math.min(k, baseline.length);
    const nc = Math.min(k, candidate.length);
    if (k <= baseline.length) add(b, baseline[k - 1] as RateCount);
    if (k <= candidate.length) add(c, candidate[k - 1] as RateCount);
    const rb = b.requests ? (100 * b.events) / b.requests : 0;
    const rc = c.requests ? (100 * c.events) / c.requests : 0;
    const eb = b.events > 0 ? b.events : 0.5;
    const ec = c.events > 0 ? c.events : 0.5;
    const bad = Math.log(ec / c.requests) - Math.log(eb / b.requests);
    const poisson = 1 / eb + 1 / ec;
    const model = sigmaLog * sigmaLog * (1 / nb + 1 / nc);
    const phi = Math.max(1, model / poisson);
    const p0 = c.requests / (c.requests + b.requests);
    const r1 = Math.exp(m);
    const p1 = (r1 * c.requests) / (r1 * c.requests + b.requests);
    const llr = (c.events * Math.log(p1 / p0) + b.events * Math.log((1 - p1) / (1 - p0))) / phi;
    out.push({ bad, variance: Math.max(model, poisson), healthy: rb <= ignoreBelowPct && rc <= ignoreBelowPct, llr });
  }
  return out;
}

function add(acc: RateCount, x: RateCount): void {
  acc.events += x.events;
  acc.requests += x.requests;
}

/** m for a material regression of `materialPct` in the bad direction. */
export function materialLog(materialPct: number, worse: 'lower' | 'higher'): number {
  return worse === 'higher' ? Math.log1p(materialPct / 100) : -Math.log1p(-Math.min(materialPct, 99.9) / 100);
}

/** The ABBA BAAB… order (Thue–Morse): pair k runs the candidate first when the parity of k's set bits is odd. */
export function candidateFirst(pair: number): boolean {
  let bits = 0;
  for (let k = pair; k > 0; k >>= 1) bits += k & 1;
  return bits % 2 === 1;
}

/** Standard normal draw (Box–Muller) from a uniform source. */
export function gaussian(random: () => number): number {
  const u = 1 - random();
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/**
 * Probability that one check fails at a true change of `materialPct` within `maxPairs`
 * pairs (at least `minPairs`), by a seeded simulation through `sprtPath`, judged as the
 * gate judges it (the prior and the noise check, when given).
 */
export function probabilityFail(
  sigmaLog: number,
  m: number,
  trueBad: number,
  rule: SprtRule,
  minPairs: number,
  maxPairs: number,
  trials = 2000,
  seed = 9,
  judged: { prior?: NoisePrior; noiseCheck?: NoiseCheck; extraVariance?: number } = {},
): number {
  const random = seededRandom(seed);
  const extra = judged.extraVariance ?? 0;
  const extraVariance = extra > 0 ? Array.from({ length: maxPairs }, () => extra) : undefined;
  let fails = 0;
  for (let t = 0; t < trials; t++) {
    const b: number[] = [];
    const c: number[] = [];
    // A speed fit's slope error moves every pair of a gate alike: one draw per trial.
    const shared = extraVariance ? Math.sqrt(extra) * gaussian(random) : 0;
    for (let k = 0; k < maxPairs; k++) {
      b.push(Math.exp(sigmaLog * gaussian(random)));
      c.push(Math.exp(trueBad + shared + sigmaLog * gaussian(random)));
    }
    const path = sprtPath(relativeEvidence(b, c, 'higher', sigmaLog, judged.prior, undefined, extraVariance), m, rule, minPairs, judged.noiseCheck);
    if (path.outcome === 'fail' && gateWalk([path], maxPairs, minPairs).outcome === 'fail') fails++;
  }
  return fails / trials;
}
