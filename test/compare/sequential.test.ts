import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  candidateFirst,
  defaultWeights,
  gateOnRecord,
  gateWalk,
  materialLog,
  morePairs,
  probabilityFail,
  rateEvidence,
  relativeEvidence,
  runSlot,
  runSpread,
  splitBudget,
  sprtPath,
  sprtRule,
  studentLlr,
  studentLogLikelihood,
  type CheckPath,
  type CheckState,
} from '../../src/compare/sequential.ts';
import { normalQuantile } from '../../src/util/stats.ts';
import { assumedSdLog } from '../../src/noise/profile.ts';
import { tolerancesSchema } from '../../src/config/schema.ts';

const close = (actual: number, expected: number, tol: number) => assert.ok(Math.abs(actual - expected) <= tol, `expected ${expected} ± ${tol}, got ${actual}`);

// Independent values: scipy / numpy, computed once with python3.
test("Wald's bounds for a check's share of the budget", () => {
  const rule = sprtRule(0.01 / 11);
  close(rule.upper, 6.9930151229329605, 1e-12); // numpy.log(0.99 / (0.01 / 11))
  close(rule.lower, -4.6042606816052505, 1e-12); // numpy.log(0.01 / (1 - 0.01 / 11))
  close(sprtRule(0.01).upper, 4.59511985013459, 1e-12); // numpy.log(0.99 / 0.01)
});

test("the budget is split by weight and adds up to the gate's 1 %", () => {
  const rules = splitBudget([1, 0.5, 0.01, 0.01].map((weight) => ({ weight, gating: true })));
  close(
    rules.reduce((a, r) => a + r.alpha, 0),
    0.01,
    1e-15,
  );
  close(rules[0]!.alpha / rules[1]!.alpha, 2, 1e-12);
  // A context-only check is judged as one more and takes nothing from the gating checks.
  const withContext = splitBudget([
    { weight: 1, gating: true },
    { weight: 1, gating: false },
  ]);
  close(withContext[0]!.alpha, 0.01, 1e-15);
  close(withContext[1]!.alpha, 0.005, 1e-15);
  // Default weights: (σ/m)⁴ relative to the largest; rates and far-off checks keep the floor.
  const w = defaultWeights([
    { sdLog: 0.03, m: 0.1, rate: false },
    { sdLog: 0.1, m: 0.5, rate: false },
    { sdLog: 0.001, m: 0.18, rate: false },
    { sdLog: 0.08, m: 0.4, rate: true },
  ]);
  close(w[0]!, 1, 1e-15);
  close(w[1]!, (0.04 / 0.09) ** 2, 1e-12);
  assert.deepEqual(w.slice(2), [0.01, 0.01]);
});

/** Running sums of badness differences. */
const sums = (d: readonly number[], slots: readonly number[] = []) => ({
  n: d.length,
  sum: d.reduce((a, x) => a + x, 0),
  sumSq: d.reduce((a, x) => a + x * x, 0),
  sumS: slots.reduce((a, x) => a + x, 0),
  sumSD: d.reduce((a, x, i) => a + (slots[i] ?? 0) * x, 0),
});

test('Λ is the log ratio of the prior-predictive likelihoods, σ² integrated over its scaled-inverse-χ² prior', () => {
  // scipy.integrate.quad of Π norm.pdf(d_i, δ, τ) · invgamma.pdf(τ², ν₀/2, scale = ν₀·2s₀²/2) over τ²,
  // the log ratio of δ = m to δ = 0; m = −log(0.9).
  const m = -Math.log(0.9);
  const d = [0.08, 0.12, 0.05];
  const prior = { sigmaLog: 0.0305, df: 6 };
  const ratio = (x: number[], p = prior) => studentLogLikelihood(sums(x), m, p) - studentLogLikelihood(sums(x), 0, p);
  close(ratio(d.slice(0, 1)), 1.3901067141090517, 1e-9);
  close(ratio(d.slice(0, 2)), 3.9118717306810122, 1e-9);
  close(ratio(d), 3.717757704674194, 1e-9);
  close(ratio([0.01, -0.03], { sigmaLog: 0.0425, df: 24 }), -3.4228275486296766, 1e-9);
});

