import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createGitHubClient, type GitHubClient } from '../../src/github/client.ts';
import { tagRulesetRequest } from '../support/tag-ruleset.ts';
import { GitHubStandin } from '../support/github-standin/server.ts';

/**
 * The tag ruleset of docs/github.md, sent as GitHub's "Create a repository ruleset"
 * request to the stand-in, which validates it against GitHub's OpenAPI description.
 */
const ADMIN = 'admin-token-0123456789';
const NO_ADMIN = 'writer-token-0123456789';
let s: GitHubStandin;
let admin: GitHubClient;
const repo = { owner: 'octo-org', repo: 'chat-server' };

before(async () => {
  s = new GitHubStandin({
    tokens: {
      [ADMIN]: { permissions: { administration: 'write' }, actions: false },
      [NO_ADMIN]: { permissions: { checks: 'write', contents: 'write', 'pull-requests': 'write' }, actions: true },
    },
  });
  await s.start();
  admin = createGitHubClient({ token: ADMIN, baseUrl: s.url, writeIntervalMs: 0, retries: 0, maskToken: false });
});
after(() => s.close());

async function status(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 201;
  } catch (error) {
    return (error as { status: number }).status;
  }
}

test("the tag ruleset is a valid request under GitHub's schema and requires the loadgate check from GitHub Actions", async () => {
  const body = tagRulesetRequest();
  const response = await admin.rest.repos.createRepoRuleset({ ...repo, ...body });
  assert.equal(response.status, 201);
  assert.deepEqual(s.rejected, []);
  assert.deepEqual(s.rulesets, [JSON.parse(JSON.stringify(body))]);
  const [ruleset] = s.rulesets as [typeof body];
  assert.equal(ruleset.target, 'tag');
  assert.deepEqual(ruleset.conditions.ref_name, { include: ['refs/tags/v*'], exclude: ['refs/tags/v*-rc*'] }, 'candidates stay pushable; releases are guarded');
  assert.deepEqual(ruleset.rules[0], {
    type: 'required_status_checks',
    parameters: {
      required_status_checks: [{ context: 'loadgate', integration_id: 15368 }],
      strict_required_status_checks_policy: false,
      do_not_enforce_on_create: false,
    },
  });
});

test('the stand-in really validates rulesets: a misspelt target or rule is refused with 422 and recorded', async () => {
  const before = s.rejected.length;
  const good = tagRulesetRequest();
  const { parameters } = good.rules[0] as { parameters: unknown };
  const bad: Record<string, unknown>[] = [
    { ...good, target: 'tags' },
    { ...good, rules: [{ type: 'required_status_check', parameters }] },
    { ...good, rules: [{ type: 'required_status_checks', parameters: { required_status_checks: [{ context: 'loadgate' }] } }] },
  ];
  for (const body of bad)
    assert.equal(await status(admin.request('POST /repos/{owner}/{repo}/rulesets', { ...repo, ...body } as never)), 422, JSON.stringify(body));
  assert.equal(s.rejected.length, before + bad.length);
});

test('creating a ruleset needs administration: write, which the workflow token never has', async () => {
  const writer = createGitHubClient({ token: NO_ADMIN, baseUrl: s.url, writeIntervalMs: 0, retries: 0, maskToken: false });
  assert.equal(await status(writer.rest.repos.createRepoRuleset({ ...repo, ...tagRulesetRequest() })), 403);
});

test('docs/github.md shows exactly this request body', () => {
  const docs = readFileSync('docs/github.md', 'utf8');
  const block = /<!-- tag-ruleset: test\/github\/ruleset\.test\.ts -->\n```json\n([\s\S]*?)\n```/.exec(docs);
  assert.ok(block, 'docs/github.md has the tag ruleset JSON block');
  assert.deepEqual(JSON.parse(block[1] as string), JSON.parse(JSON.stringify(tagRulesetRequest())));
});
