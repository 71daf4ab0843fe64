import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareRuns } from '../../src/compare/compare-runs.ts';
import { renderMarkdown } from '../../src/report/markdown.ts';
import type { RunResult } from '../../src/results/schema.ts';
import { bounded, unbounded } from '../support/runs.ts';
import { loadGateConfig } from '../../src/config/load.ts';
import { loadNoiseModel } from '../../src/noise/model.ts';

/**
 * `compare` judges every pair it is given: a stop before the last pair is the live loop's
 * decision alone, and evidence of a regression later in the record is never dropped.
 */
const PROFILES = {
  // The pairs after which identical sides pass every check: the sequential model's σ is larger,
  // and two duets balance the slots (one duet carries the measured slot effect's uncertainty).
  sequential: { config: 'examples/local-synapse.yml', model: 'noise/local-synapse.json', clean: 4 },
  duet: { config: 'examples/local-synapse-duet.yml', model: 'noise/local-synapse-duet.json', clean: 2 },
} as const;

/**
 * One side's runs of pair `repeat`: a bounded run with `errors` of its 1700 requests and an
 * unbounded one, the same numbers on both sides (only the version label differs).
 */
function side(version: string, repeat: number, errors: number, slot?: 'a' | 'b'): RunResult[] {
  const b = bounded('1.0.0', repeat);
  const withErrors: RunResult = { ...b, totals: { ...b.totals, requests: 1700, errors, timeouts: 0 } };
  const runs = [withErrors, unbounded('1.0.0', 200, repeat)].map((r) => ({ ...r, target: { ...r.target, version } }));
  return slot ? runs.map((r) => ({ ...r, duet: { slot, cpuShare: 0.5 } })) : runs;
}

for (const mode of ['sequential', 'duet'] as const) {
  const { clean } = PROFILES[mode];
  test(`${mode}: an error burst recorded after the pair at which every check passed fails`, async () => {
    const config = await loadGateConfig(PROFILES[mode].config);
    const model = await loadNoiseModel(PROFILES[mode].model, config);
    const tol = config.tolerances;
    const slots = (p: number, role: 'baseline' | 'candidate'): 'a' | 'b' | undefined =>
      mode === 'duet' ? ((p % 2 === 0) === (role === 'baseline') ? 'a' : 'b') : undefined;
    const pairs = Array.from({ length: clean + 1 }, (_, p) => p);
    const baseline = pairs.flatMap((p) => side('1.0.0', p, 0, slots(p, 'baseline')));
    // 0 % in the clean pairs, 10 % of the candidate's requests in the last one.
    const candidate = pairs.flatMap((p) => side('1.1.0', p, p === clean ? 170 : 0, slots(p, 'candidate')));
    const setup = { model, minPairs: 1, maxPairs: 4, mode };
    const first = compareRuns(
      baseline.filter((r) => r.repeat < clean),
      candidate.filter((r) => r.repeat < clean),
      tol,
      setup,
    );
    const both = compareRuns(baseline, candidate, tol, setup);
    const rate = both.verdict.checks.find((c) => c.id === 'bounded.errorRate')!;
    // Identical sides: the clean pairs alone pass every check, so the live loop would have stopped there.
    assert.equal(first.verdict.verdict, 'pass', first.verdict.summary);
    assert.equal(both.verdict.verdict, 'fail', both.verdict.summary);
    assert.equal(rate.verdict, 'fail', rate.reason);
    // The check row and the report's error table read the same runs: 0 % against all of them pooled.
    assert.equal(rate.baseline, 0);
    assert.ok(Math.abs((rate.candidate as number) - 10 / (clean + 1)) < 1e-9, String(rate.candidate));
    assert.equal(both.verdict.decision.pairs, clean + 1);
    const report = renderMarkdown(both, [], tol.listing);
    const rows = report.split('\n').filter((l) => l.startsWith('| Error rate | bounded |') && /✅|❌/.test(l));
    assert.ok(rows.length && rows.every((l) => l.includes('❌ fail')), `the report's check rows: ${rows.join('\n')}`);
  });
}
