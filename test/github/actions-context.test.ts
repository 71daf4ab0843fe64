import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseActionsContext, readActionsContext } from '../../src/github/actions-context.ts';
import { InputError } from '../../src/util/errors.ts';
import { contextSource } from './fixtures.ts';

const SHA = 'c'.repeat(40);

/** Sets the variables for one call (undefined unsets one) and restores them after. */
async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  apply(vars);
  try {
    return await fn();
  } finally {
    apply(saved);
  }
}

test('a pushed tag: the ref gives the tag name and type, the run id becomes text, URLs lose trailing slashes', () => {
  const c = parseActionsContext(
    contextSource({ eventName: 'push', ref: 'refs/tags/v11.0.1-rc2', sha: SHA, runId: 77, runAttempt: 2, apiUrl: 'http://127.0.0.1:9/api/v3/' }),
  );
  assert.deepEqual(c, {
    eventName: 'push',
    sha: SHA,
    ref: 'refs/tags/v11.0.1-rc2',
    refType: 'tag',
    refName: 'v11.0.1-rc2',
    runId: '77',
    runAttempt: 2,
    repository: 'octo-org/chat-server',
    apiUrl: 'http://127.0.0.1:9/api/v3',
    serverUrl: 'https://github.com',
  });
  const branch = parseActionsContext(contextSource({ ref: 'refs/heads/release-11.0' }));
  assert.equal(branch.refType, 'branch');
  assert.equal(branch.refName, 'release-11.0');
  assert.equal(parseActionsContext(contextSource({ ref: 'refs/pull/5/merge' })).refType, undefined, 'a PR ref is neither');
});

test('unset context fields (empty strings, NaN numbers, no repository) are undefined, not errors', () => {
  // As the toolkit's getter does when neither GITHUB_REPOSITORY nor the payload names one.
  const source = Object.defineProperty(contextSource({ apiUrl: '' }), 'repo', {
    get: () => {
      throw new Error("context.repo requires a GITHUB_REPOSITORY environment variable like 'owner/repo'");
    },
  });
  const c = parseActionsContext(source);
  assert.equal(c.eventName, undefined);
  assert.equal(c.sha, undefined);
  assert.equal(c.runId, undefined);
  assert.equal(c.repository, undefined);
  assert.equal(c.apiUrl, 'https://api.github.com', 'an empty GITHUB_API_URL is unset, as on Actions');
});

test('hostile context values are refused, naming the variable they came from', () => {
  const cases: [Parameters<typeof contextSource>[0], RegExp][] = [
    [{ sha: 'HEAD~1' }, /env GITHUB_SHA: expected a commit SHA/],
    [{ ref: 'v1.2.3' }, /env GITHUB_REF: expected a full ref/],
    [{ eventName: 'push;id' }, /env GITHUB_EVENT_NAME: expected an event name/],
    [{ apiUrl: 'file:///etc/passwd' }, /env GITHUB_API_URL/],
    [{ repo: { owner: 'a b', repo: 'c' } }, /env GITHUB_REPOSITORY: expected owner\/name/],
    [{ runAttempt: 0 }, /env GITHUB_RUN_ATTEMPT/],
  ];
  for (const [overrides, message] of cases) {
    assert.throws(
      () => parseActionsContext(contextSource(overrides)),
      (e: unknown) => e instanceof InputError && message.test(e.message),
      message.source,
    );
  }
});

test('readActionsContext hydrates @actions/github from the environment and the event payload file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-ctx-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const event = join(dir, 'event.json');
  // A push event names its repository; the toolkit falls back to it without GITHUB_REPOSITORY.
  await writeFile(event, JSON.stringify({ ref: 'refs/tags/v2.0.0-rc1', repository: { name: 'mattermost', owner: { login: 'mattermost' } } }));
  const base = {
    GITHUB_EVENT_PATH: event,
    GITHUB_EVENT_NAME: 'push',
    GITHUB_REF: 'refs/tags/v2.0.0-rc1',
    GITHUB_SHA: SHA,
    GITHUB_RUN_ID: '4242',
    GITHUB_RUN_ATTEMPT: '3',
    GITHUB_REPOSITORY: undefined,
    GITHUB_API_URL: undefined,
    GITHUB_SERVER_URL: undefined,
  };
  const c = await withEnv(base, () => readActionsContext());
  assert.equal(c.repository, 'mattermost/mattermost');
  assert.equal(c.refName, 'v2.0.0-rc1');
  assert.equal(c.runId, '4242');
  assert.equal(c.runAttempt, 3);
  // A second read follows the environment as it is now, not the toolkit's import-time context.
  const later = await withEnv({ ...base, GITHUB_REPOSITORY: 'acme/chat', GITHUB_RUN_ID: '4243' }, () => readActionsContext());
  assert.equal(later.repository, 'acme/chat');
  assert.equal(later.runId, '4243');

  await assert.rejects(
    withEnv({ ...base, GITHUB_EVENT_PATH: join(dir, 'missing.json') }, () => readActionsContext()),
    (e: unknown) => e instanceof InputError && /env GITHUB_EVENT_PATH: .*missing\.json does not exist/.test(e.message),
  );
  const broken = join(dir, 'broken.json');
  await writeFile(broken, '{"ref": ');
  await assert.rejects(
    withEnv({ ...base, GITHUB_EVENT_PATH: broken }, () => readActionsContext()),
    (e: unknown) => e instanceof InputError && /env GITHUB_EVENT_PATH: .*broken\.json is not a JSON event payload/.test(e.message),
  );
});
