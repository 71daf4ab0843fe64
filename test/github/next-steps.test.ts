import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextStepsMarkdown, suggestedRepeats, type NextStepsContext } from '../../src/github/next-steps.ts';
import { readGitHubEnv } from '../../src/github/env.ts';
import { parseActionsContext } from '../../src/github/actions-context.ts';
import { publishFinish } from '../../src/github/publish.ts';
import { InputError } from '../../src/util/errors.ts';
import { GitHubStandin } from '../support/github-standin/server.ts';
import { BASELINE, CANDIDATE, check, contextFor, contextSource, verdictFile, writeReport } from './fixtures.ts';

const CTX: NextStepsContext = {
  serverUrl: 'https://github.com',
  owner: 'mattermost',
  repo: 'mattermost',
  workflowFile: 'loadgate.yml',
  approvers: ['release-lead', 'perf-owner'],
};
const undecided = check({ verdict: 'inconclusive', interval: [-9, 3], deltaPct: -3, reason: 'the interval straddles the tolerance' });
/** Two tests, one run each per side: the verdict file counts 2 runs per side. */
function inconclusive(extra: Record<string, unknown> = {}, problems: string[] = []) {
  const v = verdictFile('inconclusive', [undecided, check({ test: 'unbounded', id: 'unbounded.users' })]);
  return { ...v, baseline: { ...v.baseline, runs: 2 }, candidate: { ...v.candidate, runs: 2 }, problems, ...extra };
}

