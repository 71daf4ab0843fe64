/**
 * The sequential decision: a sequential probability ratio test (Wald) on the log ratio
 * candidate/baseline, one per check, looked at after every baseline/candidate pair.
 *
 * Everything is in "badness" (log units, positive = worse). H0: no change (δ = 0) against
 * H1: the material regression (δ = m). A relative check's evidence is its pair differences
 * d_i = ln(candidate_i) − ln(baseline_i), each N(δ, 2σ²) with the per-run noise σ unknown.
 * σ² gets the noise model as a scaled-inverse-χ² prior (ν₀ = the model's degrees of freedom,
 * scale s₀² = its σ²), and Λ is the log ratio of the two prior-predictive (Student-t)
 * likelihoods of the differences:
 *   Λ = (ν₀ + k)/2 · ln[(2ν₀s₀² + Σ(d_i − 0)²) / (2ν₀s₀² + Σ(d_i − m)²)]
 * (with a small mixture of larger regressions on the fail side: see MIXTURE).
 * A bench noisier than its model widens the differences' spread, which flattens Λ, so a
 * noisy gate stays undecided instead of deciding at the wrong noise. Under H0's
 * prior-predictive law exp(Λ) is a nonnegative martingale with mean 1 (the ratio of two
 * joint densities of the sequence), so by Ville's inequality P(it ever reaches (1−β)/α) ≤ α:
 * the false-fail bound holds at whatever pair the gate stops, and the false-pass bound the
 * same way under H1. A check is judged afresh at every look: a pass is where its evidence
 * is now, never a state an early pair locks in.
 * References: A. Wald, "Sequential Tests of Statistical Hypotheses", Ann. Math. Statist.
 * 16(2), 1945 (bounds and the ASN approximation used in `morePairs`); A. Gelman et al.,
 * "Bayesian Data Analysis", 3rd ed., 2013, §3.2–3.3 (the normal model with a conjugate
 * scaled-inverse-χ² prior on σ² and its Student-t predictive); F. D. Schönbrodt et al.,
 * "Sequential hypothesis testing with Bayes factors", Psychological Methods 22(2), 2017,
 * and J. Ville, "Étude critique de la notion de collectif", 1939 (why a likelihood ratio
 * may be looked at after every pair).
 */

import { seededRandom } from '../util/random.ts';

/** The gate's false-fail budget at no change, over all gating checks together. */
const GATE_FALSE_FAIL = 0.01;
/** Each check's false-pass probability at its material regression. */
const CHECK_FALSE_PASS = 0.01;

/** One check's bounds: its share of the gate's false-fail budget and its false-pass rate. */
export interface SprtRule {
  /** False-fail probability of this check at no change. */
  alpha: number;
  beta: number;
  /** log((1−β)/α): Λ at or above it fails. */
  upper: number;
  /** log(β/(1−α)): Λ at or below it passes. */
  lower: number;
}

export function sprtRule(alpha: number, falsePass = CHECK_FALSE_PASS): SprtRule {
  return { alpha, beta: falsePass, upper: Math.log((1 - falsePass) / alpha), lower: Math.log(falsePass / (1 - alpha)) };
}

/**
 * The gate's false-fail budget split over its gating checks in proportion to their weights
 * (a weighted Bonferroni split: the gating checks' false-fail rates add up to at most the
 * budget). A context-only check is judged at the share it would have as one more.
 */
export function splitBudget(checks: readonly { weight: number; gating: boolean }[], gateFalseFail = GATE_FALSE_FAIL, falsePass = CHECK_FALSE_PASS): SprtRule[] {
  const total = checks.reduce((a, c) => a + (c.gating ? c.weight : 0), 0);
  return checks.map((c) => sprtRule((gateFalseFail * c.weight) / Math.max(c.gating ? total : total + c.weight, c.weight), falsePass));
}