test('a collapse fails and a large improvement passes: the mixtures keep Λ growing beyond m, where a point alternative falls back', () => {
  const m = -Math.log(0.9);
  const prior = { sigmaLog: 0.0297, df: 24 };
  const point = (x: number[]) => studentLogLikelihood(sums(x), m, prior) - studentLogLikelihood(sums(x), 0, prior);
  // Two pairs at −40 %: the point ratio is weaker than at −20 %; the mixture is not.
  assert.ok(point([0.51, 0.51]) < point([0.22, 0.22]));
  const fail = (x: number[]) => studentLlr(sums(x), m, prior).fail;
  assert.ok(fail([0.51, 0.51]) > fail([0.22, 0.22]));
  assert.ok(fail([0.51, 0.51]) > sprtRule(0.01 / 11).upper);
  // The mixture costs ln(1/0.8) at m and at no change, no more.
  assert.ok(fail([m, m]) >= point([m, m]) + Math.log(0.8) - 1e-12);
  const pass = (x: number[]) => studentLlr(sums(x), m, prior).pass;
  assert.ok(pass([-0.5, -0.5]) < sprtRule(0.01 / 11).lower, 'a 40 % improvement passes');
  assert.ok(pass([0, 0]) <= point([0, 0]) - Math.log(0.8) + 1e-12);
});

test("every regression beyond m fails about as surely as m: the fail side's grid leaves no change between its points short of evidence", () => {
  // A low-weight check under an assumed model: a tight σ against m, the prior on 4 df.
  const m = Math.log(1.21);
  const prior = { sigmaLog: 0.01, df: 4 };
  const fail = (x: number[]) => studentLlr(sums(x), m, prior).fail;
  const atM = fail([m, m]);
  let weakest = Infinity;
  for (let k = 1; k <= 18; k += 0.01) weakest = Math.min(weakest, fail([k * m, k * m]));
  assert.ok(weakest >= 0.6 * atM, `weakest ${weakest} against ${atM} at m`);
  // Two pairs 1.5 m worse cross the fail bound of a check holding the floor share of a 5 % budget.
  assert.ok(fail([1.5 * m, 1.5 * m]) > sprtRule(0.05 * 0.01, 0.05).upper);
});

test('a spread wider than the model flattens Λ: the same mean difference is weaker evidence', () => {
  const m = -Math.log(0.9);
  const prior = { sigmaLog: 0.03, df: 6 };
  const ratio = (x: number[], p = prior) => studentLogLikelihood(sums(x), m, p) - studentLogLikelihood(sums(x), 0, p);
  const tight = ratio([0.1, 0.1, 0.1]);
  const wide = ratio([0.0, 0.2, 0.1]);
  assert.ok(tight > wide + 1, `${tight} > ${wide} + 1`);
  // With a huge prior weight the known-σ normal ratio is the limit: (m / V)(d̄ − m/2), V = 2σ²/k.
  const normal = (m / ((2 * 0.03 ** 2) / 3)) * (0.1 - m / 2);
  close(ratio([0.1, 0.1, 0.1], { sigmaLog: 0.03, df: 1e7 }), normal, 1e-4);
});

test('normal quantiles at the points the gate uses (scipy.stats.norm.ppf)', () => {
  close(normalQuantile(0.975), 1.959963984540054, 1e-8);
  close(normalQuantile(0.995), 2.5758293035489004, 1e-8);
  close(normalQuantile(0.999), 3.090232306167813, 1e-8);
  close(normalQuantile(0.9), 1.2815515655446004, 1e-8);
  close(normalQuantile(0.01 / 11 / 10), -3.743024930542592, 1e-8);
});

test("the assumed noise: the seeds' ±5 % read as the 95 % band of a two-run difference", () => {
  // numpy.log(1.05) / (scipy.stats.norm.ppf(0.975) * sqrt(2))
  close(assumedSdLog(tolerancesSchema.parse({}), 'supportedUsers'), 0.01760229076224909, 1e-12);
});

