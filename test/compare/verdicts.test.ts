import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareRuns } from '../../src/compare/compare-runs.ts';
import { tolerancesSchema } from '../../src/config/schema.ts';
import { InputError } from '../../src/util/errors.ts';
import { renderMarkdown } from '../../src/report/markdown.ts';
import type { RunResult } from '../../src/results/schema.ts';
import { bounded, unbounded } from '../support/runs.ts';
import { loadGateConfig } from '../../src/config/load.ts';
import { loadNoiseModel } from '../../src/noise/model.ts';

const tol = tolerancesSchema.parse({});

test('A/A comparison passes over two pairs; one pair under an assumed noise asks for another', () => {
  const one = compareRuns([bounded('1.0.0'), unbounded('1.0.0', 200)], [bounded('1.1.0'), unbounded('1.1.0', 201)], tol).verdict;
  assert.equal(one.next, 'repeat');
  const { verdict } = compareRuns(
    [bounded('1.0.0'), unbounded('1.0.0', 200), bounded('1.0.0', 1), unbounded('1.0.0', 202, 1)],
    [bounded('1.1.0'), unbounded('1.1.0', 201), bounded('1.1.0', 1), unbounded('1.1.0', 201, 1)],
    tol,
  );
  assert.equal(verdict.verdict, 'pass', verdict.summary);
  assert.deepEqual(verdict.problems, []);
});

test('slower API in a bounded test fails on the API checks only', () => {
  const { verdict } = compareRuns(
    [bounded('1.0.0'), bounded('1.0.0', 1)],
    [bounded('1.1.0', 0, { apiFactor: 1.5 }), bounded('1.1.0', 1, { apiFactor: 1.5 })],
    tol,
  );
  assert.equal(verdict.verdict, 'fail');
  const failed = verdict.checks
    .filter((c) => c.verdict === 'fail')
    .map((c) => c.id)
    .sort();
  assert.deepEqual(failed, ['bounded.apiAvg', 'bounded.apiP99']);
});

test('a crashed candidate run is inconclusive with the reason, never pass', () => {
  const crashed = { ...bounded('1.1.0'), status: 'crashed' as const, problems: ['synapse exited with code 1; see its log: /tmp/x/synapse.log'] };
  const { verdict } = compareRuns([bounded('1.0.0')], [crashed], tol);
  assert.equal(verdict.verdict, 'inconclusive');
  assert.ok(verdict.problems.some((p) => p.includes('synapse exited with code 1')));
  assert.ok(verdict.checks.every((c) => c.verdict !== 'pass'));
});

test('an unbounded run that did not converge cannot pass', () => {
  const { verdict } = compareRuns(
    [unbounded('1.0.0', 200), unbounded('1.0.0', 200, 1)],
    [unbounded('1.1.0', 200, 0, { converged: false }), unbounded('1.1.0', 200, 1)],
    tol,
  );
  assert.equal(verdict.verdict, 'inconclusive');
  const users = verdict.checks.find((c) => c.id === 'unbounded.supportedUsers')!;
  assert.equal(users.verdict, 'inconclusive');
  assert.match(users.reason, /did not converge/);
});

test('a saturated load generator makes the result inconclusive', () => {
  const saturated = { ...bounded('1.1.0'), generator: { saturated: true, cpuPercentMax: 99 } };
  assert.equal(compareRuns([bounded('1.0.0')], [saturated], tol).verdict.verdict, 'inconclusive');
});

test('missing series on one side is inconclusive; on both sides it is reported as not measured', () => {
  const b = bounded('1.0.0');
  const c = bounded('1.1.0');
  const { stackInUseBytes: _s1, ...bSeries } = b.series;
  const { stackInUseBytes: _s2, heapInUseBytes: _h, ...cSeries } = c.series;
  const result = compareRuns([{ ...b, series: bSeries }], [{ ...c, series: cSeries }], tol);
  const heap = result.verdict.checks.find((x) => x.id === 'bounded.heap')!;
  assert.equal(heap.verdict, 'inconclusive');
  assert.equal(result.verdict.verdict, 'inconclusive');
  assert.deepEqual(result.tests[0]!.notMeasured, ['Stack in use (stable phase)']);
});

test('a test run on one side only is inconclusive', () => {
  const { verdict } = compareRuns([bounded('1.0.0'), unbounded('1.0.0', 200)], [bounded('1.1.0')], tol);
  assert.equal(verdict.verdict, 'inconclusive');
  assert.ok(verdict.problems.some((p) => p.includes('has no candidate runs')));
});

test('different load on the two sides is inconclusive', () => {
  const { verdict } = compareRuns([bounded('1.0.0')], [bounded('1.1.0', 0, { users: 80 })], tol);
  assert.equal(verdict.verdict, 'inconclusive');
});