/** The two error rates a gate keeps, as fractions: the config's `errorRates`, else 1 % and 1 %. */
export interface ErrorRates {
  falseFail: number;
  falsePass: number;
}

export const DEFAULT_ERROR_RATES: ErrorRates = { falseFail: GATE_FALSE_FAIL, falsePass: CHECK_FALSE_PASS };

/** A config's `errorRates` (percentages) as fractions. */
export function errorRatesOf(config: { errorRates: { falseFailPct: number; falsePassPct: number } }): ErrorRates {
  return { falseFail: config.errorRates.falseFailPct / 100, falsePass: config.errorRates.falsePassPct / 100 };
}

/** The weight a check gets when the config gives none (see defaultWeight). */
const MIN_WEIGHT = 0.01;

/**
 * A check's default share of the false-fail budget, from its noise and its material change.
 * The pairs a check needs grow with r = σ²/m² (times log(1/α)), so the budget buys pairs
 * only where evidence comes slowly: each check gets r² relative to the largest gating r²,
 * which concentrates the budget on the one or two checks that set the gate's length (with
 * r alone, the local profile's supported users failed a 10 % loss within its pairs 85 % of
 * the time in simulation; with r², 90 %, every other check still above 97 %). A check whose
 * material change is many noise widths away (heap, a healthy rate) decides in one pair at
 * any α and keeps MIN_WEIGHT.
 */
export function defaultWeights(checks: readonly { sdLog: number; m: number; rate: boolean; gating?: boolean }[]): number[] {
  const raw = checks.map((c) => (c.rate ? 0 : (c.sdLog / c.m) ** 4));
  // Relative to the largest gating share: a context-only check does not scale the others.
  const top = Math.max(...raw.filter((_, i) => checks[i]?.gating !== false), 0);
  return raw.map((r) => (top > 0 ? Math.min(1, Math.max(MIN_WEIGHT, r / top)) : 1));
}

/** The noise a relative check is judged at: the model's per-run σ and its weight. */
export interface NoisePrior {
  sigmaLog: number;
  /** The prior's degrees of freedom: the calibration's, or the assumption's stated weight. */
  df: number;
}

/** The evidence after one more pair. */
export interface Evidence {
  /** Mean badness over the judged pairs (log units): shown as the change. */
  bad: number;
  /** Its variance at the noise the evidence now implies (shown as the interval). */
  variance: number;
  /** The log likelihood ratio of a regression (δ = m or more) against no change: the fail side. */
  llr: number;
  /** The pass side's ratio (δ = m against no change or better), when it differs from `llr`. */
  passLlr?: number;
  /** Healthy rates pass, whatever their change. */
  healthy?: boolean;
  /** Per-run σ of ln(value) the evidence implies now (the prior updated by the pair differences). */
  sdLog?: number;
  /** The gate's own spread of the pair differences up to this step (runSpread). */
  spread?: Spread;
}

export type CheckState = 'pass' | 'fail' | 'undecided';

export interface CheckPath {
  /** The state after the last step. */
  outcome: CheckState;
  /** 1-based step at which the outcome was reached; null while undecided. */
  decidedAt: number | null;
  /** Λ (the fail side) after each step. */
  llr: number[];
  /** The state after each step. */
  states: CheckState[];
}

/**
 * A check's state after each step. Steps before `firstLook` (the gate's `repeats`) are not
 * looked at. From there every step is judged on all the evidence so far, whatever the check
 * showed before: a pass holds while the gate waits for other checks, but a later pair whose
 * evidence crosses the fail bound turns it into a fail, so no early pass can hide a
 * regression that shows later. Both bounds stay valid: Ville's inequality bounds the chance
 * that Λ ever crosses the fail bound under no change, and ever crosses the pass bound under
 * the material regression, whenever the gate stops.
 */
