import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { compareSetup } from '../../src/compare/compare-and-report.ts';
import { compareRuns } from '../../src/compare/compare-runs.ts';
import { loadGateConfig } from '../../src/config/load.ts';
import { tolerancesSchema } from '../../src/config/schema.ts';
import { verdictMarkdown } from '../../src/github/markdown.ts';
import { nextStep, whySentence } from '../../src/report/headline.ts';
import { renderMarkdown } from '../../src/report/markdown.ts';
import type { Comparison } from '../../src/results/comparison.ts';
import { loadRunResult } from '../../src/results/load.ts';
import { bounded, unbounded } from '../support/runs.ts';

const tol = tolerancesSchema.parse({});
/** What the first screen must not show: the test statistic, the rule's name, noise symbols, error budgets. */
const STATISTICS = /Λ|SPRT|sequential probability ratio|σ|false-fail|Student-t/i;

/** A recorded gate's runs re-judged as `compare` judges them, with its profile's config. */
async function sample(results: string, configFile: string): Promise<Comparison> {
  const files = (await readdir(results)).sort();
  const load = (prefix: string) => Promise.all(files.filter((f) => f.startsWith(prefix)).map((f) => loadRunResult(join(results, f))));
  const config = await loadGateConfig(configFile);
  return compareRuns(await load('baseline-'), await load('candidate-'), config.tolerances, await compareSetup({ config, configFile }));
}

const firstScreen = (text: string, lines = 25) => text.split('\n').slice(0, lines).join('\n');

test('a recorded duet gate (a pass) opens with the verdict, why in plain words and what to do, with no statistics', async () => {
  const c = await sample('test/fixtures/local-duet-2-pairs/results', 'examples/local-synapse-duet.yml');
  assert.equal(c.verdict.verdict, 'pass');
  const report = renderMarkdown(c, [], tol.listing);
  const top = firstScreen(report);
  assert.match(top, /^\*\*Verdict: ✅ PASS\*\*$/m);
  assert.match(
    top,
    /^\*\*Why\*\*: Supported users in the unbounded test fell 0\.16%, well inside its 5% tolerance \(it fails reliably only near its 10% material fall\), and the other 10 gating checks also passed\.$/m,
  );
  assert.match(top, /^\*\*What to do next\*\*: Nothing: proceed with the release\.$/m);
  assert.doesNotMatch(top, STATISTICS);
  // The statistics are further down, under their own heading, after the results.
  const stats = report.indexOf('## How the gate decided (statistics)');
  assert.ok(stats > report.indexOf('## Results'), 'statistics after the results');
  assert.match(report.slice(stats), /sequential probability ratio test/);
  assert.match(report, /\| Check \| Test \| 1\.162\.0 \| 1\.163\.2 \| Delta \| Interval \| Tolerance \| Material change \| Result \|/);
});

test('the sequential sample (inconclusive): the first screen names the undecided checks and the next step, with no Λ and no "Watch" for a context check that did not move', async () => {
  const c = await sample('reports/local/1.162.0-vs-1.163.2-sequential/results', 'examples/local-synapse.yml');
  assert.equal(c.verdict.verdict, 'inconclusive');
  const report = renderMarkdown(c, [], tol.listing);
  const top = firstScreen(report);
  assert.match(
    top,
    /^\*\*Why\*\*: The gate judges after at least 2 pairs of runs and 1 pair has run; so far supported users in the unbounded test rose 0\.91%\.$/m,
  );
  assert.match(top, /^\*\*What to do next\*\*: Add another pair of runs: resume the run on the same output directory/m);
  assert.doesNotMatch(top, STATISTICS);
  // Its context checks are undecided after one pair, with intervals across zero: no news.
  assert.ok(
    c.verdict.checks.some((ch) => ch.verdict === 'warn'),
    'the sample has undecided context checks',
  );
  assert.doesNotMatch(report, /\*\*Watch\*\*/);
  // Below the minimum of pairs, one line for the undecided checks rather than one each.
  assert.match(
    top,
    /^- \*\*Not judged yet\*\*: 11 checks wait for the minimum of 2 pairs \(1 so far\); the largest move in the worse direction so far is heap in use in the bounded test at \+1\.02%\.$/m,
  );
  assert.doesNotMatch(report, /\*\*Cannot judge\*\*/);
  assert.match(report, /\| CPU per user \(stable phase\) \(context\) \| bounded \|.*\| no evidence of change \|/);
});