test('mismatched test types are bad input', () => {
  const b = bounded('1.0.0');
  const c = { ...unbounded('1.1.0', 200), test: { ...unbounded('1.1.0', 200).test, name: 'bounded' } };
  assert.throws(
    () => compareRuns([b], [c], tol),
    (e: unknown) => e instanceof InputError && /bounded in one run and unbounded/.test(e.message),
  );
});

test('runs of two versions on one side are bad input', () => {
  assert.throws(() => compareRuns([bounded('1.0.0'), { ...bounded('1.0.1'), repeat: 1 }], [bounded('1.1.0')], tol), InputError);
});

test('runs of one side under two CPU quotas are bad input, named; a quota on one side is a setup row of the report', () => {
  const quota = (run: RunResult, cpuQuota: number): RunResult => ({ ...run, target: { ...run.target, cpuQuota } });
  assert.throws(
    () => compareRuns([unbounded('1.0.0', 200)], [quota(unbounded('1.1.0', 176), 0.88), unbounded('1.1.0', 200, 1)], tol),
    (e: unknown) =>
      e instanceof InputError &&
      /the candidate runs were measured under 2 different CPU quotas \(0\.88, none\); pass the runs of one CPU quota per side/.test(e.message),
  );
  const comparison = compareRuns([unbounded('1.0.0', 200)], [quota(unbounded('1.1.0', 176), 0.88)], tol);
  const report = renderMarkdown(comparison, [], tol.listing);
  assert.match(report, /\| CPU quota \(candidate\) \| 0\.88 of the target cores \(cgroup CPU quota\): a deliberately slowed target \|/);
  assert.doesNotMatch(report, /CPU quota \(baseline\)/);
});

test('repeats: a consistent 10% loss over three interleaved pairs fails by the sequential test, at the second pair (one pair cannot tell the loss from an uncertain noise)', () => {
  const base = [200, 206, 196];
  const { verdict } = compareRuns(
    base.map((u, i) => unbounded('1.0.0', u, i)),
    base.map((u, i) => unbounded('1.1.0', u * 0.9 * (1 + [0.004, -0.003, 0.002][i]!), i)),
    tol,
  );
  const users = verdict.checks.find((c) => c.id === 'unbounded.supportedUsers')!;
  assert.equal(users.method, 'sprt');
  assert.equal(users.verdict, 'fail');
  assert.equal(verdict.decision.pairs, 3);
  // Shown on all three pairs, the fail reached at the second.
  assert.match(users.reason, /after 3 pairs: evidence for the 9\.75% material regression \(Λ [\d.]+ ≥ [\d.]+ at pair 2\)/);
  assert.match(verdict.decision.stopReason, /crossed the fail bound after 2 pairs/);
  assert.equal(verdict.next, 'stop');
});

test('repeats: runs as noisy as their model (12 % per run) stay undecided at maxRepeats: inconclusive, with how many more pairs', () => {
  // A noise floor of 40 % implies σ = ln(1.4)/(1.96·√2) ≈ 12 % per run.
  const noisy = tolerancesSchema.parse({ supportedUsers: { tolerancePct: 5, noiseFloorPct: 40 } });
  const { verdict } = compareRuns(
    [200, 240, 170].map((u, i) => unbounded('1.0.0', u, i)),
    [190, 215, 180].map((u, i) => unbounded('1.1.0', u, i)),
    noisy,
    { maxPairs: 3 },
  );
  assert.equal(verdict.checks.find((c) => c.id === 'unbounded.supportedUsers')!.verdict, 'inconclusive');
  assert.equal(verdict.verdict, 'inconclusive');
  assert.equal(verdict.next, 'stop');
  assert.ok(verdict.decision.suggestedMorePairs! >= 1, JSON.stringify(verdict.decision));
  assert.match(verdict.decision.stopReason, /undecided at maxRepeats \(3 pairs\); about \d+ more pairs? would likely decide it/);
});

test('repeats: the same pairs with room for more are "next: repeat", and the runs model as assumed', () => {
  const { verdict } = compareRuns([unbounded('1.0.0', 200, 0)], [unbounded('1.1.0', 190, 0)], tol, { maxPairs: 3 });
  assert.equal(verdict.verdict, 'inconclusive');
  assert.equal(verdict.next, 'repeat');
  assert.equal(verdict.decision.noiseModel.kind, 'assumed');
  assert.equal(verdict.decision.suggestedMorePairs, undefined);
});