export function sprtPath(steps: readonly Evidence[], rule: SprtRule, firstLook = 1): CheckPath {
  const llr: number[] = [];
  const states: CheckState[] = [];
  for (const [i, e] of steps.entries()) {
    const l = e.healthy ? Number.NEGATIVE_INFINITY : e.llr;
    const toPass = e.healthy ? Number.NEGATIVE_INFINITY : (e.passLlr ?? e.llr);
    llr.push(l);
    const before = states[i - 1] ?? 'undecided';
    let state: CheckState = before;
    if (i + 1 >= firstLook && before !== 'fail') {
      if (l >= rule.upper) state = 'fail';
      else if (toPass <= rule.lower) state = 'pass';
    }
    states.push(state);
  }
  return pathOf(llr, states);
}

function pathOf(llr: number[], states: CheckState[]): CheckPath {
  const outcome = states[states.length - 1] ?? 'undecided';
  if (outcome === 'undecided') return { outcome, decidedAt: null, llr, states };
  return { outcome, decidedAt: states.indexOf(outcome) + 1, llr, states };
}

/** The check's state as the gate saw it after `step` pairs. */
export function pathAt(path: CheckPath, step: number): CheckPath {
  return pathOf(path.llr.slice(0, step), path.states.slice(0, step));
}

export interface GateStep {
  outcome: 'pass' | 'fail' | 'undecided';
  /** The pair count at which the gate stopped (or the last one seen). */
  stopAt: number;
}

/** The gating checks' states after `k` pairs. */
function statesAt(paths: readonly CheckPath[], k: number): CheckState[] {
  return paths.map((p) => p.states[Math.min(k, p.states.length) - 1] ?? 'undecided');
}

/**
 * The live loop's stop: the first pair, never before `minPairs`, after which any gating
 * check has failed or every one has passed. `run` adds no pair after it; `simulate` counts
 * the pairs a gate takes with it.
 */
export function gateWalk(paths: readonly CheckPath[], pairs: number, minPairs: number): GateStep {
  for (let k = Math.max(1, minPairs); k <= pairs; k++) {
    const at = statesAt(paths, k);
    if (at.includes('fail')) return { outcome: 'fail', stopAt: k };
    if (at.length && at.every((s) => s === 'pass')) return { outcome: 'pass', stopAt: k };
  }
  return { outcome: 'undecided', stopAt: pairs };
}

/**
 * The verdict on every recorded pair, which `compare` and the live loop's verdict give: a
 * fail anywhere in the record fails (stopAt: the first pair at which a check failed), even
 * after a pair at which every check had passed; otherwise a pass where every check has passed
 * by the last pair (stopAt: the first pair at which all had). Where the live loop stopped is
 * its own decision: more pairs recorded after it (a continued gate, runs judged again) are
 * judged too. Both error bounds hold: each is Ville's bound on Λ ever crossing, at any pair.
 */