test('a fail says which check failed, by how much against its tolerance and material change, and where to look', () => {
  const c = compareRuns([bounded('1.0.0'), bounded('1.0.0', 1)], [bounded('1.1.0', 0, { apiFactor: 1.5 }), bounded('1.1.0', 1, { apiFactor: 1.5 })], tol);
  assert.equal(c.verdict.verdict, 'fail');
  assert.match(
    whySentence(c.verdict),
    /^API time, (average|p99) rose \d+%, (past its \d+% tolerance toward|beyond) its \d+% material rise; API time, (average|p99) rose \d+%, (past|beyond)/,
  );
  assert.match(nextStep(c.verdict), /^Hold the release\. Look first at API time, (average|p99) in the bounded test/);
  assert.doesNotMatch(firstScreen(renderMarkdown(c, [], tol.listing), 8), STATISTICS);
});

test('the check run leads with the verdict, why and the next step, shows heap in MiB, and keeps the statistics under their heading', () => {
  const c = compareRuns(
    [0, 1].map((i) => unbounded('1.0.0', 200, i)).concat([bounded('1.0.0'), bounded('1.0.0', 1)]),
    [0, 1].map((i) => unbounded('1.1.0', 199, i)).concat([bounded('1.1.0'), bounded('1.1.0', 1)]),
    tol,
  );
  const text = verdictMarkdown({ verdict: c.verdict });
  const lines = text.split('\n');
  assert.equal(lines[0], `## loadgate: ${c.verdict.verdict === 'pass' ? '✅ PASS' : c.verdict.verdict === 'fail' ? '❌ FAIL' : '⚠️ INCONCLUSIVE'}`);
  assert.equal(
    lines[2],
    whySentence(c.verdict).replace(/[`*_[\]]/g, (x) => `\\${x}`),
  );
  assert.match(lines[4] ?? '', /^\*\*What to do next\*\*: /);
  const stats = text.indexOf('### Statistics');
  assert.ok(stats > 0);
  assert.doesNotMatch(text.slice(0, stats), STATISTICS);
  const heap = lines.find((l) => l.includes('| Heap in use'));
  assert.match(heap ?? '', /\| \d+\.\d MiB \| \d+\.\d MiB \|/);
  assert.match(text, /\| Test \| Metric \| Baseline \| Candidate \| Change \| Interval \| Tolerance \| Material change \| Result \|/);
});

test('undecided at the most pairs the gate runs: why names the open checks, next says how many more pairs would likely decide', () => {
  const noisy = tolerancesSchema.parse({ supportedUsers: { tolerancePct: 5, noiseFloorPct: 40 } });
  const { verdict } = compareRuns(
    [200, 240, 170].map((u, i) => unbounded('1.0.0', u, i)),
    [190, 215, 180].map((u, i) => unbounded('1.1.0', u, i)),
    noisy,
    { maxPairs: 3 },
  );
  assert.equal(verdict.verdict, 'inconclusive');
  assert.match(
    whySentence(verdict),
    /^After 3 pairs, the most this gate runs, the runs cannot yet tell the candidate from the baseline on 1 gating check: supported users \(fell [\d.]+% so far\)\.$/,
  );
  assert.match(nextStep(verdict), /^About \d+ more pairs? would likely decide it: raise maxRepeats and resume/);
  assert.doesNotMatch(whySentence(verdict), STATISTICS);
});

test('a fail of three or more checks names the two farthest past their tolerances and counts the others', () => {
  const c = compareRuns([bounded('1.0.0'), bounded('1.0.0', 1)], [bounded('1.1.0', 0, { apiFactor: 1.5 }), bounded('1.1.0', 1, { apiFactor: 1.5 })], tol);
  const failed = c.verdict.checks.filter((x) => x.gating && x.verdict === 'fail');
  assert.equal(failed.length, 2);
  const third = { ...(failed[0] as (typeof failed)[number]), id: 'other.apiAvg', test: 'other' };
  const why = whySentence({ ...c.verdict, checks: [...c.verdict.checks, third] });
  assert.match(
    why,
    /^API time, (average|p99) .*rose \d+%, (past|beyond) .*; API time, (average|p99) .*rose \d+%, (past|beyond) .*, and 1 other check failed too\.$/,
  );
});
