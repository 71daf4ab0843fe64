import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_SCENARIO } from '../../../src/engine/k6/runner.ts';
import { CEILING_ACTION_FREQUENCIES } from '../../../src/chat-servers/mattermost/defaults.ts';
import { standinUsers } from '../../fixtures/k6/matrix-standin.ts';
import { findK6, NO_K6 } from './k6-binary.ts';

/** `k6 inspect` runs the scenario's init code and prints the options it resolved. */
const k6Path = findK6();
const skip = k6Path ? false : NO_K6;
const run = promisify(execFile);

async function inspect(env: Record<string, string>): Promise<{ scenarios: Record<string, Record<string, unknown>>; userAgent: string; systemTags: string[] }> {
  const { stdout } = await run(k6Path!, ['inspect', '--include-system-env-vars', DEFAULT_SCENARIO], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, K6_NO_USAGE_REPORT: 'true', ...env },
    timeout: 30_000,
  });
  return JSON.parse(stdout) as never;
}

async function inspectError(env: Record<string, string>): Promise<string> {
  try {
    await inspect(env);
  } catch (error) {
    const e = error as Error & { stderr?: string; stdout?: string };
    return `${e.stderr ?? ''}${e.stdout ?? ''}`;
  }
  throw new Error('k6 inspect succeeded but should have failed');
}

test('inspects without any environment: one externally-controlled scenario with safe defaults', { skip }, async () => {
  const options = await inspect({});
  assert.deepEqual(Object.keys(options.scenarios), ['users']);
  const users = options.scenarios.users!;
  assert.equal(users.executor, 'externally-controlled');
  assert.equal(users.vus, 0);
  assert.equal(users.maxVUs, 1);
  assert.equal(users.duration, '6h0m0s');
  assert.match(options.userAgent, /^loadgate-k6/);
  assert.ok(!options.systemTags.includes('url'), 'no per-URL time series');
});

test('takes users, actions and sizes from the environment the runner sets', { skip }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-k6-inspect-'));
  try {
    const usersFile = join(dir, 'users.json');
    await writeFile(usersFile, JSON.stringify(standinUsers(3)));
    const base = {
      LOADGATE_BASE_URL: 'http://127.0.0.1:8080',
      LOADGATE_USERS_FILE: usersFile,
      LOADGATE_ACTIONS: JSON.stringify(CEILING_ACTION_FREQUENCIES),
      LOADGATE_MAX_USERS: '400',
      LOADGATE_INITIAL_USERS: '8',
      LOADGATE_DURATION: '5400s',
    };
    const users = (await inspect(base)).scenarios.users!;
    assert.equal(users.maxVUs, 400);
    assert.equal(users.vus, 8);
    assert.equal(users.duration, '1h30m0s');

    assert.match(
      await inspectError({ ...base, LOADGATE_ACTIONS: '{"SwitchChannel":1,"DanceParty":2}' }),
      /unknown action \\?"DanceParty\\?"; known: SwitchChannel/,
    );
    assert.match(await inspectError({ ...base, LOADGATE_ACTIONS: '{"SwitchChannel":' }), /LOADGATE_ACTIONS is not valid JSON/);
    assert.match(await inspectError({ ...base, LOADGATE_BASE_URL: 'http://matrix.org' }), /must be a loopback http URL/);
    assert.match(await inspectError({ ...base, LOADGATE_INITIAL_USERS: '500' }), /must not exceed LOADGATE_MAX_USERS/);
    assert.match(await inspectError({ ...base, LOADGATE_IDLE_RATE: '-1' }), /LOADGATE_IDLE_RATE must be a number > 0/);
    await writeFile(usersFile, '{"user_id":"@a:localhost"}');
    assert.match(await inspectError(base), /expected a JSON array of users/);
    await writeFile(usersFile, '[{"user_id":"@a:localhost","localpart":"a"}]');
    assert.match(await inspectError(base), /users\.json\[0\]: expected \{ user_id, localpart, password, rooms: \[\], dms: \[\] \}/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