test("rates: Λ is the exact binomial likelihood ratio of the candidate's share of events", () => {
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

test('a healthy rate on both sides passes; above the healthy level on one side it is judged', () => {
  const m = Math.log(1.5);
  assert.equal(sprtPath(rateEvidence([{ events: 1, requests: 1e6 }], [{ events: 20, requests: 1e6 }], 0.025, 0, m), sprtRule(0.01)).outcome, 'pass');
  assert.equal(sprtPath(rateEvidence([{ events: 0, requests: 20000 }], [{ events: 200, requests: 20000 }], 0.025, 0, m), sprtRule(0.01 / 11)).outcome, 'fail');
});

// Every order in which a candidate's new errors can arrive: the rate is judged on all the
// counts so far at each look, so a healthy first pair can never pass the check for good.
test('a rate healthy in one pair and new errors in another fails, whichever pair the errors came in', () => {
  const m = Math.log(1.25 * 1.25);
  const rule = sprtRule(0.01 / 11);
  const none = { events: 0, requests: 20000 };
  const tenPct = { events: 2000, requests: 20000 };
  for (const [label, candidate] of [
    ['healthy, then 10 %', [none, tenPct]],
    ['10 %, then healthy', [tenPct, none]],
    ['healthy, healthy, then 10 %', [none, none, tenPct]],
  ] as const) {
    const path = sprtPath(
      rateEvidence(
        candidate.map(() => none),
        [...candidate],
        0.025,
        0.08,
        m,
      ),
      rule,
      2,
    );
    assert.equal(path.outcome, 'fail', label);
  }
  // Healthy throughout passes, at the first look and not before.
  const healthy = sprtPath(rateEvidence([none, none], [none, none], 0.025, 0.08, m), rule, 2);
  assert.deepEqual(healthy.states, ['undecided', 'pass']);
});

test('a pass never hides a later regression: a relative check that passed at pair 2 fails once the later pairs cross the fail bound', () => {
  const m = materialLog(10, 'lower');
  const rule = sprtRule(0.01);
  const prior = { sigmaLog: 0.03, df: 24 };
  const path = sprtPath(relativeEvidence([100, 100, 100, 100], [100, 100, 75, 75], 'lower', m, prior), rule, 2);
  assert.equal(path.states[1], 'pass');
  assert.equal(path.outcome, 'fail');
  // The gate, held open by another check, sees the fail.
  const open = states(['undecided', 'undecided', 'undecided', 'undecided']);
  assert.equal(gateWalk([path, open], 4, 2).outcome, 'fail');
});

const known = (sigmaLog: number) => ({ sigmaLog, df: 1e9 });

/** The badness (log) of `pairs` equal pairs at which `side` of Λ is `target`, by bisection (Λ rises with the badness). */
function badAt(target: number, side: 'llr' | 'passLlr', pairs: number, m: number, sigma: number): number {
  let lo = -1;
  let hi = 1;
  for (let i = 0; i < 200; i++) {
    const mid = (lo + hi) / 2;
    const e = relativeEvidence(Array(pairs).fill(100), Array(pairs).fill(100 * Math.exp(-mid)), 'lower', m, known(sigma))[pairs - 1]!;
    if ((e[side] ?? e.llr) < target) lo = mid;
    else hi = mid;
  }
  return lo;
}

test('either side of the fail bound: just below is undecided, just above fails; a larger share of the budget fails it sooner', () => {
  const sigma = 0.0326;
  const m = materialLog(10, 'lower');
  const rule = sprtRule(0.01 / 11);
  const at = badAt(rule.upper, 'llr', 1, m, sigma);
  const users = (bad: number, r = rule) => sprtPath(relativeEvidence([100], [100 * Math.exp(-bad)], 'lower', m, known(sigma)), r);
  assert.equal(users(at - 1e-6).outcome, 'undecided');
  assert.equal(users(at + 1e-6).outcome, 'fail');
  assert.equal(users(at - 1e-2, sprtRule(0.01 / 2)).outcome, 'fail');
  // Beyond the point alternative's own bound: the normal ratio (m/V)(d − m/2) at the bound, V = 2σ², is reached no later.
  assert.ok(at <= m / 2 + (rule.upper * 2 * sigma * sigma) / m + 1e-9);
});

test('either side of the pass bound: just above is undecided, just below passes', () => {
  const sigma = 0.0326;
  const m = materialLog(10, 'lower');
  const rule = sprtRule(0.01 / 11);
  const at = badAt(rule.lower, 'passLlr', 2, m, sigma);
  const path = (bad: number) => sprtPath(relativeEvidence([100, 100], [100 * Math.exp(-bad), 100 * Math.exp(-bad)], 'lower', m, known(sigma)), rule);
  assert.equal(path(at + 1e-6).outcome, 'undecided');
  const passed = path(at - 1e-6);
  assert.equal(passed.outcome, 'pass');
  assert.equal(passed.decidedAt, 2);
});

test('a fail holds: the gate stops there, so a later pair cannot undo it', () => {
  const m = materialLog(10, 'lower');
  const path = sprtPath(relativeEvidence([100, 100, 100], [80, 120, 120], 'lower', m, known(0.02)), sprtRule(0.01));
  assert.deepEqual(path.states, ['fail', 'fail', 'fail']);
  assert.equal(path.decidedAt, 1);
});

const states = (s: CheckState[]): CheckPath =>
  sprtPath(
    s.map((x) => ({ bad: 0, variance: 1, llr: x === 'pass' ? -99 : x === 'fail' ? 99 : 0 })),
    sprtRule(0.01),
  );

test('the gate fails at the first failing check, passes only when all have passed, and never stops before the minimum pairs', () => {
  const pass = states(['pass', 'pass', 'pass']);
  const failAt2 = states(['undecided', 'fail', 'fail']);
  const open = states(['undecided', 'undecided', 'undecided']);
  const passThenUnsure = states(['pass', 'undecided', 'undecided']);
  const passThenFail = states(['pass', 'undecided', 'fail']);
  assert.deepEqual(gateWalk([pass, failAt2], 3, 1), { outcome: 'fail', stopAt: 2 });
  assert.deepEqual(gateWalk([pass, open], 3, 1), { outcome: 'undecided', stopAt: 3 });
  assert.deepEqual(gateWalk([pass], 3, 1), { outcome: 'pass', stopAt: 1 });
  assert.deepEqual(gateWalk([pass], 3, 2), { outcome: 'pass', stopAt: 2 });
  assert.deepEqual(gateWalk([pass], 1, 2), { outcome: 'undecided', stopAt: 1 });
  // A pass holds while the evidence stays short of the fail bound; a later fail overrides it.
  assert.deepEqual(passThenUnsure.states, ['pass', 'pass', 'pass']);
  assert.deepEqual(passThenFail.states, ['pass', 'pass', 'fail']);
  assert.deepEqual(gateWalk([passThenFail, open], 3, 1), { outcome: 'fail', stopAt: 3 });
});

test('the verdict on the record: a fail in any recorded pair fails, after a pass the live loop would have stopped at', () => {
  const pass = states(['pass', 'pass', 'pass']);
  const passThenFail = states(['pass', 'undecided', 'fail']);
  const open = states(['undecided', 'undecided', 'undecided']);
  const passAt2 = states(['undecided', 'pass', 'pass']);
  // The live loop stops at pair 1, where both have passed; the record holds pair 3's fail.
  assert.deepEqual(gateWalk([pass, passThenFail], 3, 1), { outcome: 'pass', stopAt: 1 });
  assert.deepEqual(gateOnRecord([pass, passThenFail], 3, 1), { outcome: 'fail', stopAt: 3 });
  // Otherwise the record agrees with the live loop's stop.
  assert.deepEqual(gateOnRecord([pass, passAt2], 3, 1), { outcome: 'pass', stopAt: 2 });
  assert.deepEqual(gateOnRecord([pass, open], 3, 1), { outcome: 'undecided', stopAt: 3 });
  assert.deepEqual(gateOnRecord([pass], 1, 2), { outcome: 'undecided', stopAt: 1 });
  assert.deepEqual(gateOnRecord([pass], 3, 2), { outcome: 'pass', stopAt: 2 });
});

test("a side's run without a partner adds no evidence: only complete pairs are differences", () => {
  const m = materialLog(10, 'higher');
  const prior = { sigmaLog: 0.05, df: 6 };
  const e = relativeEvidence([100, 110], [100], 'higher', m, prior);
  assert.equal(e[1]!.llr, e[0]!.llr);
  close(e[1]!.bad, 0, 1e-15);
});

test('the counterbalanced order is Thue–Morse: AB, BA, BA, AB, BA, AB, AB, BA', () => {
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 6, 7].map((k) => (candidateFirst(k) ? 'BA' : 'AB')),
    ['AB', 'BA', 'BA', 'AB', 'BA', 'AB', 'AB', 'BA'],
  );
});

