import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { checkDatasetLogin, datasetLoginOnce, firstAccount, type DatasetLogin } from '../../../src/chat-servers/mattermost/dataset-login.ts';
import { loadTestNgUsersLines, SEED_DUMP_ADMIN } from '../../../src/chat-servers/mattermost/dataset-accounts.ts';
import { InputError } from '../../../src/util/errors.ts';
import { MattermostStandIn } from './mattermost-stand-in.ts';

/**
 * The first run's login check, as app0 runs it: the script under bash with curl and jq,
 * against the Mattermost stand-in (which answers the login, the user lookup, the user
 * count, the licence and the client config as api4 does), then the judgement.
 */

const ADMIN = { email: SEED_DUMP_ADMIN.email, password: SEED_DUMP_ADMIN.password };

/** The script as app0 runs it, with its Mattermost relocated to `url`. */
function bash(script: string, url: string): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)('bash', ['-c', script], { env: { PATH: process.env.PATH, LOADGATE_MATTERMOST_URL: url }, encoding: 'utf8' });
}

async function withServer(fn: (m: MattermostStandIn, run: (script: string) => Promise<string>, printed: string[]) => Promise<void>): Promise<void> {
  const m = new MattermostStandIn();
  m.addUser(ADMIN.email, ADMIN.password, true);
  for (let i = 1; i <= 5; i++) m.addUser(`dataset-${i}@example.com`, `pw-${i}`);
  m.licenceFile = { id: 'benchlicence00000000000000', expiresAtMs: Date.now() + 86_400_000, users: 1000 };
  await m.start();
  const printed: string[] = [];
  // Asynchronously: the stand-in answers from this process.
  const run = async (script: string): Promise<string> => {
    const r = await bash(script, m.baseUrl);
    printed.push(r.stdout, r.stderr, script);
    return r.stdout;
  };
  try {
    await fn(m, run, printed);
  } finally {
    await m.stop();
  }
}

const login = (over: Partial<DatasetLogin>): DatasetLogin => ({
  engine: 'load-test-ng',
  admin: ADMIN,
  usersText: loadTestNgUsersLines(3),
  usersFile: '.github/loadgate-users.txt',
  where: 'app0',
  ...over,
});

const refused = (pattern: RegExp) => (error: unknown) => error instanceof InputError && pattern.test(error.message);

test("load-test-ng's own accounts on a dataset that lacks them pass: the admin logs in, the agents will sign them up, and the dataset's size is told", async () => {
  await withServer(async (m, run, printed) => {
    const notes = await checkDatasetLogin(login({}), 8065, run);
    assert.deepEqual(notes, [
      "the dataset has no account testuser-1@example.com: load-test-ng signs up the file's accounts the dataset lacks at their first login in every run, as load-test-ng's own comparisons do",
      'the dataset holds 6 active users; the licence 1000 seats',
    ]);
    // The requests as api4 routes them, and every session logged out again.
    const asked = m.received.map((r) => `${r.method} ${r.path}`);
    assert.ok(asked.includes('GET /api/v4/users/email/testuser-1@example.com'), asked.join('\n'));
    assert.equal(asked.filter((a) => a === 'POST /api/v4/users/logout').length, 1, 'the admin session is closed (the user never got one)');
    // No password in what the node prints.
    assert.ok(!printed[0]!.includes(ADMIN.password) && !printed[0]!.includes('testPass123$'), printed[0]);
  });
});

test("a wrong admin password stops the gate naming the admin-email secret and the dump's admin", async () => {
  await withServer(async (_m, run) => {
    await assert.rejects(
      checkDatasetLogin(login({ admin: { email: ADMIN.email, password: 'guess' } }), 8065, run),
      refused(
        /^admin-email: Mattermost on app0 refused to log in sysadmin@sample\.mattermost\.com \(HTTP 401, api\.user\.login\.invalid_credentials_email_username\), the system admin load-test-ng's agents log in as they start; set the repository secrets LOADGATE_ADMIN_EMAIL and LOADGATE_ADMIN_PASSWORD .*sysadmin@sample\.mattermost\.com/,
      ),
    );
  });
});

test('an admin that is not a system admin is refused', async () => {
  await withServer(async (m, run) => {
    m.addUser('plain@example.com', 'pw', false);
    await assert.rejects(
      checkDatasetLogin(login({ admin: { email: 'plain@example.com', password: 'pw' } }), 8065, run),
      refused(/plain@example\.com logs in on app0 but is not a system admin \(roles "system_user"\)/),
    );
  });
});

