import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  candidateFirst,
  gateWalk,
  logLikelihoodRatio,
  materialLog,
  morePairs,
  noisierThanModel,
  probabilityFail,
  rateEvidence,
  relativeEvidence,
  runSlot,
  runSpread,
  sprtPath,
  sprtRule,
} from '../../src/compare/sequential.ts';
import { chiSquareSf, normalQuantile } from '../../src/compare/stats.ts';
import { assumedSdLog } from '../../src/noise/profile.ts';
import { tolerancesSchema } from '../../src/config/schema.ts';

const close = (actual: number, expected: number, tol: number) => assert.ok(Math.abs(actual - expected) <= tol, `expected ${expected} ± ${tol}, got ${actual}`);

// Independent values: scipy 1.17.1 / numpy, computed once (python3, 2026-11-24).
test("Wald's bounds with the 1 % budget split over 11 gating checks", () => {
  const rule = sprtRule(11);
  close(rule.alpha, 0.01 / 11, 1e-15);
  close(rule.upper, 6.9930151229329605, 1e-12); // numpy.log(0.99 / (0.01 / 11))
  close(rule.lower, -4.6042606816052505, 1e-12); // numpy.log(0.01 / (1 - 0.01 / 11))
  close(sprtRule(1).upper, 4.59511985013459, 1e-12); // numpy.log(0.99 / 0.01)
});

test('the normal log likelihood ratio equals the difference of the two normal log densities', () => {
  // scipy.stats.norm.logpdf(0.07, m, sqrt(V)) - scipy.stats.norm.logpdf(0.07, 0, sqrt(V)), m = -log(0.9), V = 2·0.03²
  close(logLikelihoodRatio({ bad: 0.07, variance: 2 * 0.03 ** 2 }, -Math.log(0.9)), 1.013787203447951, 1e-12);
});

test('normal quantiles at the points the gate uses (scipy.stats.norm.ppf)', () => {
  close(normalQuantile(0.975), 1.959963984540054, 1e-8);
  close(normalQuantile(0.995), 2.5758293035489004, 1e-8);
  close(normalQuantile(0.999), 3.090232306167813, 1e-8);
  close(normalQuantile(0.9), 1.2815515655446004, 1e-8);
  close(normalQuantile(0.01 / 11 / 10), -3.743024930542592, 1e-8);
});

test('the assumed noise: the seeds\' ±5 % read as the 95 % band of a two-run difference', () => {
  // numpy.log(1.05) / (scipy.stats.norm.ppf(0.975) * sqrt(2))
  close(assumedSdLog(tolerancesSchema.parse({}), 'supportedUsers'), 0.01760229076224909, 1e-12);
});

test('rates: Λ is the exact binomial likelihood ratio of the candidate\'s share of events', () => {
  const m = Math.log(1.5);
  // scipy.stats.binom.logpmf(40, 40, p1) - logpmf(40, 40, p0), p0 = 25000/45000, p1 = 1.5·25000/(1.5·25000 + 20000)
  const fromZero = rateEvidence([{ events: 0, requests: 20000 }], [{ events: 40, requests: 25000 }], 0.025, 0, m);
  close(fromZero[0]!.llr!, 6.413706003007174, 1e-9);
  // 5000 vs 5600 events per 1e6 requests: scipy gives -94.71703852490327 before overdispersion
  const many = rateEvidence([{ events: 5000, requests: 1e6 }], [{ events: 5600, requests: 1e6 }], 0.025, 0, m);
  close(many[0]!.llr!, -94.71703852490327, 1e-8);
  // With a model spread above counting noise, the same evidence weighs less (quasi-Poisson φ).
  const noisy = rateEvidence([{ events: 5000, requests: 1e6 }], [{ events: 5600, requests: 1e6 }], 0.025, 0.1, m);
  close(noisy[0]!.llr!, -94.71703852490327 / ((2 * 0.01) / (1 / 5000 + 1 / 5600)), 1e-8);
});

test('a healthy rate on both sides passes at once; above the healthy level on one side it is judged', () => {
  const m = Math.log(1.5);
  assert.equal(sprtPath(rateEvidence([{ events: 1, requests: 1e6 }], [{ events: 20, requests: 1e6 }], 0.025, 0, m), m, sprtRule(1)).outcome, 'pass');
  assert.equal(sprtPath(rateEvidence([{ events: 0, requests: 20000 }], [{ events: 200, requests: 20000 }], 0.025, 0, m), m, sprtRule(11)).outcome, 'fail');
});

