import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findK6, NO_K6 } from '../../engine/k6/k6-binary.ts';
import { MattermostStandIn } from './mattermost-stand-in.ts';
import { checkRequest, loadOperations } from './openapi.ts';
import { CEILING_ACTION_FREQUENCIES } from '../../../src/chat-servers/mattermost/defaults.ts';

/**
 * Runs the Mattermost k6 scenario for a few seconds against a loopback stand-in and checks
 * the traffic and the load-test-ng-named metrics. Skipped when k6 is not installed.
 */

const SCRIPT = fileURLToPath(new URL('../../../src/engine/k6/scenarios/mattermost.js', import.meta.url));

const k6 = findK6();
/** k6 must make no outbound calls: no extension builder, no usage report. */
const QUIET_ENV = { ...process.env, K6_AUTO_EXTENSION_RESOLUTION: 'false', K6_NO_USAGE_REPORT: 'true' };

function runK6(args: string[], timeoutMs: number): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(k6!, args, { env: QUIET_ENV, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, stderr });
    });
  });
}

interface Point {
  type: string;
  metric: string;
  data?: { value: number; tags?: Record<string, string> };
}

/** A short run of the scenario against `baseUrl`: 3 users, 1 s ramp; returns the k6 JSON points. */
async function runScenario(o: {
  baseUrl: string;
  dir: string;
  actions: Record<string, number>;
  idleMs: [number, number];
  durationSec: number;
}): Promise<Point[]> {
  const out = join(o.dir, 'points.json');
  const { code, stderr } = await runK6(
    [
      'run',
      '--quiet',
      '--no-usage-report',
      '--address',
      '127.0.0.1:0',
      '--out',
      `json=${out}`,
      ...['-e', `LOADGATE_BASE_URL=${o.baseUrl}`, '-e', `LOADGATE_USERS_FILE=${join(o.dir, 'users.txt')}`],
      ...[
        '-e',
        `LOADGATE_ACTIONS=${JSON.stringify(o.actions)}`,
        '-e',
        `LOADGATE_IDLE_MIN_MS=${o.idleMs[0]}`,
        '-e',
        `LOADGATE_IDLE_AVG_MS=${o.idleMs[1]}`,
        '-e',
        'LOADGATE_IDLE_RATE=1',
      ],
      ...['-e', 'LOADGATE_MAX_USERS=3', '-e', 'LOADGATE_RAMP_UP=1s', '-e', `LOADGATE_DURATION=${o.durationSec}s`],
      SCRIPT,
    ],
    45_000,
  );
  assert.equal(code, 0, stderr);
  return readFileSync(out, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Point)
    .filter((p) => p.type === 'Point');
}