export function gateOnRecord(paths: readonly CheckPath[], pairs: number, minPairs: number): GateStep {
  const first = Math.max(1, minPairs);
  let passAt: number | null = null;
  for (let k = first; k <= pairs; k++) {
    const at = statesAt(paths, k);
    if (at.includes('fail')) return { outcome: 'fail', stopAt: k };
    if (passAt === null && at.length && at.every((s) => s === 'pass')) passAt = k;
  }
  // Once every check has passed, only a fail (returned above) changes any of their states.
  return passAt !== null ? { outcome: 'pass', stopAt: passAt } : { outcome: 'undecided', stopAt: pairs };
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

/** The runs' own spread of ln(value): half the sum of squares of the pair differences around their mean, and its degrees of freedom. */
export interface Spread {
  ss: number;
  df: number;
}

/**
 * Running sums of the pair differences d (badness units) behind a relative check's
 * evidence, and of s·d and s, where s is a duet's slot orientation (+1 with the candidate in
 * slot a, −1 in slot b; 0 where slots do not apply).
 */
export interface DifferenceSums {
  n: number;
  sum: number;
  sumSq: number;
  sumS: number;
  sumSD: number;
}

export function emptySums(): DifferenceSums {
  return { n: 0, sum: 0, sumSq: 0, sumS: 0, sumSD: 0 };
}

/**
 * What is known of a duet bench's slot effect for one check: a pair difference is
 * d = δ + s·γ + noise, where γ (badness units) is how much better the metric reads in slot a
 * than in slot b for the same build. γ has a normal prior with mean `gamma0` and variance
 * c times the prior's per-pair variance 2s₀² (so that the prior stays conjugate). A small c is
 * a slot effect known from calibration; a large one an unknown effect, whose direction
 * only pairs run in both orientations can tell from the change.
 */
export interface SlotPrior {
  gamma0: number;
  c: number;
}

/**
 * ln of the prior-predictive (Student-t) likelihood of the differences at a true change δ,
 * up to a constant that is the same for every δ (see the module's doc). `common` is a share
 * of the error that every pair has alike (a speed fit's slope error), as a fraction of one
 * difference's prior variance 2s₀²: the differences are then correlated, and only their
 * mean carries it.
 */
export function studentLogLikelihood(s: DifferenceSums, delta: number, prior: NoisePrior, common = 0, slot?: SlotPrior): number {
  const q = slot ? slotQuadraticForm(s, delta, common, slot) : withinSquares(s) + (s.n / (1 + s.n * common)) * (s.sum / s.n - delta) ** 2;
  return (-(prior.df + s.n) / 2) * Math.log(2 * prior.df * prior.sigmaLog * prior.sigmaLog + q);
}

/**
 * rᵀΣ⁻¹r for the residuals r = d − δ − γ₀s, where the differences' covariance, in units of
 * one difference's variance, is Σ = I + a·11ᵀ + c·ssᵀ (a: the share every pair has alike,
 * c: the slot effect's prior). Woodbury: Σ⁻¹ = I − U(D⁻¹ + UᵀU)⁻¹Uᵀ with U = [1, s],
 * D = diag(a, c); a term whose weight is zero drops out.
 */
function slotQuadraticForm(s: DifferenceSums, delta: number, a: number, slot: SlotPrior): number {
  const g = slot.gamma0;
  // s² = 1 for every difference a slot applies to.
  const sumR = s.sum - g * s.sumS - s.n * delta;
  const sumR2 = s.sumSq - 2 * g * s.sumSD + g * g * s.n - 2 * delta * (s.sum - g * s.sumS) + s.n * delta * delta;
  const sumSR = s.sumSD - g * s.n - delta * s.sumS;
  if (slot.c <= 0 && a <= 0) return Math.max(0, sumR2);
  if (a <= 0) return Math.max(0, sumR2 - (sumSR * sumSR) / (1 / slot.c + s.n));
  if (slot.c <= 0) return Math.max(0, sumR2 - (sumR * sumR) / (1 / a + s.n));
  const m11 = 1 / a + s.n;
  const m12 = s.sumS;
  const m22 = 1 / slot.c + s.n;
  const det = m11 * m22 - m12 * m12;
  return Math.max(0, sumR2 - (m22 * sumR * sumR - 2 * m12 * sumR * sumSR + m11 * sumSR * sumSR) / det);
}

/**
 * The change the differences show once the slot effect's prior is taken out, and its
 * variance in units of one difference's: the minimum of rᵀΣ⁻¹r over δ (a quadratic in δ,
 * read off at three points).
 */
function slotEstimate(s: DifferenceSums, common: number, slot: SlotPrior): { bad: number; perUnit: number } {
  const q0 = slotQuadraticForm(s, 0, common, slot);
  const up = slotQuadraticForm(s, 1, common, slot);
  const down = slotQuadraticForm(s, -1, common, slot);
  const curvature = (up + down) / 2 - q0;
  return curvature > 0 ? { bad: (down - up) / 4 / curvature, perUnit: 1 / curvature } : { bad: s.n ? s.sum / s.n : 0, perUnit: 1 };
}

/** Σ(d − d̄)² of the differences behind these sums (0 for fewer than two). */
function withinSquares(s: DifferenceSums): number {
  return s.n ? Math.max(0, s.sumSq - (s.sum * s.sum) / s.n) : 0;
}

function addDifference(s: DifferenceSums, d: number, slotSign = 0): void {
  s.n++;
  s.sum += d;
  s.sumSq += d * d;
  s.sumS += slotSign;
  s.sumSD += slotSign * d;
}

/** The runs' own spread behind these sums: half the differences' sum of squares, on n − 1 degrees of freedom. */
function spreadOf(s: DifferenceSums): Spread {
  return s.n >= 2 ? { ss: withinSquares(s) / 2, df: s.n - 1 } : { ss: 0, df: 0 };
}

/**
 * The alternatives the fail side mixes, as multiples of m, with their weights: mostly the
 * material regression itself, and the rest spread evenly over larger ones, 1.2 times apart
 * up to about 18 m. A point alternative alone is not enough under an uncertain σ: a change
 * far beyond m fits δ = m as badly as δ = 0, so its Student-t ratio falls back towards 1 and
 * a collapse would never fail. The grid is dense because a change between two of its points
 * fits neither: with points twice apart, 1.5 m gets at most (ν₀ + k)/2 · ln 9 of Λ, so on a
 * low-weight check of an assumed model it would end inconclusive where m itself fails; at
 * 1.2 apart every change beyond m gets most of the Λ that m gets. The pass
 * side mixes no change with improvements the same way. A fixed mixture of likelihood ratios
 * is still a martingale, so Ville's bounds hold; it costs ln(1/0.8) ≈ 0.22 of Λ at δ = m or 0.
 */
const GRID_STEPS = 16;
const MIXTURE: readonly (readonly [number, number])[] = [
  [1, 0.8],
  ...Array.from({ length: GRID_STEPS }, (_, i) => [1.2 ** (i + 1), 0.2 / GRID_STEPS] as const),
];

function logSumExp(xs: readonly number[]): number {
  const top = Math.max(...xs);
  return top + Math.log(xs.reduce((a, x) => a + Math.exp(x - top), 0));
}

/** Λ for failing (the regressions against no change) and for passing (the material regression against no change or better), from these sums. */
export function studentLlr(s: DifferenceSums, m: number, prior: NoisePrior, common = 0, slot?: SlotPrior): { fail: number; pass: number } {
  if (s.n === 0) return { fail: 0, pass: 0 };
  const none = studentLogLikelihood(s, 0, prior, common, slot);
  const material = studentLogLikelihood(s, m, prior, common, slot);
  // k = 1 is δ = m on the fail side and δ = 0 on the pass side: computed once above.
  const at = (k: number, delta: number, once: number) => (k === 1 ? once : studentLogLikelihood(s, delta, prior, common, slot));
  return {
    fail: logSumExp(MIXTURE.map(([k, w]) => Math.log(w) + at(k, k * m, material))) - none,
    pass: material - logSumExp(MIXTURE.map(([k, w]) => Math.log(w) + at(k, -(k - 1) * m, none))),
  };
}

/** The per-run σ the prior and the differences imply together (the posterior's scale). */
function posteriorSdLog(s: DifferenceSums, prior: NoisePrior): number {
  const df = prior.df + Math.max(0, s.n - 1);
  return df > 0 ? Math.sqrt((prior.df * prior.sigmaLog * prior.sigmaLog + withinSquares(s) / 2) / df) : prior.sigmaLog;
}

/**
 * The spread of the runs so far, from the pair differences d = ln(candidate) − ln(baseline)
 * of the complete pairs: ss = Σ(d − d̄)² / 2 with one degree of freedom per pair after the
 * first. A real change between the sides moves every d alike and does not count; neither
 * does anything that moves both runs of a pair alike, such as the machine running faster
 * in one pair than the next. A steady drift adds +δ to the d of pairs run baseline first
 * and −δ to those run candidate first (ABBA); it is counted, because the verdict cancels it
 * only after an even number of pairs.
 * @internal The batch form of the spread the decision accumulates pair by pair, for the tests.
 */
export function runSpread(lb: readonly number[], lc: readonly number[], pairs?: RunPairs): Spread {
  const s = emptySums();
  for (const { d } of pairDifferences(lb, lc, pairs)) addDifference(s, d);
  return spreadOf(s);
}

/**
 * The complete pairs' differences lc − lb, each with the step (1-based: the larger of its
 * two runs' positions) from which both of its runs exist. Runs are paired by their pair
 * index (`pairs`, a run result's `repeat`) when given, so a run lost in the middle does not
 * pair one pair's run with the next's; by position otherwise.
 */
function pairDifferences(lb: readonly number[], lc: readonly number[], pairs?: RunPairs): { d: number; step: number; i: number }[] {
  if (!pairs) return lb.slice(0, lc.length).map((b, i) => ({ d: (lc[i] as number) - b, step: i + 1, i }));
  const cAt = new Map(lc.map((c, i) => [pairs.candidate[i] ?? i, { c, i }]));
  const out: { d: number; step: number; i: number }[] = [];
  lb.forEach((b, i) => {
    const c = cAt.get(pairs.baseline[i] ?? i);
    if (c) out.push({ d: c.c - b, step: Math.max(i, c.i) + 1, i });
  });
  return out;
}

/** A duet check's slots: per baseline run (in the values' order), whether the candidate ran in slot a beside it; and the slot effect's prior. */
export interface DuetSlots {
  candidateInA: readonly boolean[];
  prior: SlotPrior;
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
 * Evidence after each step for a relative metric (values in pair order, one per run), from
 * the complete pairs' differences. `extraVariance[k − 1]`, when given, is the variance after
 * k pairs that every pair shares, such as a speed adjustment's uncertain slope.
 */
export function relativeEvidence(
  baseline: readonly number[],
  candidate: readonly number[],
  worse: 'lower' | 'higher',
  m: number,
  prior: NoisePrior,
  pairs?: RunPairs,
  extraVariance?: readonly number[],
  slots?: DuetSlots,
): Evidence[] {
  const sign = worse === 'higher' ? 1 : -1;
  const lb = baseline.map(Math.log);
  const lc = candidate.map(Math.log);
  const diffs = pairDifferences(lb, lc, pairs);
  const steps = Math.max(lb.length, lc.length);
  const out: Evidence[] = [];
  const s = emptySums();
  const priorVar = 2 * prior.sigmaLog * prior.sigmaLog;
  let next = 0;
  for (let k = 1; k <= steps; k++) {
    for (; next < diffs.length && (diffs[next] as { step: number }).step <= k; next++) {
      const { d, i } = diffs[next] as { d: number; i: number };
      // In badness units the slot effect keeps its orientation: γ is in badness too.
      const inA = slots?.candidateInA[i];
      addDifference(s, sign * d, inA === undefined ? 0 : inA ? 1 : -1);
    }
    const extra = extraVariance?.[k - 1] ?? 0;
    const sd = posteriorSdLog(s, prior);
    const l = studentLlr(s, m, prior, extra / priorVar, slots?.prior);
    const estimate = slots && s.n ? slotEstimate(s, extra / priorVar, slots.prior) : undefined;
    out.push({
      bad: estimate ? estimate.bad : s.n ? s.sum / s.n : 0,
      variance: estimate ? 2 * sd * sd * estimate.perUnit : s.n ? (2 * sd * sd) / s.n + extra : priorVar + extra,
      llr: l.fail,
      passLlr: l.pass,
      sdLog: sd,
      spread: spreadOf(s),
    });
  }
  return out;
}

export interface RateCount {
  events: number;
  requests: number;
}

/**
 * Evidence after each pair for a rate per request (errors, timeouts), on the counts so far.
 * Rates at or below `ignoreBelowPct` on both sides are healthy and pass while they stay so.
 * Otherwise Λ is the exact Poisson likelihood ratio of "rate ratio 1+material" against
 * "ratio 1", conditioned on the total count (the candidate's share of events is binomial),
 * divided by the overdispersion φ = max(1, model variance / Poisson variance) as in a
 * quasi-Poisson fit, so runs that vary more than counting noise weigh less. A normal
 * approximation with the 0.5 continuity correction cannot do this: 0 errors before and 1000
 * after has a log ratio variance of 2 and would never fail. `bad`/`variance` (with the 0.5
 * correction) remain for the displayed interval and the more-pairs estimate.
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

/** How one relative check is judged, for its operating characteristic. */
export interface CheckJudging {
  m: number;
  prior: NoisePrior;
  rule: SprtRule;
  minPairs: number;
  maxPairs: number;
  /** Per-pair variance every pair shares (a speed fit's slope error): one draw per gate. */
  common?: number;
  /** A duet check's slot-effect prior: the slots swap in the gate's order, and the test takes γ out as the gate does. */
  slot?: SlotPrior;
}

/**
 * Probability that one check, as the only gating check, fails within maxPairs pairs (it
 * stops at its first bound) when the true change is
 * `trueBad` (log, in the bad direction) and the per-run noise is the prior's σ: a seeded
 * simulation through the same Λ and the same look rule as the gate, on running sums so that
 * thousands of gates cost milliseconds.
 */
export function probabilityFail(trueBad: number, judging: CheckJudging, trials = 1000, seed = 9): number {
  return operatingAt(trueBad, judging, trials, seed).fail;
}

/**
 * The same simulation's three outcomes within maxPairs: the share of gates that fail, that
 * pass, and (the rest) that end undecided. At a check's tolerance most end undecided: the
 * tolerance is the indifference point, which a few pairs cannot tell from either bound.
 */
export function operatingAt(trueBad: number, judging: CheckJudging, trials = 1000, seed = 9): { fail: number; pass: number } {
  const key = JSON.stringify([trueBad, judging, trials, seed]);
  const known = operating.get(key);
  if (known !== undefined) return known;
  const p = simulatedOutcomes(trueBad, judging, trials, seed);
  // The gate asks the same question after every pair, and simulate for every gate.
  if (operating.size > 10000) operating.clear();
  operating.set(key, p);
  return p;
}

const operating = new Map<string, { fail: number; pass: number }>();

function simulatedOutcomes(trueBad: number, judging: CheckJudging, trials: number, seed: number): { fail: number; pass: number } {
  const random = seededRandom(seed);
  const sdPair = Math.SQRT2 * judging.prior.sigmaLog;
  const common = judging.common ?? 0;
  const share = common / (2 * judging.prior.sigmaLog ** 2);
  let fails = 0;
  let passes = 0;
  const slot = judging.slot;
  for (let t = 0; t < trials; t++) {
    const shared = common > 0 ? Math.sqrt(common) * gaussian(random) : 0;
    const s = emptySums();
    for (let k = 1; k <= judging.maxPairs; k++) {
      // The bench's slot effect is the prior's mean: the spread around it is what costs pairs.
      const sign = slot ? (candidateFirst(k - 1) ? 1 : -1) : 0;
      addDifference(s, trueBad + sign * (slot?.gamma0 ?? 0) + shared + sdPair * gaussian(random), sign);
      if (k < judging.minPairs) continue;
      const l = studentLlr(s, judging.m, judging.prior, share, slot);
      if (l.fail >= judging.rule.upper) fails++;
      else if (l.pass <= judging.rule.lower) passes++;
      if (l.fail >= judging.rule.upper || l.pass <= judging.rule.lower) break;
    }
  }
  return { fail: fails / trials, pass: passes / trials };
}