/** The badness (log) at which one pair's Λ is exactly `target`. */
const badAt = (target: number, m: number, variance: number) => m / 2 + (target * variance) / m;

test('either side of the fail bound: just below is undecided, just above fails; with one gating check fewer it would already fail', () => {
  const sigma = 0.0326;
  const m = materialLog(10, 'lower');
  const v = 2 * sigma * sigma;
  const rule = sprtRule(11);
  const at = badAt(rule.upper, m, v);
  const users = (bad: number) => sprtPath(relativeEvidence([100], [100 * Math.exp(-bad)], 'lower', sigma), m, rule);
  assert.equal(users(at - 1e-6).outcome, 'undecided');
  assert.equal(users(at + 1e-6).outcome, 'fail');
  // Loosening the split (10 checks) moves the bound: the same evidence fails.
  assert.equal(sprtPath(relativeEvidence([100], [100 * Math.exp(-(at - 1e-4))], 'lower', sigma), m, sprtRule(10)).outcome, 'fail');
});

test('either side of the pass bound: just above is undecided, just below passes', () => {
  const sigma = 0.0326;
  const m = materialLog(10, 'lower');
  const rule = sprtRule(11);
  // Two pairs: mean badness with variance σ²(1/2 + 1/2).
  const v = sigma * sigma;
  const at = badAt(rule.lower, m, v);
  const path = (bad: number) => sprtPath(relativeEvidence([100, 100], [100 * Math.exp(-bad), 100 * Math.exp(-bad)], 'lower', sigma), m, rule);
  assert.equal(path(at + 1e-6).outcome, 'undecided');
  const passed = path(at - 1e-6);
  assert.equal(passed.outcome, 'pass');
  assert.equal(passed.decidedAt, 2);
});

test('a decided check stays decided: a later pair that would undo it is not read', () => {
  const sigma = 0.02;
  const m = materialLog(10, 'lower');
  const rule = sprtRule(1);
  const path = sprtPath(relativeEvidence([100, 100, 100], [80, 120, 120], 'lower', sigma), m, rule);
  assert.equal(path.outcome, 'fail');
  assert.equal(path.decidedAt, 1);
  assert.equal(path.llr.length, 1);
});

test('the gate fails at the first failing check, passes only when all passed, and never stops before the minimum pairs', () => {
  const pass = { outcome: 'pass' as const, decidedAt: 1, llr: [-9] };
  const failAt2 = { outcome: 'fail' as const, decidedAt: 2, llr: [0, 9] };
  const open = { outcome: 'undecided' as const, decidedAt: null, llr: [0, 0, 0] };
  assert.deepEqual(gateWalk([pass, failAt2], 3, 1), { outcome: 'fail', stopAt: 2 });
  assert.deepEqual(gateWalk([pass, open], 3, 1), { outcome: 'undecided', stopAt: 3 });
  assert.deepEqual(gateWalk([pass], 3, 1), { outcome: 'pass', stopAt: 1 });
  assert.deepEqual(gateWalk([pass], 3, 2), { outcome: 'pass', stopAt: 2 });
  assert.deepEqual(gateWalk([pass], 1, 2), { outcome: 'undecided', stopAt: 1 });
});

test('unequal counts: the difference of the means, with variance σ²(1/n_b + 1/n_c)', () => {
  const e = relativeEvidence([100, 110], [100], 'higher', 0.05);
  close(e[1]!.bad, -(Math.log(100) + Math.log(110)) / 2 + Math.log(100), 1e-12);
  close(e[1]!.variance, 0.05 ** 2 * (1 / 2 + 1), 1e-15);
});

test('the counterbalanced order is Thue–Morse: AB, BA, BA, AB, BA, AB, AB, BA', () => {
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6, 7].map((k) => (candidateFirst(k) ? 'BA' : 'AB')), ['AB', 'BA', 'BA', 'AB', 'BA', 'AB', 'AB', 'BA']);
});

test('more pairs: at the midpoint Wald\'s (A−Λ)(Λ−B)/s², and fewer when the drift points at a bound', () => {
  const rule = sprtRule(1);
  const m = 0.1;
  const perPair = 0.002;
  const mid = morePairs({ bad: m / 2, variance: perPair }, 0, perPair, m, rule);
  assert.equal(mid, Math.ceil((rule.upper * -rule.lower) / ((m * m) / perPair)));
  const drifting = morePairs({ bad: m, variance: perPair }, 0, perPair, m, rule);
  assert.ok(drifting < mid, `${drifting} < ${mid}`);
});