test('k6 inspect accepts the scenario and its executor options', { skip: !k6 && NO_K6 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'loadgate-k6-'));
  try {
    writeFileSync(join(dir, 'users.txt'), 'user1 pw1\n');
    const out = execFileSync(
      k6!,
      [
        'inspect',
        '--execution-requirements',
        ...['-e', 'LOADGATE_BASE_URL=http://127.0.0.1:1', '-e', `LOADGATE_USERS_FILE=${join(dir, 'users.txt')}`],
        ...['-e', `LOADGATE_ACTIONS=${JSON.stringify(CEILING_ACTION_FREQUENCIES)}`],
        ...['-e', 'LOADGATE_MAX_USERS=40', '-e', 'LOADGATE_INITIAL_USERS=2', '-e', 'LOADGATE_DURATION=2h'],
        SCRIPT,
      ],
      { env: QUIET_ENV, encoding: 'utf8' },
    );
    const options = JSON.parse(out) as { scenarios: Record<string, { executor: string; maxVUs: number; vus: number }> };
    assert.deepEqual(options.scenarios.users, { ...options.scenarios.users, executor: 'externally-controlled', maxVUs: 40, vus: 2 });

    // Bad input fails at init with a message naming the variable.
    assert.throws(
      () =>
        execFileSync(
          k6!,
          [
            'inspect',
            '-e',
            'LOADGATE_BASE_URL=http://127.0.0.1:1',
            '-e',
            `LOADGATE_USERS_FILE=${join(dir, 'users.txt')}`,
            '-e',
            'LOADGATE_ACTIONS={"Dance":1}',
            SCRIPT,
          ],
          {
            env: QUIET_ENV,
            encoding: 'utf8',
            stdio: 'pipe',
          },
        ),
      (e: unknown) => /unknown action \\"Dance\\"/.test(String((e as { stderr?: string }).stderr)),
    );
    // The action table comes from loadgate (the config's, else the TypeScript defaults): none is a clear error.
    assert.throws(
      () =>
        execFileSync(k6!, ['inspect', '-e', 'LOADGATE_BASE_URL=http://127.0.0.1:1', '-e', `LOADGATE_USERS_FILE=${join(dir, 'users.txt')}`, SCRIPT], {
          env: QUIET_ENV,
          encoding: 'utf8',
          stdio: 'pipe',
        }),
      (e: unknown) => /LOADGATE_ACTIONS is not set/.test(String((e as { stderr?: string }).stderr)),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('idle times follow load-test-ng: uniform in [min, 2*avg - min), times the rate', { skip: !k6 && NO_K6, timeout: 30_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'loadgate-k6-'));
  try {
    writeFileSync(join(dir, 'users.txt'), 'u p\n');
    // A k6 script that samples the scenario's own pickIdleTimeMs and fails on a wrong distribution.
    writeFileSync(
      join(dir, 'idle.js'),
      `import exec from 'k6/execution';
import { pickIdleTimeMs } from ${JSON.stringify(SCRIPT)};
export const options = { vus: 1, iterations: 1 };
export default function () {
  const n = 20000; let sum = 0; let lo = Infinity; let hi = -Infinity;
  for (let i = 0; i < n; i++) { const v = pickIdleTimeMs(1000, 20000, 5.4); sum += v; lo = Math.min(lo, v); hi = Math.max(hi, v); }
  const mean = sum / n;
  // Expected mean 20000 * 5.4 = 108000; range [5400, 210600).
  if (lo < 5400 || hi >= 210600 || Math.abs(mean - 108000) > 2500) exec.test.fail('bad idle distribution: ' + JSON.stringify({ lo, hi, mean }));
}
`,
    );
    const { code, stderr } = await runK6(
      [
        'run',
        '--quiet',
        '--no-usage-report',
        '--address',
        '127.0.0.1:0',
        '--summary-mode=disabled',
        '-e',
        'LOADGATE_BASE_URL=http://127.0.0.1:1',
        '-e',
        `LOADGATE_USERS_FILE=${join(dir, 'users.txt')}`,
        '-e',
        'LOADGATE_ACTIONS={"SwitchChannel":1}',
        join(dir, 'idle.js'),
      ],
      25_000,
    );
    assert.equal(code, 0, stderr);
    assert.ok(!/bad idle distribution/.test(stderr), stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a short k6 run drives the API and WebSocket and records load-test-ng metrics', { skip: !k6 && NO_K6, timeout: 60_000 }, async () => {
  const server = new MattermostStandIn();
  const dir = mkdtempSync(join(tmpdir(), 'loadgate-k6-'));
  try {
    for (let i = 1; i <= 3; i++) server.addUser(`user${i}`, `pass-${i}`);
    server.failing.add('GET /users/me/teams/unread');
    const baseUrl = await server.start();
    writeFileSync(join(dir, 'users.txt'), '# login password\nuser1 pass-1\nuser2 pass-2\nuser3 pass-3\n');
    const actions = {
      SwitchChannel: 4,
      ScrollChannel: 2,
      CreatePost: 3,
      ViewThread: 1,
      AddReaction: 1,
      ViewGlobalThreads: 1,
      ReconnectWebSocket: 0.5,
      UnreadCheck: 0.5,
    };
    const points = await runScenario({ baseUrl, dir, actions, idleMs: [20, 60], durationSec: 5 });
    const of = (metric: string) => points.filter((p) => p.metric === metric);

    // Every user logged in and held a WebSocket (reconnects open more).
    assert.equal(server.hits.get('POST /users/login'), 3);
    assert.ok(server.wsOpened >= 3, `websockets opened: ${server.wsOpened}`);
    assert.ok(server.wsAuthenticated >= 1);
    // Actions ran: posts were created and channels switched.
    assert.ok((server.hits.get('POST /posts') ?? 0) >= 3, JSON.stringify([...server.hits]));
    assert.ok((server.hits.get('POST /channels/members/me/view') ?? 0) >= 3);

    const times = of('loadtest_http_request_time');
    assert.ok(times.length >= 30, `request times: ${times.length}`);
    // Seconds, not milliseconds: loopback answers well under a second.
    assert.ok(times.every((p) => p.data!.value >= 0 && p.data!.value < 1));
    // The stand-in's 500s are counted with their status code; nothing else failed.
    const errors = of('loadtest_http_errors_total');
    assert.ok(errors.length >= 1, 'the failing route produced error points');
    assert.deepEqual([...new Set(errors.map((p) => p.data!.tags!.status_code))], ['500']);
    assert.equal(of('loadtest_http_timeouts_total').length, 0);

    // The same traffic feeds the shared counters the runner's exporter reads (lib/metrics.js).
    const sum = (metric: string) => of(metric).reduce((n, p) => n + p.data!.value, 0);
    const buckets = [...new Set(points.filter((p) => p.metric.startsWith('loadgate_req_le_')).map((p) => p.metric))];
    const bucketTotal = buckets.reduce((n, m) => n + sum(m), 0);
    assert.equal(bucketTotal, times.length, 'each answered request lands in exactly one bucket');
    assert.equal(sum('loadgate_req_err_500'), errors.length);
    assert.ok(sum('loadgate_action_CreatePost') >= 1);
    assert.equal(sum('loadgate_action_Login'), 3);
    assert.equal(sum('loadgate_script_errors'), 0);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Two regular users and a system admin, in the stand-in and in the users file. */
async function startWithAdmin(server: MattermostStandIn, dir: string): Promise<string> {
  server.addUser('user1', 'pass-1');
  server.addUser('user2', 'pass-2');
  server.addUser('admin1', 'pass-a', true);
  writeFileSync(join(dir, 'users.txt'), 'user1 pass-1\nuser2 pass-2\nadmin1 pass-a\n');
  return server.start();
}

test(
  'findings 4 and 5: regular users skip GenerateUserReport, and persistent-notification posts are never replies',
  { skip: !k6 && NO_K6, timeout: 60_000 },
  async () => {
    const server = new MattermostStandIn();
    const dir = mkdtempSync(join(tmpdir(), 'loadgate-k6-'));
    try {
      const baseUrl = await startWithAdmin(server, dir);
      // Posts first, so there are roots a persistent-notification post could wrongly reply to.
      const actions = { CreatePost: 2, CreatePersistentNotificationPost: 4, GenerateUserReport: 2, OpenDirectOrGroupChannel: 1 };
      const points = await runScenario({ baseUrl, dir, actions, idleMs: [10, 30], durationSec: 5 });
      const sum = (metric: string) => points.filter((p) => p.metric === metric).reduce((n, p) => n + p.data!.value, 0);
      assert.ok(sum('loadgate_action_CreatePersistentNotificationPost') >= 5, 'persistent-notification posts were attempted');
      assert.ok(sum('loadgate_action_GenerateUserReport') >= 3, 'the report action was picked');
      // Only the admin asks for the report; the regular users' 403s and the replies' 400s are gone.
      assert.ok((server.hits.get('GET /reports/users') ?? 0) >= 1, 'the admin generated reports');
      const errors = points.filter((p) => p.metric === 'loadtest_http_errors_total');
      assert.deepEqual(
        errors.map((p) => `${p.data!.tags!.status_code} ${p.data!.tags!.name}`),
        [],
        'no request failed',
      );
      assert.equal(sum('loadgate_script_errors'), 0);
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('the request check refuses what the description does not have', () => {
  const ops = loadOperations();
  const problem = (method: string, path: string, body: unknown) => checkRequest(ops, method, path, body).problems.join('; ');
  assert.match(problem('POST', '/api/v4/posts/abc/patch', { message: 'x' }), /no such operation; the description has PUT/);
  assert.match(problem('PUT', '/api/v4/posts/abc/patch', { text: 'x' }), /"text" is not a field/);
  assert.match(problem('POST', '/api/v4/teams/t/posts/search', { terms: 'x' }), /"is_or_search" is required/);
  assert.match(problem('POST', '/api/v4/users/logout', {}), /takes no request body/);
  // No silent skip: a path no vendored operation has is a problem, unless UNDESCRIBED names it.
  assert.match(problem('GET', '/api/v4/users/me/sessions', undefined), /no vendored operation has this path/);
  assert.match(checkRequest(ops, 'GET', '/api/v4/websocket', undefined).undescribed ?? '', /WebSocket upgrade/);
  // The most specific path decides: /users/search is not /users/{user_id}.
  assert.match(problem('GET', '/api/v4/users/search', undefined), /the description has POST \/api\/v4\/users\/search/);
  assert.equal(checkRequest(ops, 'GET', '/api/v4/users/me', undefined).operationId, 'GetUser');
  // Enumerations, array lengths, and the sidebar fields the server decodes beyond the description.
  const categories = '/api/v4/users/u/teams/t/channels/categories';
  assert.match(problem('POST', categories, { display_name: 'x', type: 'mine' }), /"type" is "mine", not one of channels, custom/);
  assert.match(problem('POST', '/api/v4/channels/direct', ['a']), /1 items, at least 2 needed/);
  assert.match(problem('POST', categories, { display_name: 'x', collapsed: true }), /"collapsed" is not a field/);
  assert.equal(problem('PUT', `${categories}/c`, { id: 'c', display_name: 'x', collapsed: true }), '');
  // Query parameters: declared names only; a required one must be sent unless the server reads it as optional.
  const query = (method: string, path: string, names: string[]) => checkRequest(ops, method, path, undefined, names).problems.join('; ');
  assert.match(query('GET', '/api/v4/posts/p/thread', ['collapsed_threads']), /query parameter "collapsed_threads" is not declared; it has perPage/);
  assert.match(query('GET', '/api/v4/users/me', ['page']), /query parameter "page" is not declared$/);
  assert.equal(query('GET', '/api/v4/users/u/teams/t/threads', ['per_page', 'unread']), '');
  assert.equal(query('GET', '/api/v4/users/me/teams/unread', []), '');
  const required = [
    { method: 'GET', path: '/x', pattern: /^\/x$/, rank: [0, 0], operation: { operationId: 'X', parameters: [{ name: 'q', in: 'query', required: true }] } },
  ];
  assert.match(checkRequest(required, 'GET', '/x', undefined, []).problems.join(), /query parameter "q" is required/);
});

/**
 * Runs each action of `actions` twice in a row for every user, one k6 run per user after the
 * other (concurrent users could delete a post another is about to open: a race, not a
 * finding); returns the k6 JSON points of all runs.
 */
async function runEveryAction(o: { baseUrl: string; dir: string; users: { login: string; password: string }[]; actions: string[] }): Promise<Point[]> {
  writeFileSync(join(o.dir, 'users.txt'), o.users.map((u) => `${u.login} ${u.password}`).join('\n'));
  writeFileSync(
    join(o.dir, 'every-action.js'),
    `import exec from 'k6/execution';
import { startSession, runAction, endSession } from ${JSON.stringify(SCRIPT)};
const USER = JSON.parse(__ENV.DRIVE_USER);
const ACTIONS = JSON.parse(__ENV.DRIVE_ACTIONS);
export const options = { scenarios: { every_action: { executor: 'per-vu-iterations', vus: 1, iterations: 1, maxDuration: '30s' } } };
export default function () {
  if (!startSession(USER)) exec.test.abort('login failed: ' + USER.login);
  for (let round = 0; round < 2; round++) for (const name of ACTIONS) runAction(name);
  endSession();
}
`,
  );
  const points: Point[] = [];
  for (const [i, user] of o.users.entries()) {
    const out = join(o.dir, `points-${i}.json`);
    const { code, stderr } = await runK6(
      [
        'run',
        '--quiet',
        '--no-usage-report',
        '--address',
        '127.0.0.1:0',
        '--summary-mode=disabled',
        '--out',
        `json=${out}`,
        ...['-e', `LOADGATE_BASE_URL=${o.baseUrl}`, '-e', `LOADGATE_USERS_FILE=${join(o.dir, 'users.txt')}`],
        ...['-e', `LOADGATE_ACTIONS=${JSON.stringify(CEILING_ACTION_FREQUENCIES)}`],
        ...['-e', `DRIVE_USER=${JSON.stringify(user)}`, '-e', `DRIVE_ACTIONS=${JSON.stringify(o.actions)}`],
        join(o.dir, 'every-action.js'),
      ],
      40_000,
    );
    assert.equal(code, 0, stderr);
    for (const line of readFileSync(out, 'utf8').split('\n')) if (line) points.push(JSON.parse(line) as Point);
  }
  return points.filter((p) => p.type === 'Point');
}

test(
  "every action's requests match Mattermost's API v4 description, and every vendored operation is used",
  { skip: !k6 && NO_K6, timeout: 90_000 },
  async () => {
    const ops = loadOperations();
    const server = new MattermostStandIn();
    const dir = mkdtempSync(join(tmpdir(), 'loadgate-k6-'));
    try {
      const users = [
        { login: 'user1', password: 'pass-1' },
        { login: 'user2', password: 'pass-2' },
        { login: 'admin1', password: 'pass-a' },
      ];
      for (const u of users) server.addUser(u.login, u.password, u.login.startsWith('admin'));
      // Posts by every user in both public channels: each session then knows two other users
      // (direct and group channels) and has threads to follow, read and unfollow from the start.
      for (const u of users) for (const c of server.channels.filter((c) => c.type === 'O')) server.seedPost(u.login, c.id);
      const baseUrl = await server.start();
      const actions = Object.keys(CEILING_ACTION_FREQUENCIES);
      const points = await runEveryAction({ baseUrl, dir, users, actions });
      const sum = (metric: string) => points.filter((p) => p.metric === metric).reduce((n, p) => n + p.data!.value, 0);

      // Every action of the default table ran twice per user, and none threw.
      assert.deepEqual(
        actions.filter((a) => sum(`loadgate_action_${a}`) !== 2 * users.length),
        [],
        'actions that did not run 2 times per user',
      );
      assert.equal(sum('loadgate_script_errors'), 0);

      const problems: string[] = [];
      const covered = new Set<string>();
      const undescribed = new Set<string>();
      for (const r of server.received) {
        const checked = checkRequest(ops, r.method, r.path, r.body, r.query);
        problems.push(...checked.problems);
        if (checked.operationId) covered.add(checked.operationId);
        if (checked.undescribed) undescribed.add(`${r.method} ${r.path}`);
      }
      assert.deepEqual([...new Set(problems)].sort(), [], 'requests that do not match the API description');
      // The vendored subsets hold exactly the operations the scenario calls: all were exercised.
      assert.deepEqual([...covered].sort(), [...new Set(ops.map((o) => o.operation.operationId))].sort());
      assert.deepEqual([...undescribed], ['GET /api/v4/websocket']);
      // The stand-in served every request: none answered an error.
      assert.deepEqual(
        server.received.filter((r) => (r.status ?? 0) >= 400 || r.status === undefined).map((r) => `${r.status} ${r.method} ${r.path}`),
        [],
      );
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
