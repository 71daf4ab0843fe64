import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGitHubClient, type GitHubClient } from '../../src/github/client.ts';
import { GitHubStandin, startStandin } from '../support/github-standin/server.ts';
import { TOKEN } from './fixtures.ts';

/** The stand-in itself: proof that it validates against GitHub's schema and keeps git state. */

let s: GitHubStandin;
let octokit: GitHubClient;
let head: string;
const repo = { owner: 'octo-org', repo: 'chat-server' };

before(async () => {
  s = await startStandin();
  head = s.branchHead('main') as string;
  octokit = createGitHubClient({ token: TOKEN, baseUrl: s.url, writeIntervalMs: 0, retries: 0, maskToken: false });
});
after(() => s.close());

async function status(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (error) {
    return (error as { status: number }).status;
  }
}

test("a summary over 65,535 characters violates GitHub's schema and is rejected and recorded", async () => {
  const before = s.rejected.length;
  const code = await status(octokit.rest.checks.create({ ...repo, name: 'x', head_sha: head, output: { title: 't', summary: 'x'.repeat(65_536) } }));
  assert.equal(code, 422);
  assert.equal(s.rejected.length, before + 1);
  assert.match(JSON.stringify(s.rejected.at(-1)), /maxLength/);
});

test('51 annotations in one request are rejected, 50 are accepted', async () => {
  const annotation = { path: 'a.yml', start_line: 1, end_line: 1, annotation_level: 'warning' as const, message: 'm' };
  const over = await status(
    octokit.rest.checks.create({ ...repo, name: 'x', head_sha: head, output: { title: 't', summary: 's', annotations: Array(51).fill(annotation) } }),
  );
  assert.equal(over, 422);
  assert.match(JSON.stringify(s.rejected.at(-1)), /maxItems/);
  const ok = await status(
    octokit.rest.checks.create({ ...repo, name: 'x', head_sha: head, output: { title: 't', summary: 's', annotations: Array(50).fill(annotation) } }),
  );
  assert.equal(ok, 200);
});

test("a conclusion outside GitHub's enum is rejected", async () => {
  const code = await status(
    octokit.request('POST /repos/{owner}/{repo}/check-runs', { ...repo, name: 'x', head_sha: head, status: 'completed', conclusion: 'passed' as never }),
  );
  assert.equal(code, 422);
  assert.match(JSON.stringify(s.rejected.at(-1)), /enum/);
});

test('a route outside the served operations is recorded as unmatched', async () => {
  const code = await status(octokit.request('GET /repos/{owner}/{repo}/issues', repo));
  assert.equal(code, 404);
  assert.deepEqual(s.unmatched.at(-1), { method: 'get', path: '/repos/octo-org/chat-server/issues' });
});

test('blobs hash like git, and refs with slashes resolve', async () => {
  const content = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0x0a]);
  const blob = await octokit.rest.git.createBlob({ ...repo, content: content.toString('base64'), encoding: 'base64' });
  const gitSha = execFileSync('git', ['hash-object', '--stdin'], { input: content }).toString().trim();
  assert.equal(blob.data.sha, gitSha);
  const tree = await octokit.rest.git.createTree({ ...repo, tree: [{ path: 'a/b.bin', mode: '100644', type: 'blob', sha: blob.data.sha }] });
  const commit = await octokit.rest.git.createCommit({ ...repo, message: 'm', tree: tree.data.sha, parents: [head] });
  await octokit.rest.git.createRef({ ...repo, ref: 'refs/heads/perf-report/v1.0.0-vs-v1.1.0', sha: commit.data.sha });
  const ref = await octokit.rest.git.getRef({ ...repo, ref: 'heads/perf-report/v1.0.0-vs-v1.1.0' });
  assert.equal(ref.data.object.sha, commit.data.sha);
  assert.ok(s.filesOnBranch('perf-report/v1.0.0-vs-v1.1.0').get('a/b.bin')?.equals(content));
  // git itself agrees on the tree hash (in a throw-away repository, never the work tree's).
  const scratch = mkdtempSync(join(tmpdir(), 'standin-git-'));
  try {
    execFileSync('git', ['init', '-q', scratch]);
    const mktree = (input: string) => execFileSync('git', ['-C', scratch, 'mktree', '--missing'], { input }).toString().trim();
    const subtree = mktree(`100644 blob ${blob.data.sha}\tb.bin\n`);
    assert.equal(tree.data.sha, mktree(`040000 tree ${subtree}\ta\n`));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});

test('a non-fast-forward ref update is refused unless forced', async () => {
  const tree = await octokit.rest.git.createTree({ ...repo, tree: [{ path: 'x.txt', mode: '100644', type: 'blob', content: 'x' }] });
  const orphan = await octokit.rest.git.createCommit({ ...repo, message: 'orphan', tree: tree.data.sha, parents: [] });
  const code = await status(octokit.rest.git.updateRef({ ...repo, ref: 'heads/main', sha: orphan.data.sha, force: false }));
  assert.equal(code, 422);
  assert.equal(s.branchHead('main'), head);
});