test('what a gate could detect keeps a speed fit\'s slope uncertainty: it does not shrink with pairs, so a material loss fails less often', () => {
  const rule = sprtRule(3);
  const m = Math.log(1 / 0.9);
  const plain = probabilityFail(0.0364, m, m, rule, 2, 6, 1000, 9);
  assert.equal(probabilityFail(0.0364, m, m, rule, 2, 6, 1000, 9, { extraVariance: 0 }), plain, 'no extra variance is the plain walk');
  // A slope error worth a quarter of the material regression on the sides' mean probe difference.
  const withSlope = probabilityFail(0.0364, m, m, rule, 2, 6, 1000, 9, { extraVariance: (m / 4) ** 2 });
  assert.ok(plain >= 0.8, `the plain walk detects the loss (${plain})`);
  assert.ok(withSlope < plain - 0.05, `${withSlope} < ${plain} − 0.05`);
});

test('no check decides before the minimum pairs: a first pair beyond the fail bound waits for the second', () => {
  const sigma = 0.0297;
  const m = materialLog(10, 'lower');
  const rule = sprtRule(11);
  // The A/A gate of 2026-11-25 00:27: 57.95 / 48.71 on its first pair, Λ 7.23 ≥ 6.99.
  const first = relativeEvidence([57.95], [48.71], 'lower', sigma);
  assert.equal(sprtPath(first, m, rule).outcome, 'fail');
  const waited = sprtPath(first, m, rule, 2);
  assert.equal(waited.outcome, 'undecided');
  assert.ok(waited.llr[0]! > rule.upper);
  // A second pair that agrees fails at pair 2; one that does not leaves it open.
  assert.deepEqual(pick(sprtPath(relativeEvidence([57.95, 56], [48.71, 47], 'lower', sigma, { df: 5 }), m, rule, 2)), { outcome: 'fail', decidedAt: 2 });
  assert.equal(sprtPath(relativeEvidence([57.95, 50], [48.71, 56], 'lower', sigma, { df: 5 }), m, rule, 2).outcome, 'undecided');
});

const pick = (p: { outcome: string; decidedAt: number | null }) => ({ outcome: p.outcome, decidedAt: p.decidedAt });

test('run slots follow the gate\'s ABBA order', () => {
  assert.deepEqual([0, 1, 2, 3].map((p) => [runSlot(p, 'baseline'), runSlot(p, 'candidate')]), [
    [0, 1],
    [3, 2],
    [5, 4],
    [6, 7],
  ]);
});

test('the runs\' spread comes from the pair differences: a change between the sides and a step in speed between pairs do not count', () => {
  // A 10 % loss, and the machine 20 % faster in the second pair and 7 % slower in the third,
  // for both sides alike: every pair difference is ln 0.9, so no spread; 3 pairs → 2 df.
  const speed = [0, Math.log(1.2), Math.log(0.93)];
  const b = speed.map((s) => 4 + s);
  const c = speed.map((s) => 4 + s + Math.log(0.9));
  const clean = runSpread(b, c);
  close(clean.ss, 0, 1e-12);
  assert.equal(clean.df, 2);
  // Noise on top: d = (0.03 − 0.01, −0.02 − 0.01, −0.01 − 0.02) + ln 0.9 = (0.02, −0.03, −0.03) + ln 0.9,
  // mean −0.01333 + ln 0.9; Σ(d − d̄)² = 0.0016667, halved (each d holds two runs' noise): 0.00083333.
  const noisy = runSpread(
    b.map((y, i) => y + [0.01, 0.01, 0.02][i]!),
    c.map((y, i) => y + [0.03, -0.02, -0.01][i]!),
  );
  close(noisy.ss, 0.00166666666667 / 2, 1e-12);
  assert.equal(noisy.df, 2);
  // Only complete pairs count: a side's extra run (its partner lost) adds nothing.
  assert.deepEqual(runSpread([1, 2, 3], [1, 2]), runSpread([1, 2], [1, 2]));
  // A run lost in the middle: with the pair indices, pair 2's runs are still paired with
  // each other (spread 0 here), not the candidate's pair 2 with the baseline's pair 3.
  // (By position, pair 1's candidate run at 5 would be set against pair 2's baseline.)
  const lost = runSpread([4, 4.2, 4.1], [3.9, 5, 4.1], { baseline: [0, 2, 3], candidate: [0, 1, 2] });
  assert.equal(lost.df, 1);
  close(lost.ss, 0, 1e-12);
  assert.ok(runSpread([4, 4.2, 4.1], [3.9, 5, 4.1]).ss > 0.1);
  assert.deepEqual(runSpread([4, 4.2], [3.9, 4.1], { baseline: [0, 2], candidate: [0, 1] }), { ss: 0, df: 0 });
  // One pair has no spread to measure.
  assert.deepEqual(runSpread([1, 2], [1]), { ss: 0, df: 0 });
});