test("more pairs: at the midpoint Wald's (A−Λ)(Λ−B)/s², and fewer when the drift points at a bound", () => {
  const rule = sprtRule(0.01);
  const m = 0.1;
  const perPair = 0.002;
  const mid = morePairs({ bad: m / 2, variance: perPair, llr: 0 }, 0, perPair, m, rule);
  assert.equal(mid, Math.ceil((rule.upper * -rule.lower) / ((m * m) / perPair)));
  const drifting = morePairs({ bad: m, variance: perPair, llr: 0 }, 0, perPair, m, rule);
  assert.ok(drifting < mid, `${drifting} < ${mid}`);
});

test('the operating characteristic: a material loss fails more often than a change at the tolerance, which fails about as often as it passes at most; a slope error shared by all pairs lowers it', () => {
  const m = Math.log(1 / 0.9);
  const judging = { m, prior: { sigmaLog: 0.0305, df: 24 }, rule: sprtRule(0.005), minPairs: 2, maxPairs: 6 };
  const material = probabilityFail(m, judging);
  const tolerance = probabilityFail(m / 2, judging);
  const none = probabilityFail(0, judging);
  assert.ok(material >= 0.9, `material ${material}`);
  assert.ok(tolerance > 0.1 && tolerance < 0.6, `tolerance ${tolerance}`);
  assert.ok(none <= 0.005, `no change ${none}`);
  assert.equal(probabilityFail(m, { ...judging, common: 0 }), material, 'no shared error is the plain walk');
  const withSlope = probabilityFail(m, { ...judging, common: (m / 4) ** 2 });
  assert.ok(withSlope < material - 0.05, `${withSlope} < ${material} − 0.05`);
});

