import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hotSpotCommits } from '../../src/github/hot-spot-commits.ts';
import type { GitHubRepoApi } from '../../src/github/api.ts';
import { readReportDir, type ReportFile } from '../../src/github/report-files.ts';
import { compareAndReport } from '../../src/compare/compare-and-report.ts';
import type { RunResult } from '../../src/results/schema.ts';
import { duets } from '../support/profiles.ts';
import { withTempDir } from '../support/runs.ts';
import { verdictFile } from './fixtures.ts';

const SHA = 'ab'.repeat(32);

/** The report directory compare writes for these runs, read back as the publish step reads it. */
async function files(runs: { baseline: RunResult[]; candidate: RunResult[] }): Promise<ReportFile[]> {
  return withTempDir(async (dir) => {
    await compareAndReport({ ...runs, outDir: dir });
    return readReportDir(dir);
  });
}

test('no commits are looked up when a side is a build (it has no tag) or nothing grew', async () => {
  const inj = duets('inj', 3);
  const asked: string[] = [];
  const api = (owner: string, repo: string) => {
    asked.push(`${owner}/${repo}`);
    return {} as GitHubRepoApi;
  };
  const versions = { baseline: '1.0.0', candidate: '1.1.0' };
  const built = verdictFile('fail', undefined, versions);
  built.candidate.build = { kind: 'wheel', path: '/w/x.whl', sha256: SHA, version: '1.1.0' };
  assert.equal(await hotSpotCommits(built, await files(inj), api), undefined);
  const aa = duets('aa', 3);
  assert.equal(await hotSpotCommits(verdictFile('pass', undefined, versions), await files(aa), api), undefined);
  assert.equal(asked.length, 0, 'no repository is asked');
  // Tags on both sides and a grown function: the server's repository is asked, and a failure is a line, not a throw.
  const failing = (owner: string, repo: string) => {
    asked.push(`${owner}/${repo}`);
    return {
      compareCommits: async () => {
        throw new Error('v1.0.0 or v1.1.0 is not a tag');
      },
    } as unknown as GitHubRepoApi;
  };
  const section = await hotSpotCommits(verdictFile('fail', undefined, versions), await files(inj), failing);
  assert.deepEqual(asked, ['element-hq/synapse']);
  assert.match(section ?? '', /could not be listed: v1\.0\.0 or v1\.1\.0 is not a tag/);
});
