import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { publishFinish } from '../../src/github/publish.ts';
import { parseHistoryText, recordLine } from '../../src/history/store.ts';
import type { VerdictFile } from '../../src/results/verdict-schema.ts';
import { GitHubStandin } from '../support/github-standin/server.ts';
import { BASELINE, CANDIDATE, contextFor, verdictFile, writeReport } from './fixtures.ts';

const BRANCH = `perf-report/${BASELINE}-vs-${CANDIDATE}`;
const OWNER = { product: 'synapse', profile: 'synapse-local-duet' };

test("the report pull request adds the gate's record to the reports repository's history, its report linked on the default branch; the check run names the creep and the shifts", async (t) => {
  const s = await new GitHubStandin({ tags: ['v1.1.0', BASELINE] }).start();
  t.after(() => s.close());
  s.addTag(CANDIDATE, s.commitOnDefaultBranch('release', { VERSION: `${CANDIDATE}\n` }), true);
  const [fixture] = parseHistoryText(readFileSync('test/fixtures/history/good/1.162.0-vs-1.163.2.jsonl', 'utf8'), 'fixture', OWNER);
  const record = { ...fixture!, baseline: BASELINE, candidate: CANDIDATE, report: 'README.md' };
  const verdict: VerdictFile = {
    ...verdictFile('fail'),
    summary: 'Creep since v1.0.0: each step passed; the change since v1.0.0 is −11.2 %: supported users (unbounded), beyond its material change',
    creep: {
      setting: 'v1.0.0',
      anchor: 'v1.0.0',
      verdict: 'fail',
      line: 'each step passed; the change since v1.0.0 is −11.2 %: supported users (unbounded), beyond its material change',
      chain: ['v1.0.0', BASELINE, CANDIDATE],
      alpha: 0.01,
      beta: 0.01,
      checks: [],
    },
    history: {
      source: 'reports/history/synapse-local-duet',
      records: 4,
      releases: ['v1.0.0', 'v1.0.1', BASELINE, CANDIDATE],
      series: [
        {
          id: 'unbounded.supportedUsers',
          metric: 'Supported users',
          test: 'unbounded',
          worse: 'lower',
          points: [],
          changePoints: [{ release: BASELINE, previous: 'v1.0.1', changePct: -6.1, pValue: 0.0002 }],
        },
      ],
      otava: { version: '0.8.0', maxPValue: 0.001 },
    },
  };
  const report = await writeReport(verdict, { 'history-record.json': recordLine(record) });
  t.after(() => report.cleanup());
  const result = await publishFinish(contextFor(s), { checkName: 'loadgate', baseline: BASELINE, candidate: CANDIDATE, reportDir: report.dir });
  assert.equal(result.conclusion, 'failure');
  const files = s.filesOnBranch(BRANCH);
  const path = `reports/history/synapse-local-duet/${BASELINE}-vs-${CANDIDATE}-run-4242.jsonl`;
  const committed = files.get(path);
  assert.ok(committed, `${path} is on the branch: ${[...files.keys()].join(', ')}`);
  const [published] = parseHistoryText(committed.toString('utf8'), path, OWNER);
  assert.equal(published?.report, `https://github.com/${s.owner}/${s.repo}/tree/HEAD/reports/${BASELINE}-vs-${CANDIDATE}`);
  assert.deepEqual({ ...published, report: 'README.md' }, record);
  const summary = s.checkRuns[0]?.output.summary ?? '';
  assert.match(summary, /\*\*Creep since v1\.0\.0\*\*: ❌ each step passed; the change since v1\.0\.0 is −11\.2 %/);
  assert.match(
    summary,
    /Where a check shifted \(Apache Otava, over the recorded releases\): supported users \(unbounded\) shifted −6\.10% at v1\.2\.0 \(from v1\.0\.1, p 0\.00020\)/,
  );
  assert.deepEqual(s.rejected, [], "every request matched GitHub's OpenAPI schema");
});
