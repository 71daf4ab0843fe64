import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareRuns } from '../../src/compare/compare-runs.ts';
import { operatingAt, probabilityFail } from '../../src/compare/sequential.ts';
import { tolerancesSchema } from '../../src/config/schema.ts';
import { verdictMarkdown } from '../../src/github/markdown.ts';
import { whySentence } from '../../src/report/headline.ts';
import { renderMarkdown } from '../../src/report/markdown.ts';
import { bounded, unbounded } from '../support/runs.ts';

/**
 * A check's tolerance is the sequential test's indifference point, not where it fails: the
 * decision's own simulation (decision.detectable) says a true change of the tolerance fails
 * within maxRepeats pairs a few percent of the time and mostly ends undecided, and one of
 * the material change fails reliably. The report, the Why sentence and the check run must
 * say that, with those numbers, and never call the tolerance "the change at which it fails".
 */

const tol = tolerancesSchema.parse({});
const FALSE_CLAIM = /Fails at|at which (the gate|a gating check|it) fails|the change at which/;

function gate() {
  return compareRuns(
    [0, 1].map((i) => unbounded('1.0.0', 200, i)).concat([bounded('1.0.0'), bounded('1.0.0', 1)]),
    [0, 1].map((i) => unbounded('1.1.0', 199, i)).concat([bounded('1.1.0'), bounded('1.1.0', 1)]),
    tol,
  );
}

const pct = (p: number) => `${Math.round(p * 100)}%`;

test("at a check's tolerance the decision fails rarely and is mostly undecided; at its material change it fails reliably", () => {
  const { verdict } = gate();
  const relative = verdict.decision.detectable.filter((d) => d.failAtTolerance !== undefined);
  assert.ok(relative.length >= 3, 'relative gating checks carry the operating characteristic');
  for (const d of relative) {
    const undecided = 1 - d.failAtTolerance! - d.passAtTolerance!;
    assert.ok(d.failAtTolerance! < 0.1, `${d.metric}: fails ${d.failAtTolerance} at its tolerance`);
    assert.ok(undecided > 0.5, `${d.metric}: undecided ${undecided} at its tolerance`);
    assert.ok(d.probabilityFail! > 0.6, `${d.metric}: fails ${d.probabilityFail} at its material change`);
  }
});

test("operatingAt is probabilityFail's simulation with the passes counted too", () => {
  const judging = {
    m: Math.log(1.21),
    prior: { sigmaLog: 0.03, df: 10 },
    rule: { upper: Math.log(99), lower: Math.log(0.05), alpha: 0.01, beta: 0.05 },
    minPairs: 1,
    maxPairs: 3,
  };
  for (const bad of [0, judging.m / 2, judging.m]) {
    const o = operatingAt(bad, judging as never);
    assert.equal(o.fail, probabilityFail(bad, judging as never));
    assert.ok(o.fail + o.pass <= 1);
  }
  assert.ok(operatingAt(0, judging as never).pass > operatingAt(judging.m, judging as never).pass, 'no change passes more often than a material one');
});

test("the report's Checks table shows both lines with the decision's own chances, and never calls the tolerance where a check fails", () => {
  const c = gate();
  const report = renderMarkdown(c, [], tol.listing);
  const checks = report.slice(report.indexOf('### Checks'), report.indexOf('###', report.indexOf('### Checks') + 5));
  assert.doesNotMatch(checks, FALSE_CLAIM);
  assert.match(checks, /\| Check \| Test \| 1\.0\.0 \| 1\.1\.0 \| Delta \| Interval \| Tolerance \| Material change \| Result \|/);
  const users = c.verdict.decision.detectable.find((d) => d.metric === 'Supported users')!;
  const row = checks.split('\n').find((l) => l.startsWith('| Supported users |'))!;
  assert.ok(row.includes(`| −5% (fails ${pct(users.failAtTolerance!)}) | −9.75% (fails ${pct(users.probabilityFail!)}) |`), row);
  // The legend says what the lines mean, with the range of the gate's own chances.
  assert.match(
    checks,
    /\*\*Tolerance\*\* is where a check is as likely to fail as to pass over many pairs, not where it fails: within this gate's 3 pairs a true change of the tolerance fails \d+(–\d+)?% of the time and ends inconclusive \d+(–\d+)?%\. \*\*Material change\*\* is the change the gate is built to fail: at it a check fails \d+(–\d+)?% of the time/,
  );
  // A context check has a tolerance and no material change.
  assert.match(checks, /\| CPU per user \(stable phase\) \(context\) \|[^\n]*\| \+10% \| — \|/);
  // The statistics section shows the undecided share at the tolerance too.
  assert.match(report, /\| Tolerance \| Fails there \| Inconclusive there \| Material change \| Fails there \|/);
  assert.doesNotMatch(report, FALSE_CLAIM);
});

test('the check run shows the same two lines and legend as the report', () => {
  const c = gate();
  const text = verdictMarkdown({ verdict: c.verdict });
  assert.doesNotMatch(text, FALSE_CLAIM);
  assert.match(text, /\| Test \| Metric \| Baseline \| Candidate \| Change \| Interval \| Tolerance \| Material change \| Result \|/);
  const users = c.verdict.decision.detectable.find((d) => d.metric === 'Supported users')!;
  assert.ok(text.includes(`| −5% (fails ${pct(users.failAtTolerance!)}) | −9.75% (fails ${pct(users.probabilityFail!)}) |`));
  assert.match(text, /\*\*Tolerance\*\* is where a check is as likely to fail as to pass over many pairs, not where it fails/);
});

test('the Why sentence places a pass against the tolerance and names the material change as where it fails reliably', () => {
  const { verdict } = gate();
  assert.equal(verdict.verdict, 'pass');
  const why = whySentence(verdict);
  assert.match(
    why,
    /^Supported users in the unbounded test fell 0\.5%, well inside its 5% tolerance \(it fails reliably only near its 9\.75% material fall\), and the other \d+ gating checks also passed\.$/,
  );
  assert.doesNotMatch(why, FALSE_CLAIM);
});

test('the Why sentence of a fail says the change went past the tolerance toward, or beyond, the material change', () => {
  const c = compareRuns([bounded('1.0.0'), bounded('1.0.0', 1)], [bounded('1.1.0', 0, { apiFactor: 1.5 }), bounded('1.1.0', 1, { apiFactor: 1.5 })], tol);
  assert.equal(c.verdict.verdict, 'fail');
  const why = whySentence(c.verdict);
  assert.match(why, /^API time, (average|p99) rose \d+%, (beyond its \d+% material rise|past its \d+% tolerance toward its \d+% material rise); API time/);
  assert.doesNotMatch(why, FALSE_CLAIM);
});
