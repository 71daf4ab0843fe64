import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { publishFinish, publishStart } from '../../src/github/publish.ts';
import { planGate } from '../../src/github/check-run-plan.ts';
import { parseGateConfig } from '../../src/config/load.ts';
import { GitHubStandin, startStandin } from '../support/github-standin/server.ts';
import { BASELINE, CANDIDATE, check, contextFor, verdictFile, writeReport } from './fixtures.ts';
import type { RunResult } from '../../src/results/schema.ts';

const BRANCH = `perf-report/${BASELINE}-vs-${CANDIDATE}`;
const DIR = `reports/${BASELINE}-vs-${CANDIDATE}`;

const config = parseGateConfig(
  {
    version: 1,
    name: 'synapse-local',
    target: { system: 'synapse' },
    bench: { kind: 'local' },
    tests: [{ type: 'bounded', users: 40, rampUp: '30s', duration: '2m30s' }],
  },
  'inline',
);

let warm: GitHubStandin;
let candidateSha: string;

// Loads GitHub's OpenAPI description once; every test then starts its own repository.
before(async () => {
  warm = await startStandin();
});
after(async () => {
  await warm.close();
});

/** A fresh repository state per test, sharing the loaded OpenAPI validator. */
async function freshStandin(options: ConstructorParameters<typeof GitHubStandin>[0] = {}): Promise<GitHubStandin> {
  const s = await new GitHubStandin({ tags: ['v1.1.0', BASELINE], ...options }).start();
  candidateSha = s.commitOnDefaultBranch('release 1.3.0-rc1', { VERSION: '1.3.0-rc1\n' });
  s.addTag(CANDIDATE, candidateSha, true);
  return s;
}

function assertSchemaClean(s: GitHubStandin): void {
  assert.deepEqual(s.rejected, [], "every request matched GitHub's OpenAPI schema");
  assert.deepEqual(s.unmatched, [], 'every request hit a GitHub route');
}

function plan() {
  return planGate(config, { baseline: BASELINE, candidate: CANDIDATE, tests: [], repeats: 1, bench: 'local' });
}

for (const [verdict, conclusion] of [
  ['pass', 'success'],
  ['fail', 'failure'],
  ['inconclusive', 'action_required'],
] as const) {
  test(`start then finish: ${verdict} concludes ${conclusion}, report PR holds the files`, async (t) => {
    const s = await freshStandin();
    t.after(() => s.close());
    const ctx = contextFor(s);
    const started = await publishStart(ctx, { checkName: 'loadgate', candidate: CANDIDATE, plan: plan() });
    assert.equal(started.outputs.sha, candidateSha, 'the annotated candidate tag resolves to its commit');
    assert.equal(s.checkRuns.length, 1);
    assert.equal(s.checkRuns[0]?.status, 'in_progress');
    assert.match(s.checkRuns[0]?.output.summary ?? '', /Estimated duration: up to/);

    const checks = verdict === 'fail' ? [check({ verdict: 'fail', candidate: 170, deltaPct: 35, reason: 'p99 up 35%, tolerance 20%' })] : [check()];
    const report = await writeReport(verdictFile(verdict, checks));
    t.after(() => report.cleanup());
    const result = await publishFinish(ctx, {
      checkName: 'loadgate',
      baseline: BASELINE,
      candidate: CANDIDATE,
      checkRunId: Number(started.outputs['check-run-id']),
      reportDir: report.dir,
    });

    assert.equal(result.conclusion, conclusion);
    assert.equal(s.checkRuns.length, 1, 'the started check run was completed, not a second one created');
    const run = s.checkRuns[0];
    assert.equal(run?.status, 'completed');
    assert.equal(run?.conclusion, conclusion);
    assert.equal(run?.details_url, `${s.repoHtmlUrl}/pull/1`);
    assert.match(run?.output.summary ?? '', /\| Test \| Metric \|/);
    assert.match(run?.output.summary ?? '', /pull\/1\)/);

    assert.equal(s.pulls.length, 1);
    assert.equal(s.pulls[0]?.head, BRANCH);
    assert.equal(s.pulls[0]?.base, 'main');
    assert.match(s.pulls[0]?.body ?? '', /\| bounded \| API p99 \|/);
    const files = s.filesOnBranch(BRANCH);
    for (const [path, content] of Object.entries(report.files)) {
      assert.ok(files.get(`${DIR}/${path}`)?.equals(content), `${path} is on the branch byte for byte`);
    }
    assert.ok(files.has('README.md'), 'the branch keeps the default branch files');
    assertSchemaClean(s);
  });
}

