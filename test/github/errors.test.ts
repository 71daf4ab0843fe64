import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { publishFinish, publishStart } from '../../src/github/publish.ts';
import { GitHubApiError } from '../../src/github/errors.ts';
import { InputError } from '../../src/util/errors.ts';
import { GitHubStandin, startStandin, type StandinOptions } from '../support/github-standin/server.ts';
import { BASELINE, CANDIDATE, contextFor, smallLocalPlan, verdictFile, writeReport } from './fixtures.ts';

const plan = smallLocalPlan();

let warm: GitHubStandin;
before(async () => {
  warm = await startStandin();
});
after(() => warm.close());

async function repo(options: StandinOptions): Promise<{ s: GitHubStandin; sha: string }> {
  const s = await new GitHubStandin(options).start();
  const sha = s.commitOnDefaultBranch('rc');
  s.addTag(CANDIDATE, sha);
  return { s, sha };
}

/** The error must be explained, be an InputError (exit 3, message printed) and never show the token. */
function explained(pattern: RegExp, token: string) {
  return (error: unknown) => {
    assert.ok(error instanceof GitHubApiError && error instanceof InputError, `expected a GitHubApiError, got ${String(error)}`);
    assert.match(error.message, pattern);
    assert.ok(!error.message.includes(token), 'the token never appears in a message');
    return true;
  };
}

test('a token without checks: write is told to grant it', async (t) => {
  const token = 'readonly-token-abcdef';
  const { s } = await repo({ tokens: { [token]: { permissions: { contents: 'write', checks: 'read', 'pull-requests': 'write' }, actions: true } } });
  t.after(() => s.close());
  await assert.rejects(
    publishStart(contextFor(s, token), { checkName: 'loadgate', candidate: CANDIDATE, plan }),
    explained(/checks\.create.*403.*lacks `checks: write`.*permissions:/s, token),
  );
});

/** publish completes the check run with the verdict and returns the explained PR failure. */
function reportFailed(result: Awaited<ReturnType<typeof publishFinish>>, pattern: RegExp, token: string): void {
  assert.ok(result.reportError, 'the PR failure is returned to fail the step');
  explained(pattern, token)(result.reportError);
}

test('a token without contents: write cannot commit the report and is told so; the check run is still completed', async (t) => {
  const token = 'no-contents-token-123';
  const { s } = await repo({ tokens: { [token]: { permissions: { contents: 'read', checks: 'write', 'pull-requests': 'write' }, actions: true } } });
  t.after(() => s.close());
  const report = await writeReport(verdictFile('pass'));
  t.after(() => report.cleanup());
  const result = await publishFinish(contextFor(s, token), { checkName: 'loadgate', baseline: BASELINE, candidate: CANDIDATE, reportDir: report.dir });
  reportFailed(result, /git\.createBlob.*lacks `contents: write`/s, token);
  assert.equal(s.checkRuns.length, 1);
  assert.equal(s.checkRuns[0]?.status, 'completed');
  assert.equal(s.checkRuns[0]?.conclusion, 'success', 'the verdict stands');
  assert.match(s.checkRuns[0]?.output.summary ?? '', /report pull request was not published[\s\S]*lacks `contents: write`/);
});

test('the Actions "create pull requests" setting being off is named, in the error and the check run', async (t) => {
  const { s } = await repo({ allowActionsToCreatePullRequests: false });
  t.after(() => s.close());
  const report = await writeReport(verdictFile('fail'));
  t.after(() => report.cleanup());
  const started = await publishStart(contextFor(s), { checkName: 'loadgate', candidate: CANDIDATE, plan });
  const result = await publishFinish(contextFor(s), {
    checkName: 'loadgate',
    baseline: BASELINE,
    candidate: CANDIDATE,
    reportDir: report.dir,
    checkRunId: Number(started.outputs['check-run-id']),
  });
  reportFailed(result, /pulls\.create.*403.*Allow GitHub Actions to create and approve pull requests.*Settings → Actions → General/s, 'test-token-0123456789');
  assert.equal(s.pulls.length, 0);
  assert.equal(s.checkRuns.length, 1, 'the started check run is completed, not left in progress');
  assert.equal(s.checkRuns[0]?.conclusion, 'failure');
  assert.match(s.checkRuns[0]?.output.summary ?? '', /Allow GitHub Actions to create and approve pull requests/);
  assert.equal(s.checkRuns[0]?.details_url, 'https://github.com/octo-org/chat-server/actions/runs/4242', 'with no PR, the details link is the run');
});

