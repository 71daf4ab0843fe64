import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { GitHubRepoApi } from '../../src/github/api.ts';
import { changedCommits } from '../../src/github/changed-commits.ts';
import { createGitHubClient } from '../../src/github/client.ts';
import { changedCodeSection } from '../../src/report/changed-code.ts';
import { chatServerOf } from '../../src/chat-servers/registry.ts';
import { mattermostRepoPath } from '../../src/chat-servers/mattermost/chat-server.ts';
import { GitHubStandin, startStandin } from '../support/github-standin/server.ts';
import { TOKEN } from './fixtures.ts';

// Loads GitHub's OpenAPI description once, which validates every request.
let warm: GitHubStandin;
before(async () => {
  warm = await startStandin();
});
after(async () => {
  await warm.close();
});

const VENV = '/cache/synapse/1.163.2/lib/python3.11/site-packages';

test('each adapter names its repository and maps a profile file into it', () => {
  const synapse = chatServerOf('synapse').source;
  assert.deepEqual([synapse.owner, synapse.repo, synapse.tag('1.163.2'), synapse.tag('1.164.0rc1')], ['element-hq', 'synapse', 'v1.163.2', 'v1.164.0rc1']);
  assert.equal(synapse.path(`${VENV}/synapse/handlers/message.py`), 'synapse/handlers/message.py');
  assert.equal(synapse.path(`${VENV}/twisted/internet/base.py`), undefined, 'a dependency');
  const mattermost = chatServerOf('mattermost').source;
  assert.deepEqual([mattermost.owner, mattermost.repo, mattermost.tag('v10.12.0')], ['mattermost', 'mattermost', 'v10.12.0']);
  assert.equal(mattermostRepoPath('github.com/mattermost/mattermost/server/v8/channels/app/post.go'), 'server/channels/app/post.go');
  assert.equal(mattermostRepoPath('github.com/mattermost/mattermost/server/public/model/post.go'), 'server/public/model/post.go');
  assert.equal(mattermostRepoPath('/home/runner/work/mattermost/mattermost/server/channels/app/post.go'), 'server/channels/app/post.go');
  assert.equal(mattermostRepoPath('runtime/proc.go'), undefined);
});

test('the commits between the two tags that touched the hot files, through the compare API, as links in the report', async (t) => {
  const s = await new GitHubStandin({ owner: 'element-hq', repo: 'synapse', tags: [] }).start();
  t.after(() => s.close());
  const c0 = s.commitOnDefaultBranch('1.162.0', {
    'synapse/handlers/message.py': 'def create_event():\n    pass\n',
    'synapse/storage/events.py': 'def persist():\n    pass\n',
  });
  s.addTag('v1.162.0', c0, true);
  const c1 = s.commitOnDefaultBranch('Hash every event twice (#123)\n\nlonger body', { 'synapse/storage/events.py': 'def persist():\n    hash()\n    pass\n' });
  const c2 = s.commitOnDefaultBranch('Docs', { 'docs/x.md': 'x\n' });
  s.addTag('v1.163.2', c2);
  s.commitOnDefaultBranch('after the candidate', { 'synapse/storage/events.py': 'def persist():\n    pass\n' });

  const api = new GitHubRepoApi(
    createGitHubClient({ token: TOKEN, baseUrl: s.url, writeIntervalMs: 0, retries: 0, maskToken: false }),
    'element-hq',
    'synapse',
  );
  const result = await changedCommits(api, chatServerOf('synapse').source, { baseline: '1.162.0', candidate: '1.163.2' }, [
    { name: 'persist', file: `${VENV}/synapse/storage/events.py` },
    { name: 'create_event', file: `${VENV}/synapse/handlers/message.py` },
    { name: 'runUntilCurrent', file: `${VENV}/twisted/internet/base.py` },
  ]);
  assert.deepEqual(s.rejected, [], "every request matched GitHub's OpenAPI schema");
  assert.deepEqual(s.unmatched, []);
  assert.equal(result.totalCommits, 2);
  assert.equal(result.truncated, false);
  assert.equal(result.compareUrl, 'https://github.com/element-hq/synapse/compare/v1.162.0...v1.163.2');
  assert.deepEqual(
    result.files.map((f) => [f.path, f.functions, f.additions, f.commits.map((c) => [c.sha, c.title])]),
    [['synapse/storage/events.py', ['persist'], 1, [[c1, 'Hash every event twice (#123)']]]],
    "only the range's commit, not the later one",
  );
  assert.deepEqual(result.untouched, ['synapse/handlers/message.py']);
  assert.deepEqual(result.outside, ['runUntilCurrent']);

  const section = changedCodeSection({ baseline: '1.162.0', candidate: '1.163.2', commits: result });
  assert.match(section, /\[v1\.162\.0…v1\.163\.2\]\(https:\/\/github\.com\/element-hq\/synapse\/compare\/v1\.162\.0\.\.\.v1\.163\.2\)/);
  assert.ok(section.includes(`  - [${c1.slice(0, 7)}](https://github.com/element-hq/synapse/commit/${c1}) Hash every event twice (\\#123)`), section);
  assert.match(section, /Unchanged in the range: `synapse\/handlers\/message\.py`\./);
  assert.ok(!section.includes(c2.slice(0, 7)), 'a commit that touched no hot file is not listed');

  // Tags the repository lacks: GitHub's 404, explained.
  await assert.rejects(
    changedCommits(api, chatServerOf('synapse').source, { baseline: '1.0.0', candidate: '1.163.2' }, []),
    /v1\.0\.0 or v1\.163\.2 is not a tag or commit of element-hq\/synapse/,
  );
});

test('the report says plainly when none of the hot functions changed, and tabulates those that did', () => {
  const none = changedCodeSection({
    baseline: '1.162.0',
    candidate: '1.163.2',
    functions: [
      { name: 'persist', path: 'synapse/storage/events.py', status: 'unchanged' },
      { name: 'select', path: undefined, status: 'not-found' },
    ],
  });
  assert.match(
    none,
    /None of the 1 hot functions in the server's source changed between `1\.162\.0` and `1\.163\.2`: the cause is elsewhere \(configuration, dependencies, data\)\./,
  );
  const some = changedCodeSection({
    baseline: '1.162.0',
    candidate: '1.163.2',
    functions: [
      { name: 'persist', path: 'synapse/storage/events.py', status: 'changed', added: 3, removed: 1, candidateLine: 40 },
      { name: 'create_event', path: 'synapse/handlers/message.py', status: 'unchanged' },
    ],
  });
  assert.match(some, /1 of the 2 hot functions in the server's source changed/);
  assert.match(some, /\| `persist` \| `synapse\/storage\/events\.py`:40 \| \+3 \/ −1 lines \|/);
  assert.equal(changedCodeSection({ baseline: 'a', candidate: 'b' }), '');
});