test('a re-run adds a commit to the same branch and updates the same PR; stale files go', async (t) => {
  const s = await freshStandin();
  t.after(() => s.close());
  const ctx = contextFor(s);
  const first = await writeReport(verdictFile('fail', [check({ verdict: 'fail', reason: 'regressed' })]), {
    'graphs/old-only.png': Buffer.from([0x89, 0x50, 0, 0xff]),
  });
  t.after(() => first.cleanup());
  const r1 = await publishFinish(ctx, { checkName: 'loadgate', baseline: BASELINE, candidate: CANDIDATE, reportDir: first.dir });
  assert.equal(r1.conclusion, 'failure');
  const head1 = s.branchHead(BRANCH);

  const second = await writeReport(verdictFile('pass'));
  t.after(() => second.cleanup());
  const r2 = await publishFinish(ctx, { checkName: 'loadgate', baseline: BASELINE, candidate: CANDIDATE, reportDir: second.dir });
  assert.equal(r2.conclusion, 'success');
  assert.equal(r2.report?.pullCreated, false);

  assert.equal(s.pulls.length, 1, 'one PR per comparison');
  assert.match(s.pulls[0]?.body ?? '', /PASS/);
  assert.match(s.pulls[0]?.title ?? '', /PASS/);
  const head2 = s.branchHead(BRANCH) as string;
  assert.notEqual(head2, head1);
  assert.deepEqual(s.git.commits.get(head2)?.parents, [head1], 'the new commit sits on top of the previous one');
  const files = s.filesOnBranch(BRANCH);
  assert.equal(files.has(`${DIR}/graphs/old-only.png`), false, 'a file the new report lacks is removed');
  assert.ok(files.get(`${DIR}/verdict.json`)?.toString().includes('"pass"'));
  const branches = [...s.refs.keys()].filter((r) => r.startsWith('refs/heads/perf-report/'));
  assert.deepEqual(branches, [`refs/heads/${BRANCH}`]);

  // Publishing the same report again changes nothing on the branch.
  const r3 = await publishFinish(ctx, { checkName: 'loadgate', baseline: BASELINE, candidate: CANDIDATE, reportDir: second.dir });
  assert.equal(r3.report?.committed, false);
  assert.equal(s.branchHead(BRANCH), head2);
  assert.equal(s.pulls.length, 1);
  assertSchemaClean(s);
});

test('no verdict.json: the check run is action_required, never success, and no PR is opened', async (t) => {
  const s = await freshStandin();
  t.after(() => s.close());
  const ctx = contextFor(s);
  const started = await publishStart(ctx, { checkName: 'loadgate', candidate: CANDIDATE, plan: plan() });
  const report = await writeReport(null);
  t.after(() => report.cleanup());
  const result = await publishFinish(ctx, {
    checkName: 'loadgate',
    baseline: BASELINE,
    candidate: CANDIDATE,
    checkRunId: Number(started.outputs['check-run-id']),
    reportDir: report.dir,
    gateProblem: 'the gate job ended with result "failure"',
  });
  assert.equal(result.verdict, null);
  assert.equal(s.checkRuns[0]?.conclusion, 'action_required');
  assert.equal(s.checkRuns[0]?.details_url, 'https://github.com/octo-org/chat-server/actions/runs/4242');
  assert.match(s.checkRuns[0]?.output.summary ?? '', /did not produce a verdict[\s\S]*result "failure"/);
  assert.equal(s.pulls.length, 0);
  assertSchemaClean(s);
});

