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

/** The gate's false-fail budget at no change, over all gating checks together. */
export const GATE_FALSE_FAIL = 0.01;
/** Each check's false-pass probability at its material regression. */
export const CHECK_FALSE_PASS = 0.01;

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
}

export interface CheckPath {
  outcome: 'pass' | 'fail' | 'undecided';
  /** 1-based step at which a bound was crossed; null while undecided. */
  decidedAt: number | null;
  /** Λ after each step, up to and including the deciding one. */
  llr: number[];
}

/** The log likelihood ratio of H1 (δ = m) against H0 (δ = 0). */
export function logLikelihoodRatio(e: Evidence, m: number): number {
  return e.llr ?? (m / e.variance) * (e.bad - m / 2);
}

/** Walks the steps in pair order; the first bound crossed decides, and stays decided. */
export function sprtPath(steps: readonly Evidence[], m: number, rule: SprtRule): CheckPath {
  const llr: number[] = [];
  for (const [i, e] of steps.entries()) {
    if (e.healthy) {
      llr.push(Number.NEGATIVE_INFINITY);
      return { outcome: 'pass', decidedAt: i + 1, llr };
    }
    const l = logLikelihoodRatio(e, m);
    llr.push(l);
    if (l >= rule.upper) return { outcome: 'fail', decidedAt: i + 1, llr };
    if (l <= rule.lower) return { outcome: 'pass', decidedAt: i + 1, llr };
  }
  return { outcome: 'undecided', decidedAt: null, llr };
}

/** The check's state as the gate saw it after `step` pairs. */
export function pathAt(path: CheckPath, step: number): CheckPath {
  if (path.decidedAt !== null && path.decidedAt <= step) return path;
  return { outcome: 'undecided', decidedAt: null, llr: path.llr.slice(0, step) };
}

export interface GateStep {
  outcome: 'pass' | 'fail' | 'undecided';
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

/** Evidence after each pair for a relative metric (values in pair order, one per run). */
export function relativeEvidence(baseline: readonly number[], candidate: readonly number[], worse: 'lower' | 'higher', sigmaLog: number): Evidence[] {
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
    // Unequal counts (a side lost a run): the difference of the means, σ²(1/n_b + 1/n_c).
    out.push({ bad: sign * (sc / nc - sb / nb), variance: sigmaLog * sigmaLog * (1 / nb + 1 / nc) });
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
 * pairs (at least `minPairs`), by a seeded simulation through `sprtPath`.
 */
export function probabilityFail(sigmaLog: number, m: number, trueBad: number, rule: SprtRule, minPairs: number, maxPairs: number, trials = 2000, seed = 9): number {
  const random = seededRandom(seed);
  let fails = 0;
  for (let t = 0; t < trials; t++) {
    const b: number[] = [];
    const c: number[] = [];
    for (let k = 0; k < maxPairs; k++) {
      b.push(Math.exp(sigmaLog * gaussian(random)));
      c.push(Math.exp(trueBad + sigmaLog * gaussian(random)));
    }
    const path = sprtPath(relativeEvidence(b, c, 'higher', sigmaLog), m, rule);
    if (path.outcome === 'fail' && gateWalk([path], maxPairs, minPairs).outcome === 'fail') fails++;
  }
  return fails / trials;
}