test('an inconclusive gate says how to continue, pre-filled with its run id and the new cap, what that costs, and who may override', () => {
  const estimate = (more: number) => ({ bench: 'aws' as const, seconds: 3600 + more * 1800, costUsd: 10 + more * 5 });
  const text = nextStepsMarkdown(inconclusive(), { ...CTX, runId: '987654', estimate }).join('\n');
  assert.match(text, /^### What to do now$/m);
  assert.match(
    text,
    /Continue this gate\*\* with up to 2 more pairs \(1 → at most 3 in all\): the same sequential test goes on from the 1 pair already measured/,
  );
  assert.match(text, /\[Run workflow\]\(https:\/\/github\.com\/mattermost\/mattermost\/actions\/workflows\/loadgate\.yml\)/);
  assert.ok(
    text.includes(
      `   gh workflow run loadgate.yml --repo mattermost/mattermost -f candidate=${CANDIDATE} -f baseline=${BASELINE} -f continue-from=987654 -f max-repeats=3\n`,
    ),
    text,
  );
  assert.match(text, /At most about \$20\.00 and 2h \(`loadgate plan`: a new AWS bench for the extra pairs/);
  assert.match(text, /\*\*Override\*\*: @release-lead, @perf-owner may accept the risk/);
});

test('a gate inconclusive at its maxRepeats is continued beyond it, never advised "N → N"', () => {
  // The case of a gate that stopped at maxRepeats 3 with 3 pairs: the old advice read "3 → 3 per side".
  const v = inconclusive({ decision: { ...verdictFile('inconclusive').decision, pairs: 3, maxRepeats: 3, suggestedMorePairs: 2 } });
  const atCap = { ...v, baseline: { ...v.baseline, runs: 6 }, candidate: { ...v.candidate, runs: 6 } };
  const text = nextStepsMarkdown(atCap, { ...CTX, runId: '11' }).join('\n');
  assert.match(text, /3 → at most 5 in all/);
  assert.match(text, /-f continue-from=11 -f max-repeats=5$/m);
  assert.doesNotMatch(text, /(\d+) → (?:at most )?\1\b/, 'no N → N');
  assert.doesNotMatch(text, /-f repeats=/, 'a continuation, not a new gate');
  const local = nextStepsMarkdown(atCap, { ...CTX, runId: '11', estimate: () => ({ bench: 'local', seconds: 1500, costUsd: null }) }).join('\n');
  assert.match(local, /At most about 25m on the local bench \(no AWS cost\)/);
  // At the most any gate may run, there is nothing to continue: said, with no command.
  const full = inconclusive({ decision: { ...verdictFile('inconclusive').decision, pairs: 20, maxRepeats: 20 } });
  const none = nextStepsMarkdown(full, CTX).join('\n');
  assert.match(none, /No more pairs are available\*\*: the gate already ran 20 pairs/);
  assert.doesNotMatch(none, /gh workflow run|20 → 20/);
});

test("the continuation asks for the gate's own suggestion (decision.suggestedMorePairs) on top of the pairs that ran, capped only at 20", () => {
  const three = (decision: Record<string, number>) => {
    const v = inconclusive({ decision });
    return suggestedRepeats({ ...v, baseline: { ...v.baseline, runs: 6 }, candidate: { ...v.candidate, runs: 6 } });
  };
  assert.deepEqual(three({ suggestedMorePairs: 4 }), { ran: 3, next: 7 });
  assert.deepEqual(three({ suggestedMorePairs: 4, maxRepeats: 3 }), { ran: 3, next: 7 }, "the earlier gate's maxRepeats does not cap its continuation");
  assert.deepEqual(three({ suggestedMorePairs: 40 }), { ran: 3, next: 20 });
  assert.deepEqual(three({}), { ran: 3, next: 6 }, 'without a suggestion: double');
  assert.deepEqual(three({ pairs: 4 }), { ran: 4, next: 8 }, 'decision.pairs, when recorded, is what ran');
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
  const env = readGitHubEnv(context, {
    ...base,
    GITHUB_WORKFLOW_REF: 'mattermost/mattermost/.github/workflows/loadgate.yml@refs/tags/v11.0.1-rc2',
    LOADGATE_APPROVERS: '@release-lead, perf-owner',
  });
  assert.equal(env.workflowFile, 'loadgate.yml');
  assert.deepEqual(env.approvers, ['release-lead', 'perf-owner']);
  assert.throws(
    () => readGitHubEnv(context, { ...base, LOADGATE_APPROVERS: 'ok,`rm -rf`' }),
    (e: unknown) => e instanceof InputError && /env LOADGATE_APPROVERS(\[1\])?: expected GitHub logins/.test(e.message),
  );
  assert.throws(
    () => readGitHubEnv(context, { ...base, GITHUB_WORKFLOW_REF: 'nope' }),
    (e: unknown) => e instanceof InputError && /GITHUB_WORKFLOW_REF/.test(e.message),
  );
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
  const command = `gh workflow run loadgate.yml --repo ${s.owner}/${s.repo} -f candidate=${CANDIDATE} -f baseline=${BASELINE} -f continue-from=4242 -f max-repeats=3`;
  assert.ok(s.checkRuns[0]?.output.summary?.includes(command), 'check run summary');
  assert.ok((s.pulls[0]?.body ?? '').includes(command), 'report PR body');
  assert.match(s.pulls[0]?.body ?? '', /@release-lead may accept the risk/);
  assert.deepEqual(s.rejected, []);
});

test("a continuation's cost is the plan's: a new AWS bench for the extra pairs, each at its cap", async () => {
  const { loadGateConfig } = await import('../../src/config/load.ts');
  const { buildPlan } = await import('../../src/aws/bench-plan.ts');
  const { continuationEstimate } = await import('../../src/github/check-run-plan.ts');
  const config = await loadGateConfig('examples/aws-mattermost.yml');
  const tests = config.tests.map((t) => t.name);
  const two = continuationEstimate(config, tests, 'aws', 2);
  const plan = buildPlan({ ...config, repeats: 2, maxRepeats: 2 }, { dbSource: 'dump' });
  assert.ok(two && two.costUsd !== null);
  assert.equal(two.costUsd, plan.cost.totalUsd);
  assert.equal(two.seconds, plan.duration.totalSec);
  const one = continuationEstimate(config, tests, 'aws', 1)!;
  assert.ok(one.costUsd! < two.costUsd!, 'fewer pairs cost less');
});

test('publish with the config prices the continuation in the check run (local bench: its time, no AWS cost)', async (t) => {
  const { loadGateConfig } = await import('../../src/config/load.ts');
  const s = await new GitHubStandin({ tags: [BASELINE] }).start();
  t.after(() => s.close());
  s.addTag(CANDIDATE, s.commitOnDefaultBranch('rc', { VERSION: '1\n' }));
  const report = await writeReport(inconclusive());
  t.after(() => report.cleanup());
  const config = await loadGateConfig('test/github/fixtures/gate.yml');
  await publishFinish(contextFor(s), { checkName: 'loadgate', baseline: BASELINE, candidate: CANDIDATE, reportDir: report.dir, config });
  assert.match(s.checkRuns[0]?.output.summary ?? '', /-f continue-from=4242 -f max-repeats=3[\s\S]*At most about \S+ on the local bench \(no AWS cost\)/);
});

test('on AWS the advice asks for a continuation the workflow accepts, and provisioning budgets exactly the pairs it prices, for a first and a second continuation', async (t) => {
  const { loadGateConfig } = await import('../../src/config/load.ts');
  const { buildPlan } = await import('../../src/aws/bench-plan.ts');
  const { validateGateInputs } = await import('../../src/inputs/validate.ts');
  const config = await loadGateConfig('examples/aws-mattermost.yml');
  const versions = { baseline: 'v10.12.0', candidate: 'v11.0.1-rc2' };
  for (const [ran, suggested, advised, more] of [
    [3, 3, 6, 3],
    // Six more would not fit the five run jobs (five duets do): the advice asks for five.
    [6, 6, 11, 5],
  ] as const) {
    const s = await new GitHubStandin({ tags: [versions.baseline] }).start();
    t.after(() => s.close());
    s.addTag(versions.candidate, s.commitOnDefaultBranch('rc', { VERSION: '1\n' }));
    const v = verdictFile(
      'inconclusive',
      config.tests.map((x) => ({ ...undecided, test: x.name, id: `${x.name}.apiAvg` })),
      versions,
    );
    const report = await writeReport({ ...v, problems: [], decision: { ...v.decision, pairs: ran, maxRepeats: ran, suggestedMorePairs: suggested } });
    t.after(() => report.cleanup());
    await publishFinish(contextFor(s), { checkName: 'loadgate', ...versions, reportDir: report.dir, config, runnerLimitMinutes: 360 });
    const summary = s.checkRuns[0]?.output.summary ?? '';
    assert.match(summary, new RegExp(`-f continue-from=4242 -f max-repeats=${advised}\\n`), summary);
    const priced = /At most about \$(\d+\.\d\d) and/.exec(summary)?.[1];
    // What check-inputs and provisioning do with the advised inputs.
    const inputs = validateGateInputs(
      { ...versions, maxRepeats: String(advised), continueFrom: '4242', earlierPairs: String(ran), config: '.github/loadgate.yml' },
      config,
    );
    assert.equal(inputs.newPairsAtMost, more, `after ${ran} pairs`);
    const provisioned = buildPlan(
      { ...config, maxRepeats: inputs.newPairsAtMost, repeats: Math.min(config.repeats, inputs.newPairsAtMost) },
      { dbSource: 'dump' },
    );
    assert.equal(priced, provisioned.cost.totalUsd.toFixed(2), `after ${ran} pairs the advice prices what the bench is budgeted for`);
  }
});
