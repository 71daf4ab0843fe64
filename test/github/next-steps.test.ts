import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextStepsMarkdown, suggestedRepeats, type NextStepsContext } from '../../src/github/next-steps.ts';
import { readGitHubEnv } from '../../src/github/env.ts';
import { parseActionsContext } from '../../src/github/actions-context.ts';
import { publishFinish } from '../../src/github/publish.ts';
import { InputError } from '../../src/util/errors.ts';
import { GitHubStandin } from '../support/github-standin/server.ts';
import { BASELINE, CANDIDATE, check, contextFor, contextSource, verdictFile, writeReport } from './fixtures.ts';

const CTX: NextStepsContext = { serverUrl: 'https://github.com', owner: 'mattermost', repo: 'mattermost', workflowFile: 'loadgate.yml', approvers: ['release-lead', 'perf-owner'] };
const undecided = check({ verdict: 'inconclusive', interval: [-9, 3], deltaPct: -3, reason: 'the interval straddles the tolerance' });
/** Two tests, one run each per side: the verdict file counts 2 runs per side. */
function inconclusive(extra: Record<string, unknown> = {}, problems: string[] = []) {
  const v = verdictFile('inconclusive', [undecided, check({ test: 'unbounded', id: 'unbounded.users' })]);
  return { ...v, baseline: { ...v.baseline, runs: 2 }, candidate: { ...v.candidate, runs: 2 }, problems, ...extra };
}

test('an inconclusive gate says how to re-run with more repeats, pre-filled, and who may override', () => {
  const text = nextStepsMarkdown(inconclusive(), CTX).join('\n');
  assert.match(text, /^### What to do now$/m);
  assert.match(text, /Re-run with more repeats\*\* \(1 → 3 per side/);
  assert.match(text, /\[Run workflow\]\(https:\/\/github\.com\/mattermost\/mattermost\/actions\/workflows\/loadgate\.yml\)/);
  assert.ok(text.includes(`   gh workflow run loadgate.yml --repo mattermost/mattermost -f candidate=${CANDIDATE} -f baseline=${BASELINE} -f repeats=3\n`), text);
  assert.match(text, /Expect about 3× this gate's duration and AWS cost/);
  assert.match(text, /\*\*Override\*\*: @release-lead, @perf-owner may accept the risk/);
});

test("the re-run asks for the gate's own suggestion (decision.suggestedMorePairs), capped at decision.maxRepeats and 20", () => {
  const three = (decision: Record<string, number>) => {
    const v = inconclusive({ decision });
    return suggestedRepeats({ ...v, baseline: { ...v.baseline, runs: 6 }, candidate: { ...v.candidate, runs: 6 } });
  };
  assert.deepEqual(three({ suggestedMorePairs: 4 }), { ran: 3, next: 7 });
  assert.deepEqual(three({ suggestedMorePairs: 4, maxRepeats: 5 }), { ran: 3, next: 5 });
  assert.deepEqual(three({ suggestedMorePairs: 40 }), { ran: 3, next: 20 });
  assert.deepEqual(three({}), { ran: 3, next: 6 }, 'without a suggestion: double');
});

test('a gate that could not judge a run says to fix the cause and re-run with the same repeats, not more', () => {
  const text = nextStepsMarkdown(inconclusive({}, ['candidate run 0 crashed']), CTX).join('\n');
  assert.match(text, /Fix the cause above and re-run\*\* with the same 1 repeat:/);
  assert.match(text, /-f repeats=1$/m);
  assert.doesNotMatch(text, /Re-run with more repeats/);
});

test('pass and fail need no next steps; without approvers or a workflow file the text still says what to do', () => {
  assert.deepEqual(nextStepsMarkdown(verdictFile('pass'), CTX), []);
  assert.deepEqual(nextStepsMarkdown(verdictFile('fail', [check({ verdict: 'fail' })]), CTX), []);
  const text = nextStepsMarkdown(inconclusive(), { ...CTX, workflowFile: undefined, approvers: [] }).join('\n');
  assert.match(text, /Actions → the loadgate workflow → Run workflow/);
  assert.match(text, /an approver on the tag ruleset's bypass list/);
});

test('the workflow file comes from GITHUB_WORKFLOW_REF and the approvers from LOADGATE_APPROVERS, both checked', () => {
  const context = parseActionsContext(contextSource({ repo: { owner: 'mattermost', repo: 'mattermost' } }));
  const base = { GITHUB_TOKEN: 't' };
  const env = readGitHubEnv(context, { ...base, GITHUB_WORKFLOW_REF: 'mattermost/mattermost/.github/workflows/loadgate.yml@refs/tags/v11.0.1-rc2', LOADGATE_APPROVERS: '@release-lead, perf-owner' });
  assert.equal(env.workflowFile, 'loadgate.yml');
  assert.deepEqual(env.approvers, ['release-lead', 'perf-owner']);
  assert.throws(() => readGitHubEnv(context, { ...base, LOADGATE_APPROVERS: 'ok,`rm -rf`' }), (e: unknown) => e instanceof InputError && /env LOADGATE_APPROVERS(\[1\])?: expected GitHub logins/.test(e.message));
  assert.throws(() => readGitHubEnv(context, { ...base, GITHUB_WORKFLOW_REF: 'nope' }), (e: unknown) => e instanceof InputError && /GITHUB_WORKFLOW_REF/.test(e.message));
});

test('publish puts the next steps into the check run summary and the report PR body', async (t) => {
  const s = await new GitHubStandin({ tags: [BASELINE] }).start();
  t.after(() => s.close());
  const sha = s.commitOnDefaultBranch('rc', { VERSION: '1\n' });
  s.addTag(CANDIDATE, sha);
  const report = await writeReport(inconclusive());
  t.after(() => report.cleanup());
  const result = await publishFinish(contextFor(s), { checkName: 'loadgate', baseline: BASELINE, candidate: CANDIDATE, reportDir: report.dir });
  assert.equal(result.conclusion, 'action_required');
  const command = `gh workflow run loadgate.yml --repo ${s.owner}/${s.repo} -f candidate=${CANDIDATE} -f baseline=${BASELINE} -f repeats=3`;
  assert.ok(s.checkRuns[0]?.output.summary?.includes(command), 'check run summary');
  assert.ok((s.pulls[0]?.body ?? '').includes(command), 'report PR body');
  assert.match(s.pulls[0]?.body ?? '', /@release-lead may accept the risk/);
  assert.deepEqual(s.rejected, []);
});