test('runs noisier than the noise model leave the gate undecided, and at maxRepeats it names both figures', async () => {
  const config = await loadGateConfig('examples/local-synapse.yml');
  const model = await loadNoiseModel('noise/local-synapse.json', config);
  const setup = { model, modelPath: '../noise/local-synapse.json', minPairs: 2, maxPairs: 3 };
  // Pair differences of 0, −2.0 % and −26.4 %: 10.4 % per run over 2 df where the model says
  // 4.25 % (these runs carry no probe, so the speed fit is not used).
  const comparison = compareRuns(
    [50, 50.5, 49.5].map((u, i) => unbounded('1.162.0', u, i)),
    [50, 49.5, 38].map((u, i) => unbounded('1.163.0', u, i)),
    config.tolerances,
    setup,
  );
  const { verdict } = comparison;
  assert.equal(verdict.verdict, 'inconclusive');
  assert.equal(verdict.next, 'stop');
  assert.equal(verdict.decision.pairs, 3);
  assert.match(
    verdict.decision.stopReason,
    /the runs were noisier than the noise model \(Supported users \(unbounded\) varied 10\.\d+% per run in its pair differences \(2 df\) against the model's 4\.25%\)/,
  );
  const users = verdict.checks.find((x) => x.id === 'unbounded.supportedUsers')!;
  assert.equal(users.verdict, 'inconclusive');
  assert.match(users.reason, /undecided between no change and the 10% material regression/);
  // The same loss with the runs as quiet as the model fails.
  const quiet = compareRuns(
    [50, 50.6, 49.8].map((u, i) => unbounded('1.162.0', u, i)),
    [44, 44.5, 43.6].map((u, i) => unbounded('1.162.0-quota', u, i)),
    config.tolerances,
    setup,
  );
  assert.equal(quiet.verdict.verdict, 'fail');
});

test("a step in the machine's speed between pairs is not noise: supported users of the A/A gate of 2026-11-25", async () => {
  const config = await loadGateConfig('examples/local-synapse.yml');
  const model = await loadNoiseModel('noise/local-synapse.json', config);
  const setup = { model, modelPath: '../noise/local-synapse.json', minPairs: 2, maxPairs: 6 };
  // /work/bench/out/aa-s7-1, in pair order: both sides a fifth faster in pair 2. The pair
  // differences (−3.8 %, +3.4 %) vary as the model says (3.64 % per run then, 4.25 % now); measured around each
  // side's mean and a line in run order (the rule before), the step read as 12.2 % and
  // stopped the gate as noisy. Now it is undecided after 2 pairs and asks for a third.
  const aa = compareRuns(
    [43.33, 51.02].map((u, i) => unbounded('1.162.0', u, i)),
    [41.71, 52.8].map((u, i) => unbounded('1.162.0', u, i)),
    config.tolerances,
    setup,
  );
  assert.equal(aa.verdict.verdict, 'inconclusive');
  assert.equal(aa.verdict.next, 'repeat');
});

test('an error rate going from zero to above the healthy level fails and reads "new (+∞)", never +0.00%', () => {
  const before = bounded('1.0.0');
  const zero = { ...before, totals: { ...before.totals, requests: 20000, errors: 0 } };
  const after = bounded('1.1.0');
  // 0 of 20000 before, 200 (1 %) after: the exact Poisson ratio decides at once; a normal
  // approximation with the 0.5 correction would have a variance of 2 and never fail.
  const errors = { ...after, totals: { ...after.totals, requests: 20000, errors: 200 } };
  const { verdict } = compareRuns([zero], [errors], tol);
  const check = verdict.checks.find((c) => c.id === 'bounded.errorRate')!;
  assert.equal(check.verdict, 'fail');
  assert.equal(check.deltaPct, null);
  assert.match(verdict.summary, /Error rate \(bounded\) new \(\+∞\)/);
  assert.doesNotMatch(verdict.summary, /\+0\.00%/);
});

test('per-handler lists skip mean changes under 1% or 2 ms, and rank by the time added', () => {
  const result = compareRuns([bounded('1.0.0')], [bounded('1.1.0', 0, { handlerFactors: { LoginRestServlet: 3, SyncRestServlet: 1.005 } })], tol);
  const worsened = result.tests[0]!.api.worsened;
  assert.equal(worsened[0]!.name, 'LoginRestServlet');
  assert.ok(worsened.every((d) => Math.abs(d.deltaPct) >= 1 && Math.abs(d.deltaMs) >= 2));
  assert.ok(!worsened.some((d) => d.name === 'SyncRestServlet'));
});

test('a baseline that reached maxUsers cannot support a pass, but a measured loss still fails', () => {
  const capped = [0, 1, 2].map((i) => unbounded('1.0.0', 400, i));
  const two = (users: number) => [0, 1, 2].map((i) => unbounded('1.1.0', users, i));
  const same = compareRuns(capped, two(400), tol).verdict;
  assert.equal(same.checks.find((c) => c.id === 'unbounded.supportedUsers')!.verdict, 'inconclusive');
  assert.match(same.checks.find((c) => c.id === 'unbounded.supportedUsers')!.reason, /reached maxUsers \(400\)/);
  const lost = compareRuns(capped, two(300), tol).verdict;
  assert.equal(lost.verdict, 'fail');
  const candidateCapped = compareRuns(
    [0, 1, 2].map((i) => unbounded('1.0.0', 300, i)),
    two(400),
    tol,
  ).verdict;
  assert.equal(candidateCapped.checks.find((c) => c.id === 'unbounded.supportedUsers')!.verdict, 'pass');
});
