import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareRuns, type CompareSetup } from '../../src/compare/compare-runs.ts';
import { tolerancesSchema } from '../../src/config/schema.ts';
import { renderMarkdown } from '../../src/report/markdown.ts';
import type { RunResult } from '../../src/results/schema.ts';
import { unbounded } from '../support/runs.ts';

const tol = tolerancesSchema.parse({});
const setup: CompareSetup = { mode: 'duet', minPairs: 1, maxPairs: 4 };
const REASON = "other work used 63 % of the bench's CPUs during the measured window (limit 25 %, bench.local.maxOutsideCpuPercent)";

/** One side's run of a duet, in the slot Thue-Morse gives it, disturbed or not. */
function duetRun(version: string, users: number, repeat: number, side: 'baseline' | 'candidate', disturbed = false): RunResult {
  const baselineInA = repeat % 3 === 0;
  const slot = (side === 'baseline') === baselineInA ? 'a' : 'b';
  return {
    ...unbounded(version, users, repeat),
    duet: { slot, cpuShare: 0.5 },
    outsideCpu: { percent: disturbed ? 63 : 2, limitPercent: 25 },
    ...(disturbed ? { disturbed: REASON } : {}),
  };
}

test('a disturbed duet whose metrics would fail the gate is judged by no check, and the verdict and report name it', () => {
  // Duet 1 ran on a busy machine and shows a quarter fewer users; duets 2 and 3, quiet, show none.
  const baseline = [duetRun('1.0.0', 60, 0, 'baseline', true), duetRun('1.0.0', 60, 1, 'baseline'), duetRun('1.0.0', 60, 2, 'baseline')];
  const candidate = [duetRun('1.1.0', 45, 0, 'candidate', true), duetRun('1.1.0', 60, 1, 'candidate'), duetRun('1.1.0', 60, 2, 'candidate')];
  // Judged as recorded, without the mark, the loss in duet 1 fails the gate...
  const strip = (runs: RunResult[]) => runs.map(({ disturbed: _d, ...r }) => r);
  assert.equal(compareRuns(strip(baseline), strip(candidate), tol, setup).verdict.verdict, 'fail');
  // ...marked disturbed, it is left out: the check sees duets 2 and 3 only.
  const comparison = compareRuns(baseline, candidate, tol, setup);
  const { verdict } = comparison;
  assert.notEqual(verdict.verdict, 'fail', verdict.summary);
  const users = verdict.checks.find((c) => c.id === 'unbounded.supportedUsers')!;
  assert.equal(users.candidate, 60);
  assert.equal(Math.abs(users.deltaPct!), 0);
  assert.deepEqual(verdict.disturbed, [`test "unbounded" duet #1: ${REASON}`]);
  assert.deepEqual(verdict.problems, []);
  // The tables are drawn from the judged runs too, so they agree with the checks.
  assert.deepEqual(
    comparison.tests[0]!.candidate.map((r) => r.repeat),
    [1, 2],
  );
  assert.match(
    renderMarkdown(comparison, [], tol.listing),
    /\*\*Not judged\*\*: one duet, run again; kept in `results\/` .* judged by no check: test "unbounded" duet #1: other work used 63 %/,
  );
});

test('a disturbed duet run again keeps its repeat: the re-run is judged, the pair is not taken for two runs of one repeat', () => {
  const baseline = [duetRun('1.0.0', 60, 0, 'baseline', true), duetRun('1.0.0', 61, 0, 'baseline'), duetRun('1.0.0', 60, 1, 'baseline')];
  const candidate = [duetRun('1.1.0', 90, 0, 'candidate', true), duetRun('1.1.0', 61, 0, 'candidate'), duetRun('1.1.0', 60, 1, 'candidate')];
  const { verdict } = compareRuns(baseline, candidate, tol, setup);
  assert.deepEqual(verdict.problems, []);
  assert.equal(Math.abs(verdict.checks.find((c) => c.id === 'unbounded.supportedUsers')!.deltaPct!), 0);
  assert.equal(verdict.disturbed?.length, 1);
});

test('a record whose every duet was disturbed is inconclusive, saying how many, even when its metrics would pass', () => {
  const baseline = [duetRun('1.0.0', 60, 0, 'baseline', true), duetRun('1.0.0', 60, 0, 'baseline', true), duetRun('1.0.0', 60, 1, 'baseline', true)];
  const candidate = [duetRun('1.1.0', 60, 0, 'candidate', true), duetRun('1.1.0', 60, 0, 'candidate', true), duetRun('1.1.0', 60, 1, 'candidate', true)];
  const { verdict } = compareRuns(baseline, candidate, tol, setup);
  assert.equal(verdict.verdict, 'inconclusive');
  assert.match(
    verdict.summary,
    /^Cannot judge: 3 of 3 duets of test "unbounded" could not be judged \(disturbed, or their sides measured over different minutes\), and no duet of it is left to judge/,
  );
  assert.equal(verdict.disturbed?.length, 3);
  assert.ok(verdict.checks.every((c) => c.verdict !== 'pass'));
  // The runs are still counted as given.
  assert.equal(verdict.baseline.runs, 3);
});