test('a ruleset blocking the report branch is named, and the check run is completed', async (t) => {
  const { s } = await repo({});
  t.after(() => s.close());
  // GitHub's answer when a branch ruleset refuses the ref.
  s.faults.set('git/create-ref', {
    status: 422,
    times: 1,
    message: 'Repository rule violations found\n\nCannot create ref due to creations being restricted.',
  });
  const report = await writeReport(verdictFile('inconclusive'));
  t.after(() => report.cleanup());
  const result = await publishFinish(contextFor(s), { checkName: 'loadgate', baseline: BASELINE, candidate: CANDIDATE, reportDir: report.dir });
  assert.ok(result.reportError);
  assert.equal(s.checkRuns[0]?.conclusion, 'action_required');
  assert.match(s.checkRuns[0]?.output.summary ?? '', /not published[\s\S]*ruleset or branch protection blocks writes to perf-report/);
});

test('a rejected token (401) says the token is missing, expired or revoked', async (t) => {
  const { s } = await repo({});
  t.after(() => s.close());
  await assert.rejects(
    publishStart(contextFor(s, 'expired-token-999999'), { checkName: 'loadgate', candidate: CANDIDATE, plan }),
    explained(/401 "Bad credentials".*expired or revoked/s, 'expired-token-999999'),
  );
});

test('an exhausted rate limit that resets later says when', async (t) => {
  const { s } = await repo({ rateLimit: { limit: 100, remaining: 0, resetInSec: 3600 } });
  t.after(() => s.close());
  await assert.rejects(
    publishStart(contextFor(s), { checkName: 'loadgate', candidate: CANDIDATE, plan }),
    explained(/rate limit is exhausted \(it resets at \d{4}-\d\d-\d\dT/, 'test-token-0123456789'),
  );
});

test('a rate limit that resets within the wait is waited out and retried', async (t) => {
  const { s } = await repo({ rateLimit: { limit: 100, remaining: 0, resetInSec: 1 } });
  t.after(() => s.close());
  const log: string[] = [];
  const ctx = contextFor(s, undefined, log);
  // Real seconds here: the client must actually wait for the reset (about 2 s).
  ctx.clientOptions = { ...ctx.clientOptions, retryAfterUnitMs: 1000 };
  const started = await publishStart(ctx, { checkName: 'loadgate', candidate: CANDIDATE, plan });
  assert.ok(Number(started.outputs['check-run-id']) > 0);
  assert.ok(
    log.some((l) => /primary rate limit .*retrying/.test(l)),
    log.join('\n'),
  );
  assert.ok(s.requests.some((r) => r.status === 403));
});

test('a repository the token cannot see (404) names the repository', async (t) => {
  const { s } = await repo({});
  t.after(() => s.close());
  const ctx = contextFor(s);
  ctx.env = { ...ctx.env, repo: 'no-such-repo' };
  await assert.rejects(
    publishStart(ctx, { checkName: 'loadgate', candidate: CANDIDATE, plan }),
    explained(/tag v1\.3\.0-rc1 does not exist in octo-org\/no-such-repo/, 'test-token-0123456789'),
  );
});

test('a commit unknown to GitHub is explained on check creation', async (t) => {
  const { s } = await repo({});
  t.after(() => s.close());
  await assert.rejects(
    publishStart(contextFor(s), { checkName: 'loadgate', candidate: CANDIDATE, sha: 'f'.repeat(40), plan }),
    explained(/No commit found for SHA.*candidate tag \(was the tag pushed\?\)/s, 'test-token-0123456789'),
  );
});
