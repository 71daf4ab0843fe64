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

test('a summary over 65,535 characters violates GitHub\'s schema and is rejected and recorded', async () => {
  const before = s.rejected.length;
  const code = await status(octokit.rest.checks.create({ ...repo, name: 'x', head_sha: head, output: { title: 't', summary: 'x'.repeat(65_536) } }));
  assert.equal(code, 422);
  assert.equal(s.rejected.length, before + 1);
  assert.match(JSON.stringify(s.rejected.at(-1)), /maxLength/);
});

test('51 annotations in one request are rejected, 50 are accepted', async () => {
  const annotation = { path: 'a.yml', start_line: 1, end_line: 1, annotation_level: 'warning' as const, message: 'm' };
  const over = await status(octokit.rest.checks.create({ ...repo, name: 'x', head_sha: head, output: { title: 't', summary: 's', annotations: Array(51).fill(annotation) } }));
  assert.equal(over, 422);
  assert.match(JSON.stringify(s.rejected.at(-1)), /maxItems/);
  const ok = await status(octokit.rest.checks.create({ ...repo, name: 'x', head_sha: head, output: { title: 't', summary: 's', annotations: Array(50).fill(annotation) } }));
  assert.equal(ok, 200);
});

test('a conclusion outside GitHub\'s enum is rejected', async () => {
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
