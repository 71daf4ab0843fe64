import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changePointLines, creepHeadline, historySection } from '../../src/report/history-section.ts';
import { nextStep, whySentence } from '../../src/report/headline.ts';
import { historyChartSpec } from '../../src/report/history-graph.ts';
import type { Creep, HistoryView } from '../../src/results/creep-schema.ts';
import type { VerdictFile } from '../../src/results/verdict-schema.ts';
import { check, verdictFile } from '../github/fixtures.ts';

const creep = (verdict: Creep['verdict'], line: string): Creep => ({
  setting: '10.11.*',
  anchor: '10.11.0',
  verdict,
  line,
  chain: ['10.11.0', '10.12.0', '11.0.0'],
  alpha: 0.01,
  beta: 0.01,
  checks: [
    {
      id: 'unbounded.supportedUsers',
      metric: 'Supported users',
      test: 'unbounded',
      worse: 'lower',
      deltaPct: -11.2,
      interval: [-14, -8.3],
      method: 'direct',
      verdict: verdict === 'skipped' ? 'inconclusive' : verdict,
      reason: 'measured directly',
    },
  ],
});
const history: HistoryView = {
  source: '../history',
  records: 3,
  releases: ['10.11.0', '10.12.0', '11.0.0'],
  series: [
    {
      id: 'unbounded.supportedUsers',
      metric: 'Supported users',
      test: 'unbounded',
      worse: 'lower',
      points: [
        { release: '10.11.0', deltaPct: 0, interval: [0, 0] },
        { release: '10.12.0', deltaPct: -6.1, interval: [-9, -3.1] },
        { release: '11.0.0', deltaPct: -11.2, interval: [-15.3, -6.9] },
      ],
      changePoints: [{ release: '10.12.0', previous: '10.11.0', changePct: -6.1, pValue: 0.0004 }],
    },
  ],
  otava: { version: '0.8.0', maxPValue: 0.001 },
};

test('a creep fail is its own line in the report: the headline, the why and what to do next, when every step check passed', () => {
  const line = 'each step passed; the change since 10.11.0 is −11.2 %: supported users (unbounded), beyond its material change';
  const v: VerdictFile = { ...verdictFile('fail', [check()]), creep: creep('fail', line), history };
  assert.equal(creepHeadline(v), `**Creep since 10.11.0**: ❌ ${line}`);
  assert.equal(whySentence(v), `Each step passed; the change since 10.11.0 is −11.2 %: supported users (unbounded), beyond its material change.`);
  assert.match(nextStep(v), /^Hold the release: each change was small, but together they exceed the material change since 10\.11\.0/);
  const section = historySection(v, [{ file: 'graphs/history_unbounded-supportedUsers.png', title: 'users', png: Buffer.alloc(0) }]) ?? '';
  assert.match(section, /The anchor is `10\.11\.\*` \(the last release matching it: 10\.11\.0\)/);
  assert.match(section, /\| Supported users \| unbounded \| −11\.20% \| \[−14\.00%, −8\.30%\] \| direct \| fail \|/);
  assert.match(section, /- supported users \(unbounded\) shifted −6\.10% at 10\.12\.0 \(from 10\.11\.0, p 0\.00040\)/);
  assert.match(section, /!\[users\]\(graphs\/history_unbounded-supportedUsers\.png\)/);
  assert.deepEqual(changePointLines({ ...history, series: [] }), []);
});

test('a creep check that cannot decide leaves the gate inconclusive, saying so; no creep, no section', () => {
  const v: VerdictFile = {
    ...verdictFile('inconclusive', [check()]),
    problems: [],
    next: 'stop',
    creep: creep('inconclusive', 'the change since 10.11.0 cannot be judged yet'),
  };
  assert.equal(whySentence(v), 'Every gating check passed this step, but the change since 10.11.0 cannot be judged yet.');
  assert.match(nextStep(v), /Resume the gate/);
  assert.equal(historySection(verdictFile('pass'), []), undefined);
  assert.equal(creepHeadline(verdictFile('pass')), undefined);
});

test('the series graph marks the anchor and each shift Otava found, over the releases in order', () => {
  const spec = JSON.stringify(historyChartSpec(history.series[0]!, '10.11.0'));
  assert.match(spec, /"sort":\["10\.11\.0","10\.12\.0","11\.0\.0"\]/);
  assert.match(spec, /"label":"shift −6\.1 %"/);
  assert.match(spec, /"label":"anchor"/);
  assert.match(spec, /"low":-15\.3,"high":-6\.9/);
});