/** A GitHub App installed on the product's owner (the product and the reports repository), without pull-request access. */
async function appStandin(permissions: Record<string, 'read' | 'write'>) {
  const standin = new GitHubStandin({
    owner: 'acme',
    repo: 'chat-server',
    tokens: { [TOKEN]: { permissions: { checks: 'write', contents: 'write', 'pull-requests': 'write' }, actions: true } },
    apps: [
      {
        clientId: 'Iv23liLoadgate',
        id: 901,
        slug: 'loadgate-acme',
        permissions,
        installations: [{ id: 71, account: 'acme', repositories: ['chat-server', 'perf-reports'] }],
      },
    ],
  });
  const reports = standin.addRepository({ owner: 'acme', repo: 'perf-reports' });
  standin.addRepository({ owner: 'acme', repo: 'not-installed' });
  await standin.start();
  return { standin, reports, app: standin.apps[0]! };
}

/** actions/create-github-app-token's calls (its act stand-in), against the stand-in. */
async function mint(standin: GitHubStandin, inputs: Record<string, string>): Promise<Record<string, string>> {
  const { main } = await import('../support/github-standin/act-create-github-app-token-action/mint.mjs');
  const dir = mkdtempSync(join(tmpdir(), 'standin-mint-'));
  try {
    const output = join(dir, 'out');
    const app = standin.apps[0]!;
    await main({
      GITHUB_REPOSITORY: standin.fullName,
      GITHUB_REPOSITORY_OWNER: standin.owner,
      GITHUB_OUTPUT: output,
      INPUT_CLIENT_ID: app.clientId,
      INPUT_PRIVATE_KEY: app.privateKey,
      INPUT_GITHUB_API_URL: standin.url,
      ...inputs,
    });
    const { readFileSync } = await import('node:fs');
    return Object.fromEntries(
      readFileSync(output, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split('=', 2) as [string, string]),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a GitHub App mints installation tokens as GitHub does: only the permissions it was granted, only where it is installed, each token reaching only its repositories', async (t) => {
  const { standin, reports } = await appStandin({ checks: 'write', contents: 'write' });
  t.after(() => standin.close());
  const ok = await mint(standin, { 'INPUT_PERMISSION-CHECKS': 'write', 'INPUT_PERMISSION-CONTENTS': 'read' });
  assert.match(ok.token ?? '', /^ghs_/);
  assert.equal(ok['app-slug'], 'loadgate-acme');
  const { atMs: _at, ...last } = standin.minted.at(-1)!;
  assert.deepEqual(last, { app: 'loadgate-acme', repositories: ['acme/chat-server'], permissions: { metadata: 'read', checks: 'write', contents: 'read' } });
  await assert.rejects(mint(standin, { 'INPUT_PERMISSION-PULL-REQUESTS': 'write' }), /The permissions requested are not granted to this installation\./);
  await assert.rejects(mint(standin, { INPUT_OWNER: 'acme', INPUT_REPOSITORIES: 'not-installed' }), /Not Found/);
  await assert.rejects(mint(standin, { INPUT_OWNER: 'other-org', INPUT_REPOSITORIES: 'perf-reports' }), /Not Found/);
  // The token for the reports repository reaches it, and not the product repository.
  const forReports = await mint(standin, { INPUT_OWNER: 'acme', INPUT_REPOSITORIES: 'perf-reports', 'INPUT_PERMISSION-CONTENTS': 'write' });
  const client = createGitHubClient({ token: forReports.token as string, baseUrl: standin.url, writeIntervalMs: 0, retries: 0, maskToken: false });
  assert.equal((await client.rest.repos.get({ owner: 'acme', repo: 'perf-reports' })).data.full_name, 'acme/perf-reports');
  assert.equal(await status(client.rest.repos.get({ owner: 'acme', repo: 'chat-server' })), 404);
  // The workflow's own token reaches only the product repository.
  const workflowToken = createGitHubClient({ token: TOKEN, baseUrl: standin.url, writeIntervalMs: 0, retries: 0, maskToken: false });
  assert.equal(await status(workflowToken.rest.repos.get({ owner: 'acme', repo: 'perf-reports' })), 404);
  assert.equal(reports.requests.filter((r) => r.status === 200).length, 1, 'the reports repository answered the reports token alone');
  assert.deepEqual(standin.rejected, []);
});

test("a check run can be completed only by the App that created it (GitHub's 403 for any other)", async (t) => {
  const { standin } = await appStandin({ checks: 'write', contents: 'read' });
  t.after(() => standin.close());
  const { token } = await mint(standin, { 'INPUT_PERMISSION-CHECKS': 'write' });
  const app = createGitHubClient({ token: token as string, baseUrl: standin.url, writeIntervalMs: 0, retries: 0, maskToken: false });
  const actions = createGitHubClient({ token: TOKEN, baseUrl: standin.url, writeIntervalMs: 0, retries: 0, maskToken: false });
  const sha = standin.branchHead('main') as string;
  const run = await app.rest.checks.create({ owner: 'acme', repo: 'chat-server', name: 'loadgate', head_sha: sha, status: 'in_progress' });
  assert.equal(run.data.app?.slug, 'loadgate-acme');
  const byActions = actions.rest.checks.update({ owner: 'acme', repo: 'chat-server', check_run_id: run.data.id, status: 'completed', conclusion: 'success' });
  await assert.rejects(byActions, /check run can only be modified by the GitHub App that created it/);
  await app.rest.checks.update({
    owner: 'acme',
    repo: 'chat-server',
    check_run_id: run.data.id,
    status: 'completed',
    conclusion: 'action_required',
    details_url: 'https://example.invalid/x',
  });
  assert.equal(standin.checkRuns[0]?.conclusion, 'action_required');
});