test('the same speed offset on both runs of each pair changes no step of the evidence', () => {
  const b = [50, 52, 49, 51];
  const c = [48, 50.5, 47, 49.9];
  const speed = [1, 1.2, 0.93, 1.1];
  const shifted = relativeEvidence(
    b.map((x, i) => x * speed[i]!),
    c.map((x, i) => x * speed[i]!),
    'lower',
    0.036,
    { df: 10 },
  );
  const plain = relativeEvidence(b, c, 'lower', 0.036, { df: 10 });
  for (const [i, e] of shifted.entries()) {
    close(e.bad, plain[i]!.bad, 1e-12);
    close(e.spread!.ss, plain[i]!.spread!.ss, 1e-12);
    close(e.sdLog!, plain[i]!.sdLog!, 1e-12);
  }
});

test('a steady drift shows in the pair differences: +δ in pairs run baseline first, −δ in pairs run candidate first', () => {
  const drift = 0.03;
  const at = (pair: number, side: 'baseline' | 'candidate') => 4 + drift * runSlot(pair, side);
  // AB BA BA AB: d = +δ, −δ, −δ, +δ around a mean of 0 → Σd² / 2 = 4δ²/2.
  const b = [0, 1, 2, 3].map((p) => at(p, 'baseline'));
  const c = [0, 1, 2, 3].map((p) => at(p, 'candidate'));
  close(runSpread(b, c).ss, 2 * drift * drift, 1e-12);
  assert.equal(runSpread(b, c).df, 3);
});

test('the judged noise: never below the model, pooled with a measured one by degrees of freedom, the model alone without a prior', () => {
  const sigma = 0.03;
  const b = [100, 130, 90];
  const c = [101, 95, 125];
  const spread = runSpread(b.map(Math.log), c.map(Math.log));
  const pooled = relativeEvidence(b, c, 'lower', sigma, { df: 5 })[2]!;
  close(pooled.sdLog!, Math.sqrt((5 * sigma * sigma + spread.ss) / (5 + spread.df)), 1e-12);
  close(pooled.variance, pooled.sdLog! ** 2 * (2 / 3), 1e-15);
  assert.equal(relativeEvidence(b, c, 'lower', sigma)[2]!.sdLog, sigma);
  // Runs quieter than the model: the model's σ stands.
  assert.equal(relativeEvidence([100, 100.1, 100], [100, 100, 100.1], 'lower', sigma, { df: 5 })[2]!.sdLog, sigma);
});

test('either side of the noise check: a spread just inside the chi-square level passes, just beyond it is noisy', () => {
  const check = { sigmaLog: 0.03, alpha: 0.01 / 7 };
  // df 3: the ss at which P(χ²₃ ≥ ss/σ²) is exactly alpha, found by bisection on chiSquareSf.
  let lo = 0;
  let hi = 100;
  for (let i = 0; i < 200; i++) {
    const mid = (lo + hi) / 2;
    if (chiSquareSf(mid, 3) > check.alpha) lo = mid;
    else hi = mid;
  }
  const critical = lo * check.sigmaLog ** 2;
  const at = (ss: number) => noisierThanModel({ bad: 0, variance: 1, spread: { ss, df: 3 } }, check);
  assert.equal(at(critical * (1 - 1e-6)), false);
  assert.equal(at(critical * (1 + 1e-6)), true);
  close(lo, 15.510393343557322, 1e-6); // scipy.stats.chi2.isf(0.01 / 7, 3), scipy 1.17.1
  assert.equal(noisierThanModel({ bad: 0, variance: 1, spread: { ss: 1, df: 0 } }, check), false);
});

test('a noisy check stops the gate as noisy, unless another gating check failed first', () => {
  const pass = { outcome: 'pass' as const, decidedAt: 2, llr: [0, -9] };
  const noisy = { outcome: 'noisy' as const, decidedAt: 2, llr: [0, 1] };
  const failAt2 = { outcome: 'fail' as const, decidedAt: 2, llr: [0, 9] };
  assert.deepEqual(gateWalk([pass, noisy], 4, 2), { outcome: 'noisy', stopAt: 2 });
  assert.deepEqual(gateWalk([failAt2, noisy], 4, 2), { outcome: 'fail', stopAt: 2 });
});
