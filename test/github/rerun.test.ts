/**
 * Re-runs over the same comparison: one `loadgate` check run per commit and one report
 * pull request per comparison, whatever state an earlier run left them in.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { publishFinish, publishStart, type PublishContext } from '../../src/github/publish.ts';
import { GitHubStandin, startStandin, type StandinOptions } from '../support/github-standin/server.ts';
import { BASELINE, CANDIDATE, check, contextFor, smallLocalPlan, verdictFile, writeReport } from './fixtures.ts';

const BRANCH = `perf-report/${BASELINE}-vs-${CANDIDATE}`;
const DIR = `reports/${BASELINE}-vs-${CANDIDATE}`;
const plan = smallLocalPlan();

let warm: GitHubStandin;
before(async () => {
  warm = await startStandin();
});
after(() => warm.close());

async function repo(options: StandinOptions = {}): Promise<{ s: GitHubStandin; sha: string }> {
  const s = await new GitHubStandin({ tags: [BASELINE], ...options }).start();
  const sha = s.commitOnDefaultBranch('rc1', { VERSION: '1.3.0-rc1\n' });
  s.addTag(CANDIDATE, sha);
  return { s, sha };
}

function clean(s: GitHubStandin): void {
  assert.deepEqual(s.rejected, [], "every request matched GitHub's OpenAPI schema");
  assert.deepEqual(s.unmatched, []);
}

async function finish(
  ctx: PublishContext,
  verdict: 'pass' | 'fail' | 'inconclusive',
  extra: { checkRunId?: number; configPath?: string; extraFiles?: Record<string, string> } = {},
) {
  const checks = verdict === 'fail' ? [check({ verdict: 'fail', reason: 'p99 +35%' })] : [check()];
  const report = await writeReport(verdictFile(verdict, checks), extra.extraFiles ?? {});
  try {
    return await publishFinish(ctx, {
      checkName: 'loadgate',
      baseline: BASELINE,
      candidate: CANDIDATE,
      reportDir: report.dir,
      checkRunId: extra.checkRunId,
      configPath: extra.configPath,
    });
  } finally {
    await report.cleanup();
  }
}

test('a whole re-run (start, finish, start, finish) keeps one check run', async (t) => {
  const { s, sha } = await repo();
  t.after(() => s.close());
  const ctx = contextFor(s);
  const first = await publishStart(ctx, { checkName: 'loadgate', candidate: CANDIDATE, plan });
  await finish(ctx, 'fail', { checkRunId: Number(first.outputs['check-run-id']) });
  assert.equal(s.checkRuns[0]?.conclusion, 'failure');

  const second = await publishStart(ctx, { checkName: 'loadgate', candidate: CANDIDATE, plan });
  assert.equal(second.outputs['check-run-id'], first.outputs['check-run-id'], 'the same check run is taken over');
  assert.equal(s.checkRuns.length, 1);
  assert.equal(s.checkRuns[0]?.status, 'in_progress', 'it shows the new gate running');
  assert.equal(s.checkRuns[0]?.conclusion, null, 'without the old verdict');
  assert.match(s.checkRuns[0]?.output.summary ?? '', /loadgate: running/);

  await finish(ctx, 'pass', { checkRunId: Number(second.outputs['check-run-id']) });
  assert.equal(s.checkRuns.length, 1);
  assert.equal(s.checkRuns[0]?.head_sha, sha);
  assert.equal(s.checkRuns[0]?.conclusion, 'success');
  assert.equal(s.pulls.length, 1, 'and one report PR');
  clean(s);
});

test('a re-run of publish alone (no check run id) updates the same check run and PR, without duplicate annotations', async (t) => {
  const { s } = await repo();
  t.after(() => s.close());
  const ctx = contextFor(s);
  const r1 = await finish(ctx, 'fail', { configPath: '.github/loadgate.yml' });
  const r2 = await finish(ctx, 'fail', { configPath: '.github/loadgate.yml' });
  assert.equal(s.checkRuns.length, 1);
  assert.equal(r2.outputs['check-run-id'], r1.outputs['check-run-id']);
  assert.equal(s.checkRuns[0]?.writes, 2);
  assert.equal(s.checkRuns[0]?.annotations.length, 1, 'GitHub appends annotations, so a re-publish sends none');
  assert.equal(s.pulls.length, 1);
  assert.equal(r2.report?.pullAction, 'updated');
  clean(s);
});

test('when GitHub keeps completed check runs as they are, a re-run still shows the truth on a new check run', async (t) => {
  const { s } = await repo({ completedCheckRunsMutable: false });
  t.after(() => s.close());
  const log: string[] = [];
  const ctx = contextFor(s, undefined, log);
  await finish(ctx, 'pass');
  const started = await publishStart(ctx, { checkName: 'loadgate', candidate: CANDIDATE, plan });
  assert.equal(s.checkRuns.length, 2, 'the completed run could not be reopened');
  assert.equal(s.checkRuns[0]?.conclusion, 'success');
  assert.match(s.checkRuns[0]?.output.title ?? '', /PASS/, "the old run's verdict text is left alone");
  assert.equal(s.checkRuns[1]?.status, 'in_progress');
  await finish(ctx, 'fail', { checkRunId: Number(started.outputs['check-run-id']) });
  assert.equal(s.checkRuns[1]?.conclusion, 'failure');

  // Publishing a different verdict over a frozen completed run never leaves the old one newest.
  await finish(ctx, 'pass');
  const newest = [...s.checkRuns].sort((a, b) => b.id - a.id)[0];
  assert.equal(newest?.conclusion, 'success');
  assert.equal(s.checkRuns.length, 3);
  assert.ok(
    log.some((l) => /GitHub kept check run #\d+ at failure/.test(l)),
    log.join('\n'),
  );
  clean(s);
});

test('a workflow job that happens to be named loadgate is not taken for the check run', async (t) => {
  const { s, sha } = await repo();
  t.after(() => s.close());
  const ctx = contextFor(s);
  // A job check run: same name, no loadgate external_id.
  const api = (await import('../../src/github/publish.ts')).repoApi(ctx);
  await api.createCheckRun({ name: 'loadgate', headSha: sha, status: 'in_progress', output: { title: 'job', summary: 'a job' } });
  const started = await publishStart(ctx, { checkName: 'loadgate', candidate: CANDIDATE, plan });
  assert.equal(s.checkRuns.length, 2);
  assert.notEqual(Number(started.outputs['check-run-id']), s.checkRuns[0]?.id);
  assert.equal(s.checkRuns[0]?.output.summary, 'a job', 'the job check run is untouched');
  clean(s);
});

test('a closed, unmerged report PR is reopened and updated, not duplicated', async (t) => {
  const { s } = await repo();
  t.after(() => s.close());
  const ctx = contextFor(s);
  await finish(ctx, 'fail');
  s.closePull(1);
  const head1 = s.branchHead(BRANCH);
  const r2 = await finish(ctx, 'pass');
  assert.equal(r2.report?.pullAction, 'reopened');
  assert.equal(s.pulls.length, 1);
  assert.equal(s.pulls[0]?.state, 'open');
  assert.match(s.pulls[0]?.title ?? '', /PASS/);
  assert.deepEqual(s.git.commits.get(s.branchHead(BRANCH) as string)?.parents, [head1], 'the new report is a commit on the same branch');
  clean(s);
});

test('a closed PR whose branch was deleted cannot be reopened: a new one is opened', async (t) => {
  const { s } = await repo();
  t.after(() => s.close());
  const ctx = contextFor(s);
  await finish(ctx, 'fail');
  s.closePull(1);
  s.deleteBranch(BRANCH);
  const r2 = await finish(ctx, 'pass');
  assert.equal(r2.report?.pullAction, 'created');
  assert.equal(s.pulls.length, 2);
  assert.equal(s.pulls[0]?.state, 'closed');
  assert.equal(s.pulls[1]?.state, 'open');
  assert.ok(s.filesOnBranch(BRANCH).has(`${DIR}/verdict.json`));
  clean(s);
});

test('after the report PR was merged, a re-run opens a new PR from the default branch', async (t) => {
  const { s } = await repo();
  t.after(() => s.close());
  const ctx = contextFor(s);
  await finish(ctx, 'fail', { extraFiles: { 'graphs/old-only.png': 'x' } });
  const mergeCommit = s.mergePull(1);
  const r2 = await finish(ctx, 'pass');
  assert.equal(r2.report?.pullAction, 'created');
  assert.equal(s.pulls.length, 2);
  assert.equal(s.pulls[0]?.merged, true, 'the merged PR is left as it is');
  assert.equal(s.pulls[1]?.state, 'open');
  const head = s.branchHead(BRANCH) as string;
  assert.deepEqual(s.git.commits.get(head)?.parents, [mergeCommit], 'the new report starts from the default branch');
  const files = s.filesOnBranch(BRANCH);
  assert.ok(files.get(`${DIR}/verdict.json`)?.toString().includes('"pass"'));
  assert.equal(files.has(`${DIR}/graphs/old-only.png`), false);
  clean(s);
});

test('after a merge with the branch deleted, the same holds', async (t) => {
  const { s } = await repo();
  t.after(() => s.close());
  const ctx = contextFor(s);
  await finish(ctx, 'fail');
  s.mergePull(1, { deleteBranch: true });
  const r2 = await finish(ctx, 'pass');
  assert.equal(r2.report?.pullAction, 'created');
  assert.equal(s.pulls.filter((p) => p.state === 'open').length, 1);
  clean(s);
});

test('re-publishing exactly the merged report opens nothing and links the merged PR', async (t) => {
  const { s } = await repo();
  t.after(() => s.close());
  const ctx = contextFor(s);
  const report = await writeReport(verdictFile('pass'));
  t.after(() => report.cleanup());
  const options = { checkName: 'loadgate', baseline: BASELINE, candidate: CANDIDATE, reportDir: report.dir };
  await publishFinish(ctx, options);
  s.mergePull(1);
  const again = await publishFinish(ctx, options);
  assert.equal(again.reportError, undefined);
  assert.equal(again.report?.pullAction, 'already-merged');
  assert.equal(s.pulls.length, 1);
  assert.equal(s.checkRuns.length, 1);
  assert.equal(s.checkRuns[0]?.details_url, `${s.repoHtmlUrl}/pull/1`);
  clean(s);
});