test('a verdict for other versions is not published as this comparison', async (t) => {
  const s = await freshStandin();
  t.after(() => s.close());
  const report = await writeReport(verdictFile('pass', [check()], { baseline: 'v1.1.0', candidate: CANDIDATE }));
  t.after(() => report.cleanup());
  const result = await publishFinish(contextFor(s), { checkName: 'loadgate', baseline: BASELINE, candidate: CANDIDATE, reportDir: report.dir });
  assert.equal(result.conclusion, 'action_required');
  assert.match(s.checkRuns[0]?.output.summary ?? '', /not v1\.2\.0 with v1\.3\.0-rc1/);
  assertSchemaClean(s);
});

test("a summary beyond 65,535 characters is cut to fit and GitHub's schema accepts it", async (t) => {
  const s = await freshStandin();
  t.after(() => s.close());
  const many = Array.from({ length: 900 }, (_, i) =>
    check({ id: `c${i}`, metric: `handler /api/v4/endpoint/number/${i} p99`, verdict: i % 3 ? 'pass' : 'warn', reason: 'x'.repeat(40) }),
  );
  const report = await writeReport(verdictFile('pass', many));
  t.after(() => report.cleanup());
  await publishFinish(contextFor(s), { checkName: 'loadgate', baseline: BASELINE, candidate: CANDIDATE, reportDir: report.dir });
  const summary = s.checkRuns[0]?.output.summary ?? '';
  assert.ok(Buffer.byteLength(summary) <= 65_535, `summary is ${Buffer.byteLength(summary)} bytes`);
  assert.ok(summary.length > 60_000, 'the cut keeps as much as fits');
  assert.match(summary, /cut to fit GitHub's 65535-byte limit/);
  assert.ok(Buffer.byteLength(s.pulls[0]?.body ?? '') <= 65_536);
  assertSchemaClean(s);
});

test('the summary limit is counted in UTF-8 bytes, as GitHub enforces it, not in characters', async (t) => {
  const s = await freshStandin();
  t.after(() => s.close());
  // Emoji-heavy reasons: about 30,000 characters but well over 65,535 bytes.
  const many = Array.from({ length: 300 }, (_, i) => check({ id: `c${i}`, metric: `m${i}`, verdict: 'warn', reason: '⚠️🟡'.repeat(30) }));
  const report = await writeReport(verdictFile('pass', many));
  t.after(() => report.cleanup());
  await publishFinish(contextFor(s), { checkName: 'loadgate', baseline: BASELINE, candidate: CANDIDATE, reportDir: report.dir });
  const summary = s.checkRuns[0]?.output.summary ?? '';
  assert.ok(summary.length < 65_535, 'fewer characters than the limit');
  assert.ok(Buffer.byteLength(summary) <= 65_535, `but at most 65,535 bytes (${Buffer.byteLength(summary)})`);
  assert.match(summary, /cut to fit/);
  assert.ok(!summary.includes('\uFFFD'), 'no character was cut in half');
  assertSchemaClean(s);
});

test('more than 50 annotations are sent in batches of at most 50', async (t) => {
  const s = await freshStandin();
  t.after(() => s.close());
  const failing = Array.from({ length: 120 }, (_, i) => check({ id: `f${i}`, verdict: 'fail', reason: `check ${i} regressed` }));
  const report = await writeReport(verdictFile('fail', failing));
  t.after(() => report.cleanup());
  await publishFinish(contextFor(s), {
    checkName: 'loadgate',
    baseline: BASELINE,
    candidate: CANDIDATE,
    reportDir: report.dir,
    configPath: '.github/loadgate.yml',
  });
  const run = s.checkRuns[0];
  assert.equal(run?.annotations.length, 120);
  assert.equal(run?.conclusion, 'failure');
  const checkWrites = s.requests.filter((r) => r.operation?.startsWith('checks/') && r.method !== 'get');
  assert.equal(checkWrites.length, 3, 'one create and two updates: 50 + 50 + 20');
  assertSchemaClean(s);
});

test('a transient 502 from GitHub is retried', async (t) => {
  const s = await freshStandin();
  t.after(() => s.close());
  s.faults.set('git/create-blob', { status: 502, times: 1 });
  const report = await writeReport(verdictFile('pass'));
  t.after(() => report.cleanup());
  const result = await publishFinish(contextFor(s), { checkName: 'loadgate', baseline: BASELINE, candidate: CANDIDATE, reportDir: report.dir });
  assert.equal(result.conclusion, 'success');
  assert.equal(s.requests.filter((r) => r.status === 502).length, 1);
  assertSchemaClean(s);
});

test('a report containing the token is refused: nothing is committed, the check run is completed and says which file', async (t) => {
  const s = await freshStandin();
  t.after(() => s.close());
  const report = await writeReport(verdictFile('pass'), { 'logs/k6.txt': 'Authorization: token test-token-0123456789\n' });
  t.after(() => report.cleanup());
  const result = await publishFinish(contextFor(s), { checkName: 'loadgate', baseline: BASELINE, candidate: CANDIDATE, reportDir: report.dir });
  assert.match(result.reportError?.message ?? '', /report file logs\/k6\.txt contains the value of a token or credential/);
  assert.ok(!result.reportError?.message.includes('test-token-0123456789'));
  assert.equal(s.branchHead(BRANCH), undefined);
  assert.equal(s.requests.filter((r) => r.operation?.startsWith('git/') && r.method !== 'get').length, 0, 'no git write reached GitHub');
  assert.equal(s.pulls.length, 0);
  const run = s.checkRuns[0];
  assert.equal(run?.conclusion, 'success', 'the verdict is still posted');
  assert.match(run?.output.summary ?? '', /logs\/k6\.txt contains/);
  assert.ok(!JSON.stringify(s.checkRuns).includes('test-token-0123456789'), 'the token is nowhere in the check run');
});

test('a verdict whose text holds a secret still completes the check run, with the text withheld', async (t) => {
  const s = await freshStandin();
  t.after(() => s.close());
  const v = verdictFile('fail', [check({ verdict: 'fail', reason: 'log said AKIAABCDEFGHIJKLMNOP' })]);
  const report = await writeReport(v);
  t.after(() => report.cleanup());
  const result = await publishFinish(contextFor(s), { checkName: 'loadgate', baseline: BASELINE, candidate: CANDIDATE, reportDir: report.dir });
  assert.ok(result.reportError, 'the report (verdict.json) is refused too');
  assert.equal(s.checkRuns[0]?.conclusion, 'failure');
  assert.ok(!JSON.stringify(s.checkRuns).includes('AKIAABCDEFGHIJKLMNOP'));
  assert.match(s.checkRuns[0]?.output.summary ?? '', /contained the value of a secret/);
});

test("a reports repository gets the report pull request, written with its own token, under the product's name; the check run stays on the candidate", async (t) => {
  const product = await freshStandin();
  t.after(() => product.close());
  const reportsToken = 'reports-token-0123456789';
  const reports = product.addRepository({ owner: 'octo-org', repo: 'perf-reports' });
  product.tokens[reportsToken] = { permissions: { contents: 'write', 'pull-requests': 'write', metadata: 'read' }, repositories: ['octo-org/perf-reports'] };
  const report = await writeReport(verdictFile('pass'));
  t.after(() => report.cleanup());
  const result = await publishFinish(contextFor(product), {
    checkName: 'loadgate',
    baseline: BASELINE,
    candidate: CANDIDATE,
    reportDir: report.dir,
    reports: { owner: 'octo-org', repo: 'perf-reports', token: reportsToken },
  });
  const branch = `perf-report/octo-org/chat-server/${BASELINE}-vs-${CANDIDATE}`;
  assert.equal(result.reportError, undefined, String(result.reportError));
  assert.equal(reports.pulls.length, 1, 'the PR is in the reports repository');
  assert.equal(reports.pulls[0]?.head, branch);
  assert.match(reports.pulls[0]?.title ?? '', /^Performance report: octo-org\/chat-server v1\.2\.0 vs v1\.3\.0-rc1 /);
  assert.ok(reports.filesOnBranch(branch).has(`reports/octo-org/chat-server/${BASELINE}-vs-${CANDIDATE}/verdict.json`));
  assert.equal(product.pulls.length, 0, 'none in the product repository');
  assert.ok(!product.refs.has(`refs/heads/${branch}`) && !product.refs.has(`refs/heads/${BRANCH}`), 'no report branch in the product repository');
  assert.equal(product.checkRuns.length, 1, 'the check run is on the candidate');
  assert.equal(product.checkRuns[0]?.conclusion, 'success');
  assert.match(
    product.checkRuns[0]?.output.summary ?? '',
    /github\.com\/octo-org\/perf-reports\/pull\/1/,
    'the check run links the PR in the reports repository',
  );
  assert.deepEqual(product.rejected, []);
});

test('two products gating the same version labels share a reports repository: each report keeps its own branch, directory and pull request', async (t) => {
  const first = await freshStandin();
  t.after(() => first.close());
  const second = first.addRepository({ owner: 'octo-org', repo: 'push-proxy', tags: [BASELINE] });
  const secondSha = second.commitOnDefaultBranch('release', { VERSION: '1.3.0-rc1\n' });
  second.addTag(CANDIDATE, secondSha);
  const reports = first.addRepository({ owner: 'octo-org', repo: 'perf-reports' });
  first.tokens['second-token-0123456789'] = {
    permissions: { checks: 'write', contents: 'write', 'pull-requests': 'write' },
    actions: true,
    repositories: ['octo-org/push-proxy'],
  };
  first.tokens['reports-token-0123456789'] = { permissions: { contents: 'write', 'pull-requests': 'write' }, repositories: ['octo-org/perf-reports'] };
  const toReports = { owner: 'octo-org', repo: 'perf-reports', token: 'reports-token-0123456789' };
  const pass = await writeReport(verdictFile('pass'));
  const fail = await writeReport(verdictFile('fail', [check({ verdict: 'fail' })]));
  t.after(() => Promise.all([pass.cleanup(), fail.cleanup()]));
  await publishFinish(contextFor(first), { checkName: 'loadgate', baseline: BASELINE, candidate: CANDIDATE, reportDir: pass.dir, reports: toReports });
  const secondCtx = contextFor(first, 'second-token-0123456789');
  await publishFinish(
    { ...secondCtx, env: { ...secondCtx.env, repo: 'push-proxy' } },
    { checkName: 'loadgate', baseline: BASELINE, candidate: CANDIDATE, reportDir: fail.dir, reports: toReports },
  );
  assert.deepEqual(reports.pulls.map((p) => p.head).sort(), [
    `perf-report/octo-org/chat-server/${BASELINE}-vs-${CANDIDATE}`,
    `perf-report/octo-org/push-proxy/${BASELINE}-vs-${CANDIDATE}`,
  ]);
  const verdictOn = (product: string) =>
    JSON.parse(
      reports
        .filesOnBranch(`perf-report/octo-org/${product}/${BASELINE}-vs-${CANDIDATE}`)
        .get(`reports/octo-org/${product}/${BASELINE}-vs-${CANDIDATE}/verdict.json`)
        ?.toString('utf8') ?? 'null',
    ) as { verdict: string } | null;
  assert.equal(verdictOn('chat-server')?.verdict, 'pass', "the first product's report is its own");
  assert.equal(verdictOn('push-proxy')?.verdict, 'fail', "the second product's report is its own");
  assert.deepEqual([first.checkRuns[0]?.conclusion, second.checkRuns[0]?.conclusion], ['success', 'failure'], 'each check run on its own product');
  assert.deepEqual(first.rejected, []);
});

test('a reports repository without a token that can write there: the check run still gets the verdict and says what to pass', async (t) => {
  const product = await freshStandin();
  t.after(() => product.close());
  const report = await writeReport(verdictFile('pass'));
  t.after(() => report.cleanup());
  const result = await publishFinish(contextFor(product), {
    checkName: 'loadgate',
    baseline: BASELINE,
    candidate: CANDIDATE,
    reportDir: report.dir,
    reports: { owner: 'octo-org', repo: 'perf-reports', token: undefined },
  });
  assert.match(String(result.reportError), /reports-repository octo-org\/perf-reports: no token that can write there .*pass the reports-token secret/);
  assert.equal(product.checkRuns[0]?.conclusion, 'success');
  assert.equal(product.pulls.length, 0);
});

test("the report PR lists the commits between the two release tags that touched the profile's grown functions' files", async (t) => {
  const { compareAndReport } = await import('../../src/compare/compare-and-report.ts');
  const { duets } = await import('../support/profiles.ts');
  const { withTempDir } = await import('../support/runs.ts');
  const VENV = '/cache/synapse/1.163.2/lib/python3.11/site-packages';
  // Recorded duets with extra CPU in load_rows, as if that function were Synapse's own.
  const asSynapse = (r: RunResult, version: string): RunResult => ({
    ...r,
    target: { ...r.target, version },
    ...(r.profile
      ? { profile: { ...r.profile, frames: r.profile.frames.map((f) => (f.file === 'workload.py' ? { ...f, file: `${VENV}/synapse/storage/events.py` } : f)) } }
      : {}),
  });
  const recorded = duets('inj', 3);
  // The gate runs in Synapse's own repository here, so one stand-in serves both the report PR and the tags.
  const s = await new GitHubStandin({ owner: 'element-hq', repo: 'synapse', tags: [] }).start();
  t.after(() => s.close());
  const c0 = s.commitOnDefaultBranch('1.162.0', { 'synapse/storage/events.py': 'def load_rows():\n    pass\n' });
  s.addTag('v1.162.0', c0, true);
  const c1 = s.commitOnDefaultBranch('Hash every row (#77)', { 'synapse/storage/events.py': 'def load_rows():\n    hash()\n' });
  const c2 = s.commitOnDefaultBranch('Docs', { 'docs/x.md': 'x\n' });
  s.addTag('v1.163.2', c2, true);
  await withTempDir(async (dir) => {
    await compareAndReport({
      baseline: recorded.baseline.map((r) => asSynapse(r, '1.162.0')),
      candidate: recorded.candidate.map((r) => asSynapse(r, '1.163.2')),
      outDir: dir,
    });
    const result = await publishFinish(contextFor(s), { checkName: 'loadgate', baseline: '1.162.0', candidate: '1.163.2', sha: c2, reportDir: dir });
    assert.equal(result.reportError, undefined, String(result.reportError));
  });
  assertSchemaClean(s);
  const body = s.pulls[0]?.body ?? '';
  assert.match(body, /### The changed code behind the hot spots/);
  assert.match(body, /\[v1\.162\.0…v1\.163\.2\]\(https:\/\/github\.com\/element-hq\/synapse\/compare\/v1\.162\.0\.\.\.v1\.163\.2\)/);
  assert.ok(body.includes(`- \`synapse/storage/events.py\` (\`load_rows\``), body);
  assert.ok(body.includes(`[${c1.slice(0, 7)}](https://github.com/element-hq/synapse/commit/${c1}) Hash every row (\\#77)`), body);
  assert.ok(!body.includes(c2.slice(0, 7)), 'a commit that touched no hot file is not listed');
});

test("a publish job left without the GitHub App's token still completes a check run: the App's cannot be touched by another, so the verdict goes on one of the workflow's, saying why", async (t) => {
  const s = await freshStandin({
    owner: 'octo-org',
    apps: [
      {
        clientId: 'Iv23liLoadgate',
        id: 901,
        slug: 'loadgate-octo',
        permissions: { checks: 'write', contents: 'write', pull_requests: 'write' },
        installations: [{ id: 7, account: 'octo-org', repositories: 'all' }],
      },
    ],
  });
  t.after(() => s.close());
  const { main } = await import('../support/github-standin/act-create-github-app-token-action/mint.mjs');
  const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'lg-mint-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const app = s.apps[0]!;
  await main({
    GITHUB_REPOSITORY: s.fullName,
    GITHUB_REPOSITORY_OWNER: s.owner,
    GITHUB_OUTPUT: join(dir, 'out'),
    INPUT_CLIENT_ID: app.clientId,
    INPUT_PRIVATE_KEY: app.privateKey,
    INPUT_GITHUB_API_URL: s.url,
    'INPUT_PERMISSION-CHECKS': 'write',
    'INPUT_PERMISSION-CONTENTS': 'read',
  });
  const appToken = /^token=(.+)$/m.exec(readFileSync(join(dir, 'out'), 'utf8'))?.[1] as string;
  const started = await publishStart(contextFor(s, appToken), { checkName: 'loadgate', candidate: CANDIDATE, plan: plan() });
  const report = await writeReport(verdictFile('pass'));
  t.after(() => report.cleanup());
  const tokenProblem = "the GitHub App's token for the check run and the report could not be minted in the publish job";
  const result = await publishFinish(contextFor(s), {
    checkName: 'loadgate',
    baseline: BASELINE,
    candidate: CANDIDATE,
    reportDir: report.dir,
    checkRunId: Number(started.outputs['check-run-id']),
    tokenProblem,
  });
  assert.equal(result.conclusion, 'success');
  const runs = s.checkRuns.filter((r) => r.name === 'loadgate');
  assert.deepEqual(
    runs.map((r) => [r.app.slug, r.status]),
    [
      ['loadgate-octo', 'in_progress'],
      ['github-actions', 'completed'],
    ],
  );
  assert.match(
    runs[1]?.output.summary ?? '',
    /Published without the GitHub App's token\*\*: the GitHub App's token for the check run and the report could not be minted/,
  );
  assertSchemaClean(s);
});

test("a gate posted by the workflow's token after one posted by a GitHub App (or the other way) starts a check run of its own: it may not take over another App's", async (t) => {
  const s = await freshStandin({
    apps: [
      {
        clientId: 'Iv23liLoadgate',
        id: 901,
        slug: 'loadgate-octo',
        permissions: { checks: 'write', contents: 'read' },
        installations: [{ id: 7, account: 'octo-org', repositories: 'all' }],
      },
    ],
  });
  t.after(() => s.close());
  const { main } = await import('../support/github-standin/act-create-github-app-token-action/mint.mjs');
  const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'lg-mint-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const app = s.apps[0]!;
  await main({
    GITHUB_REPOSITORY: s.fullName,
    GITHUB_REPOSITORY_OWNER: s.owner,
    GITHUB_OUTPUT: join(dir, 'out'),
    INPUT_CLIENT_ID: app.clientId,
    INPUT_PRIVATE_KEY: app.privateKey,
    INPUT_GITHUB_API_URL: s.url,
  });
  const appToken = /^token=(.+)$/m.exec(readFileSync(join(dir, 'out'), 'utf8'))?.[1] as string;
  await publishStart(contextFor(s, appToken), { checkName: 'loadgate', candidate: CANDIDATE, plan: plan() });
  const log: string[] = [];
  const second = await publishStart(contextFor(s, undefined, log), { checkName: 'loadgate', candidate: CANDIDATE, plan: plan() });
  assert.deepEqual(
    s.checkRuns.map((r) => [r.app.slug, r.status]),
    [
      ['loadgate-octo', 'in_progress'],
      ['github-actions', 'in_progress'],
    ],
  );
  assert.equal(second.outputs['check-run-id'], s.checkRuns[1]?.id);
  assert.match(log.join('\n'), /belongs to another GitHub App/);
  assertSchemaClean(s);
});
