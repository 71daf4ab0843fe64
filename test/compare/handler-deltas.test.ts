import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { compareRuns } from '../../src/compare/compare-runs.ts';
import { judgeHandler, timingDeltas } from '../../src/compare/handler-deltas.ts';
import { loadGateConfig } from '../../src/config/load.ts';
import { tolerancesSchema } from '../../src/config/schema.ts';
import { loadRunResult } from '../../src/results/load.ts';
import type { RunResult, Timing } from '../../src/results/schema.ts';
import { findings } from '../../src/report/findings.ts';
import { bounded } from '../support/runs.ts';

const tol = tolerancesSchema.parse({});
const SAMPLE = 'test/fixtures/local-duet-2-pairs/results';

test('a recorded duet gate: a store method called twice a run, 0.3 → 10.2 ms, is too rare to judge and never named', async () => {
  const files = (await readdir(SAMPLE)).sort();
  const load = (prefix: string) => Promise.all(files.filter((f) => f.startsWith(prefix)).map((f) => loadRunResult(join(SAMPLE, f))));
  const config = await loadGateConfig('examples/local-synapse-duet.yml');
  const comparison = compareRuns(await load('baseline-'), await load('candidate-'), config.tolerances);
  const bounded = comparison.tests.find((t) => t.name === 'bounded')!;
  const rare = bounded.store.rare.find((d) => d.name === 'get_partial_state_servers_at_join');
  assert.ok(rare, 'listed as too rare to judge');
  assert.ok(rare.deltaPct > 3000, 'the change itself is as recorded');
  assert.ok(!bounded.store.worsened.some((d) => d.name === 'get_partial_state_servers_at_join'));
  const comments = findings(comparison).join('\n');
  assert.doesNotMatch(comments, /get_partial_state_servers_at_join/);
  // Every handler a comment names as worsened was called often enough to be judged.
  for (const t of comparison.tests) for (const d of [...t.api.rare, ...t.store.rare]) assert.ok(!comments.includes(`\`${d.name}\``), d.name);
});

/** A run whose API timings are exactly these (the rest of the run as the support builds it). */
function withApi(run: RunResult, api: Timing[]): RunResult {
  return { ...run, api };
}

test('a frequent handler whose mean doubled ranks first, above a rare one with p99 +302 %', () => {
  // Several hundred calls a run, 10 → 20 ms: +4 s per run. A few dozen, 20 → 30 ms mean and
  // 50 → 201 ms p99: +0.4 s per run.
  const base = (repeat: number, jitter: number) =>
    withApi(bounded('1.0.0', repeat), [
      { name: 'GET SyncRestServlet', count: 400, avgMs: 10 * jitter, p99Ms: 40 },
      { name: 'GET ThreadsServlet', count: 40, avgMs: 20, p99Ms: 50 },
    ]);
  const cand = (repeat: number, jitter: number) =>
    withApi(bounded('1.1.0', repeat), [
      { name: 'GET SyncRestServlet', count: 400, avgMs: 20 * jitter, p99Ms: 60 },
      { name: 'GET ThreadsServlet', count: 40, avgMs: 30 * jitter, p99Ms: 201 },
    ]);
  const { tests } = compareRuns([base(0, 1), base(1, 1.02), base(2, 0.99)], [cand(0, 1.01), cand(1, 1.0), cand(2, 1.03)], tol);
  const worsened = tests[0]!.api.worsened;
  assert.equal(worsened[0]!.name, 'GET SyncRestServlet');
  assert.equal(worsened[0]!.judgement.kind, 'significant');
  assert.ok(Math.abs(worsened[0]!.addedMsPerRun - 400 * (worsened[0]!.candidateMs - worsened[0]!.baselineMs)) < 1e-6);
  assert.match(
    findings({ verdict: compareRuns([base(0, 1)], [cand(0, 1)], tol).verdict, tests }).join('\n'),
    /API handler adding the most time .*`GET SyncRestServlet`/,
  );
  // One pair: ranked the same, but nothing could be tested, and the comment does not claim otherwise.
  const one = compareRuns([base(0, 1)], [cand(0, 1)], tol);
  const comment = findings(one).join('\n');
  assert.match(comment, /the API handler adding the most time is `GET SyncRestServlet` \(400 calls per run, .*not tested: 1 pair\)/);
  assert.doesNotMatch(comment, /slowed significantly/);
});

test('the per-pair test: consistent changes are significant, scattered ones are "~", one pair is not tested', () => {
  assert.equal(judgeHandler([]).kind, 'too-rare');
  assert.deepEqual(judgeHandler([Math.log(2)]), { kind: 'untested', n: 1 });
  const steady = judgeHandler([0.69, 0.7, 0.68, 0.71]);
  assert.equal(steady.kind, 'significant');
  const scattered = judgeHandler([0.5, -0.4, 0.3, -0.2]);
  assert.equal(scattered.kind, 'not-significant');
  // Student's t with 3 df: mean 0.05, sd 0.4203, t = 0.238, two-sided p = 0.827.
  assert.ok('p' in scattered && Math.abs(scattered.p - 0.827) < 0.001, JSON.stringify(scattered));
});

test('a pair counts only when both runs made 30 calls or more', () => {
  const run = (version: string, repeat: number, count: number, avgMs: number) =>
    withApi(bounded(version, repeat), [{ name: 'X', count, avgMs, p99Ms: avgMs * 3 }]);
  const listing = { minDeltaPct: 1, minDeltaMs: 2 };
  const rare = timingDeltas([run('a', 0, 29, 10), run('a', 1, 40, 10)], [run('b', 0, 100, 30), run('b', 1, 29, 30)], (r) => r.api, listing);
  assert.equal(rare.rare[0]?.name, 'X');
  assert.equal(rare.worsened.length, 0);
  const one = timingDeltas([run('a', 0, 30, 10), run('a', 1, 40, 10)], [run('b', 0, 30, 30), run('b', 1, 29, 30)], (r) => r.api, listing);
  assert.deepEqual(one.worsened[0]?.judgement, { kind: 'untested', n: 1 });
});
