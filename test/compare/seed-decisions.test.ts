import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareRuns } from '../../src/compare/compare-runs.ts';
import { tolerancesSchema } from '../../src/config/schema.ts';
import { runResultSchema, type RunResult } from '../../src/results/schema.ts';
import { EXAMPLES, exampleRuns } from '../../scripts/make-examples.ts';

const defaults = tolerancesSchema.parse({});

function sides(dir: string): { baseline: RunResult[]; candidate: RunResult[] } {
  const example = EXAMPLES.find((e) => e.dir === dir)!;
  const runs = exampleRuns(example);
  return { baseline: runs.baseline.map((r) => runResultSchema.parse(r)), candidate: runs.candidate.map((r) => runResultSchema.parse(r)) };
}

/**
 * The seed reports hold one pair. Under an assumed noise one pair cannot settle a check
 * (the noise itself is uncertain), so these add a second pair that repeats the first, as
 * a resumed gate would if the bench measured the same again.
 */
function twoPairs(runs: readonly RunResult[]): RunResult[] {
  return [...runs, ...runs.map((r) => ({ ...r, repeat: r.repeat + 1 }))];
}

test('one seed pair under the assumed noise asks for another pair rather than judging', () => {
  const { baseline, candidate } = sides('v10.12.0-vs-v11.0.1-rc2');
  const { verdict } = compareRuns(baseline, candidate, defaults);
  assert.equal(verdict.verdict, 'inconclusive');
  assert.equal(verdict.next, 'repeat');
});

test('default tolerances reproduce the v10.12.0 → v11.0.1-rc2 decision (release went ahead)', () => {
  const { baseline, candidate } = sides('v10.12.0-vs-v11.0.1-rc2');
  const { verdict } = compareRuns(twoPairs(baseline), twoPairs(candidate), defaults);
  assert.equal(verdict.verdict, 'pass', verdict.summary);
  const users = verdict.checks.find((c) => c.id === 'postgresql-unbounded.supportedUsers')!;
  assert.equal(users.baseline, 17272);
  assert.equal(users.candidate, 17040);
  assert.ok(Math.abs(users.deltaPct! - -1.34) < 0.01);
});

test('default tolerances reproduce the v8.0.1 → v8.1.0-rc1 decision despite ±6% error counts and the MySQL stack growth', () => {
  const { baseline, candidate } = sides('v8.0.1-vs-v8.1.0-rc1');
  const { verdict } = compareRuns(twoPairs(baseline), twoPairs(candidate), defaults);
  assert.equal(verdict.verdict, 'pass', verdict.summary);
  const errors = verdict.checks.find((c) => c.id === 'mysql-unbounded.errorRate')!;
  assert.equal(errors.verdict, 'pass');
  const stack = verdict.checks.find((c) => c.id === 'mysql-bounded.stack')!;
  assert.ok(stack.deltaPct! > 6 && stack.deltaPct! < 11.2, `stack delta ${stack.deltaPct}`);
  assert.equal(stack.gating, false);
});

test('default tolerances fail a candidate that loses 10% of supported users', () => {
  const { baseline, candidate } = sides('v10.12.0-vs-v11.0.1-rc2');
  const worse = candidate.map((r) => (r.test.type === 'unbounded' ? { ...r, supportedUsers: 17272 * 0.9 } : r));
  const { verdict } = compareRuns(twoPairs(baseline), twoPairs(worse), defaults);
  assert.equal(verdict.verdict, 'fail');
  const users = verdict.checks.find((c) => c.id === 'postgresql-unbounded.supportedUsers')!;
  assert.equal(users.verdict, 'fail');
  assert.match(verdict.summary, /Supported users/);
});