test('no check decides before the minimum pairs: a first pair beyond the fail bound waits for the second', () => {
  const m = materialLog(10, 'lower');
  const rule = sprtRule(0.01 / 11);
  const prior = { sigmaLog: 0.0297, df: 24 };
  const first = relativeEvidence([57.95], [35], 'lower', m, prior);
  assert.equal(sprtPath(first, rule).outcome, 'fail');
  const waited = sprtPath(first, rule, 2);
  assert.equal(waited.outcome, 'undecided');
  assert.ok(waited.llr[0]! > rule.upper);
  // A second pair that agrees fails at pair 2; one that does not leaves it open.
  assert.deepEqual(pick(sprtPath(relativeEvidence([57.95, 56], [35, 34], 'lower', m, prior), rule, 2)), { outcome: 'fail', decidedAt: 2 });
  assert.equal(sprtPath(relativeEvidence([57.95, 50], [35, 56], 'lower', m, prior), rule, 2).outcome, 'undecided');
});

const pick = (p: { outcome: string; decidedAt: number | null }) => ({ outcome: p.outcome, decidedAt: p.decidedAt });

test("run slots follow the gate's ABBA order", () => {
  assert.deepEqual(
    [0, 1, 2, 3].map((p) => [runSlot(p, 'baseline'), runSlot(p, 'candidate')]),
    [
      [0, 1],
      [3, 2],
      [5, 4],
      [6, 7],
    ],
  );
});