test('an account the dataset has, with another password in the file, is refused naming the users file and the fix', async () => {
  await withServer(async (_m, run) => {
    await assert.rejects(
      checkDatasetLogin(login({ usersText: 'dataset-1@example.com wrong\n' }), 8065, run),
      refused(
        /^users file \.github\/loadgate-users\.txt: Mattermost on app0 refused dataset-1@example\.com, the users file's first account \(HTTP 401, .*\), and the dataset has that account, so the file's password is not its password \(load-test-ng would retry that login for the whole test\); fix the users file .*LOADGATE_USERS_FILE.*loadgate mattermost-users/,
      ),
    );
  });
});

test('k6 only logs in: a missing account is refused, and an existing one passes', async () => {
  await withServer(async (_m, run) => {
    await assert.rejects(
      checkDatasetLogin(login({ engine: 'k6', admin: undefined, usersText: loadTestNgUsersLines(2) }), 8065, run),
      refused(/either the dataset has no such account or the password differs, and engine\.kind k6 only logs in \(it signs nobody up\)/),
    );
    assert.deepEqual(await checkDatasetLogin(login({ engine: 'k6', admin: undefined, usersText: 'dataset-2@example.com pw-2\n' }), 8065, run), []);
  });
});

test('sign-up closed by an override: a missing account is refused, naming the setting', async () => {
  await withServer(async (m, run) => {
    m.signUp = { ...m.signUp, EnableOpenServer: 'false' };
    await assert.rejects(
      checkDatasetLogin(login({}), 8065, run),
      refused(/does not let load-test-ng sign it up \(EnableOpenServer "false"; .*remove those overrides from target\.settings/),
    );
  });
});

test('a licence with fewer seats than the dataset and the file need is told, for a seat-enforcing licence would stop the sign-ups', async () => {
  await withServer(async (m, run) => {
    // The data restored (no licence row), started with a licence of 8 seats.
    m.licenceFile = { id: 'smalllicence00000000000000', expiresAtMs: Date.now() + 86_400_000, users: 8 };
    m.databaseLicence = undefined;
    await m.stop();
    await m.start();
    const notes = await checkDatasetLogin(login({}), 8065, run);
    assert.match(notes.at(-1) ?? '', /stops sign-ups at 8, short of the dataset's 6 users and the users file's 3 accounts \(9\)/);
  });
});

test('a server that does not answer is an error of the bench, tried again by the next run, not a refusal', async () => {
  let calls = 0;
  const run = async (script: string): Promise<string> => {
    calls++;
    return (await bash(script, 'http://127.0.0.1:9')).stdout;
  };
  const once = datasetLoginOnce(async () => login({}), 8065, run);
  await assert.rejects(
    once(),
    (error: unknown) => !(error instanceof InputError) && /cannot reach Mattermost on app0 to log in the admin: no answer/.test((error as Error).message),
  );
  await assert.rejects(once());
  assert.equal(calls, 2, 'not memoised after a failure of the bench');
});

test('once: the check runs at the first run only and tells its notes once', async () => {
  await withServer(async (m, run) => {
    const once = datasetLoginOnce(async () => login({}), 8065, run);
    assert.equal((await once()).length, 2);
    const asked = m.received.length;
    assert.deepEqual(await once(), []);
    assert.equal(m.received.length, asked);
  });
});

test("the users file's first account as each engine reads it", () => {
  assert.deepEqual(firstAccount('\n# comment\na@example.com p w\nb c\n'), { login: 'a@example.com', password: 'p w' });
  assert.deepEqual(firstAccount('openid:a@example.com x\n'), { login: 'a@example.com', password: 'x', via: 'openid' });
  assert.deepEqual(firstAccount('[{"username":"u1","password":"p1"}]'), { login: 'u1', password: 'p1' });
  assert.equal(firstAccount('\n\n'), undefined);
});

test("load-test-ng's account scheme: testuser-N@example.com with testPass123$, usernames Mattermost accepts", () => {
  assert.equal(loadTestNgUsersLines(2), 'testuser-1@example.com testPass123$\ntestuser-2@example.com testPass123$\n');
  assert.throws(() => loadTestNgUsersLines(2, 'Bad'), /cannot start a Mattermost username/);
  assert.throws(() => loadTestNgUsersLines(1000, 'averyveryverylongname'), /longer than Mattermost's 22-character usernames/);
});