test("the runs' spread comes from the pair differences: a change between the sides and a step in speed between pairs do not count", () => {
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
    0.1,
    { sigmaLog: 0.036, df: 10 },
  );
  const plain = relativeEvidence(b, c, 'lower', 0.1, { sigmaLog: 0.036, df: 10 });
  for (const [i, e] of shifted.entries()) {
    close(e.bad, plain[i]!.bad, 1e-12);
    close(e.spread!.ss, plain[i]!.spread!.ss, 1e-12);
    close(e.sdLog!, plain[i]!.sdLog!, 1e-12);
    close(e.llr, plain[i]!.llr, 1e-9);
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

test("the judged noise: the prior's ν₀σ₀² pooled with the pair differences' own spread", () => {
  const sigma = 0.03;
  const b = [100, 130, 90];
  const c = [101, 95, 125];
  const spread = runSpread(b.map(Math.log), c.map(Math.log));
  const e = relativeEvidence(b, c, 'lower', 0.1, { sigmaLog: sigma, df: 5 })[2]!;
  close(e.sdLog!, Math.sqrt((5 * sigma * sigma + spread.ss) / (5 + spread.df)), 1e-12);
  close(e.variance, (2 * e.sdLog! ** 2) / 3, 1e-15);
  // Runs quieter than the model pull it down a little: the posterior, not a floor.
  assert.ok(relativeEvidence([100, 100.1, 100], [100, 100, 100.1], 'lower', 0.1, { sigmaLog: sigma, df: 5 })[2]!.sdLog! < sigma);
});

test('a duet slot prior: rᵀΣ⁻¹r with Σ = I + a·11ᵀ + c·ssᵀ, as an explicit inverse gives it', () => {
  const d = [0.05, -0.02, 0.04];
  const s = [1, -1, -1];
  const prior = { sigmaLog: 0.02, df: 6 };
  const [a, c, g0, delta] = [0.3, 2, 0.01, 0.03];
  // Σ built and inverted by hand (Gauss–Jordan on 3 × 3).
  const sigma = d.map((_, i) => d.map((__, j) => (i === j ? 1 : 0) + a + c * s[i]! * s[j]!));
  const inv = invert(sigma);
  const r = d.map((x, i) => x - g0 * s[i]! - delta);
  const q = r.reduce((acc, ri, i) => acc + ri * r.reduce((inner, rj, j) => inner + inv[i]![j]! * rj, 0), 0);
  const want = (-(prior.df + 3) / 2) * Math.log(2 * prior.df * prior.sigmaLog ** 2 + q);
  close(studentLogLikelihood(sums(d, s), delta, prior, a, { gamma0: g0, c }), want, 1e-12);
  // Without a slot prior the form is the one the sequential gate has always used.
  close(studentLogLikelihood(sums(d, s), delta, prior, a, { gamma0: 0, c: 0 }), studentLogLikelihood(sums(d), delta, prior, a), 1e-12);
});

test('a duet slot effect: known, it is taken out exactly; unknown, one duet weighs less and duets in both orientations cancel it', () => {
  const m = materialLog(10, 'lower');
  const prior = { sigmaLog: 0.0134, df: 6 };
  const loss = [0.1, 0.1, 0.1];
  // Slot a 3 % better, candidate in slots a, b, b: badness −3 %, +3 %, +3 %.
  const inA = [true, false, false];
  const biased = loss.map((x, i) => x + (inA[i] ? -0.03 : 0.03));
  const sign = inA.map((x) => (x ? 1 : -1));
  const known = studentLlr(sums(biased, sign), m, prior, 0, { gamma0: -0.03, c: 1e-9 });
  close(known.fail, studentLlr(sums(loss), m, prior).fail, 1e-6);
  // Unknown (a prior sd twice the per-duet σ): the first duet alone is weaker evidence than
  // with no slot at all, whichever way the slot leans.
  const unknown = { gamma0: 0, c: 4 };
  for (const x of [0.07, 0.13]) {
    assert.ok(studentLlr(sums([x], [1]), m, prior, 0, unknown).fail < studentLlr(sums([x]), m, prior).fail);
  }
  // Over a, b, b the estimate of the change is the loss itself, the slot's ±3 % regressed out.
  const ev = relativeEvidence(
    [100, 100, 100],
    biased.map((b) => 100 * Math.exp(-b)),
    'lower',
    m,
    prior,
    undefined,
    undefined,
    { candidateInA: inA, prior: unknown },
  );
  close(ev[2]!.bad, 0.1, 0.004);
  assert.ok(Math.abs(ev[2]!.bad - 0.1) < Math.abs(biased.reduce((x, y) => x + y, 0) / 3 - 0.1));
});

function invert(m: number[][]): number[][] {
  const n = m.length;
  const a = m.map((row, i) => [...row, ...row.map((_, j) => (i === j ? 1 : 0))]);
  for (let col = 0; col < n; col++) {
    const pivot = a[col]![col]!;
    a[col] = a[col]!.map((x) => x / pivot);
    for (let row = 0; row < n; row++) {
      if (row === col) continue;
      const f = a[row]![col]!;
      a[row] = a[row]!.map((x, j) => x - f * a[col]![j]!);
    }
  }
  return a.map((row) => row.slice(n));
}

test('the operating characteristic of a duet check takes its slot prior: an unknown slot effect costs a lone duet power, a known one is taken out', () => {
  const m = Math.log(1 / 0.9);
  const judging = { m, prior: { sigmaLog: 0.03, df: 24 }, rule: sprtRule(0.01), minPairs: 1, maxPairs: 1 };
  const plain = probabilityFail(m * 1.3, judging);
  const unknown = probabilityFail(m * 1.3, { ...judging, slot: { gamma0: 0, c: 4 } });
  assert.ok(unknown < plain - 0.05, `unknown slot effect ${unknown} < ${plain} − 0.05`);
  // A measured effect of 3 % with no spread is subtracted exactly: the walk is the plain one.
  const known = probabilityFail(m * 1.3, { ...judging, slot: { gamma0: Math.log(1.03), c: 0 } });
  assert.ok(Math.abs(known - plain) <= 0.02, `known slot effect ${known} ≈ ${plain}`);
});
