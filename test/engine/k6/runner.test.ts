import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProcessSupervisor } from '../../../src/util/process.ts';
import { startExporter } from '../../../src/engine/k6/exporter.ts';
import { startK6, type StartK6Options } from '../../../src/engine/k6/runner.ts';
import { InputError } from '../../../src/util/errors.ts';
import { startMatrixStandin, standinUsers, type Standin } from '../../fixtures/k6/matrix-standin.ts';
import { findK6, NO_K6 } from './k6-binary.ts';
import { histogram, parseExposition, quantile, valueOf } from './prom-text.ts';

/**
 * The real k6 (v1.4.2) against a node:http stand-in of the Matrix endpoints, all on
 * 127.0.0.1: scale users up and down through the REST API, scrape the exporter, parse
 * the histogram, stop, and check nothing is left behind.
 */
const k6Path = findK6();
const skip = k6Path ? false : NO_K6;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

interface Bench {
  dir: string;
  standin: Standin;
  supervisor: ProcessSupervisor;
  options: (overrides?: Partial<StartK6Options>) => Promise<StartK6Options>;
}

async function withBench(
  standinDelayMs: number,
  failRoutes: Record<string, number>,
  fn: (bench: Bench) => Promise<void>,
  slowRoutes: Record<string, number> = {},
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-k6-runner-'));
  const standin = await startMatrixStandin({ delayMs: standinDelayMs, failRoutes, slowRoutes });
  const supervisor = new ProcessSupervisor();
  const usersFile = join(dir, 'users.json');
  await writeFile(usersFile, JSON.stringify(standinUsers(12)));
  const options = async (overrides: Partial<StartK6Options> = {}): Promise<StartK6Options> => ({
    supervisor,
    k6Path: k6Path!,
    runDir: dir,
    baseUrl: standin.baseUrl,
    usersFile,
    maxUsers: 30,
    initialUsers: 2,
    idle: { minimumMs: 100, averageMs: 200, rateMultiplier: 1 },
    apiPort: await freePort(),
    ...overrides,
  });
  try {
    await fn({ dir, standin, supervisor, options });
  } finally {
    const problems = await supervisor.stopAll();
    await standin.close();
    await rm(dir, { recursive: true, force: true });
    assert.deepEqual(problems, []);
  }
}

test('scales k6 through the REST API and exports a real latency histogram', { skip, timeout: 60_000 }, async () => {
  await withBench(30, { search: 503 }, async ({ standin, options }) => {
    const opts = await options({
      // Search fails with 503 on the stand-in, so errors are ~1/11 of actions.
      actions: { SwitchChannel: 4, CreatePost: 2, UnreadCheck: 2, SearchPosts: 1, ViewThread: 1, AddReaction: 1 },
    });
    const run = await startK6(opts);
    const exporter = await startExporter({ k6ApiPort: run.apiPort, k6Pid: run.process.pid! });
    try {
      assert.equal(await run.activeUsers(), 2);
      await run.setUsers(20);
      assert.equal(await run.activeUsers(), 20);
      await sleep(4000);
      await run.setUsers(5);
      assert.equal(await run.activeUsers(), 5);
      await sleep(2500);
      await assert.rejects(run.setUsers(31), RangeError);

      const exp = parseExposition(await (await fetch(exporter.url)).text());
      const h = histogram(exp, 'loadtest_http_request_time');
      assert.ok(h.count > 100, `${h.count} requests`);
      // Every stand-in answer takes >= 30 ms, so nothing may be in the 25 ms bucket.
      assert.equal(h.buckets.find(([le]) => le === 0.025)?.[1], 0);
      const p50 = quantile(0.5, h.buckets);
      assert.ok(p50 >= 0.025 && p50 <= 0.5, `median ${p50}`);
      assert.ok(h.sum / h.count >= 0.03, `mean ${h.sum / h.count}`);
      assert.ok((valueOf(exp, 'loadtest_http_errors_total', { status_code: '503' }) ?? 0) > 0, 'the injected 503s');
      assert.equal(valueOf(exp, 'loadtest_http_timeouts_total'), 0);
      assert.equal(valueOf(exp, 'loadgate_engine_active_users'), 5);
      assert.equal(valueOf(exp, 'loadgate_engine_max_users'), 30);
      assert.ok((valueOf(exp, 'loadgate_engine_cpu_seconds_total') ?? 0) > 0);
      assert.ok((valueOf(exp, 'loadgate_engine_actions_total', { action: 'Login' }) ?? 0) >= 20, 'each added user logged in');

      // Quiesce, then the engine's totals must match what the server saw.
      await run.setUsers(0);
      await sleep(1500);
      const stats = await run.stats();
      const served = [...standin.hits.values()].reduce((a, b) => a + b, 0);
      assert.ok(stats.requests <= served && stats.requests >= served - 25, `k6 ${stats.requests} vs server ${served}`);
      // Every search was a 503; one cut off by a scale-down is seen by the server only.
      const searches = standin.hits.get('search') ?? 0;
      assert.ok(stats.errors > 0 && stats.errors <= searches && stats.errors >= searches - 3, `errors ${stats.errors}, searches ${searches}`);
      assert.equal(stats.timeouts, 0);
      assert.equal(stats.scriptErrors, 0);
      assert.equal(stats.droppedIterations, 0);
      assert.ok(stats.engineCpuPercent >= 0 && stats.engineCpuPercent < 400, `cpu ${stats.engineCpuPercent}`);
      assert.ok(stats.engineCpuSeconds > 0);
      assert.ok((stats.actions.SwitchChannel ?? 0) > (stats.actions.ViewThread ?? 0), 'frequencies are respected');
      assert.deepEqual(standin.unknown, []);
    } finally {
      await exporter.close();
    }
    const exit = await run.stop();
    assert.equal(run.process.running, false);
    assert.equal(run.process.crashed, false);
    assert.ok(exit.code !== null || exit.signal !== null);
    assert.equal(await portIsFree(run.apiPort), true, 'the REST API port is free again');
    assert.match(await readFile(run.logFile, 'utf8'), /\$ .*k6 run --quiet .*--no-usage-report/);
  });
});

test('every mapped action of the ceiling table runs against the Matrix endpoints without script errors', { skip, timeout: 60_000 }, async () => {
  await withBench(2, {}, async ({ standin, options }) => {
    const mapped = [
      'SwitchChannel',
      'ScrollChannel',
      'UnreadCheck',
      'CreatePost',
      'OpenDirectOrGroupChannel',
      'ViewGlobalThreads',
      'UpdateThreadRead',
      'ClickPermalink',
      'ViewThread',
      'ReconnectWebSocket',
      'AddReaction',
      'EditPost',
      'SearchUsers',
      'ClickUserProfile',
      'SearchPosts',
      'SearchGroupChannels',
      'SearchChannels',
      'CreateDirectChannel',
      'JoinChannel',
      'DeletePost',
      'UpdateSidebarCategory',
      'CreateGroupChannel',
      'UpdateCustomStatus',
      'RemoveCustomStatus',
      'FullReload',
      'LogoutLogin',
      'CreatePrivateChannel',
      'CreateSidebarCategory',
      'CreatePublicChannel',
    ];
    const run = await startK6(
      await options({
        initialUsers: 10,
        maxUsers: 10,
        idle: { minimumMs: 10, averageMs: 30, rateMultiplier: 1 },
        // Equal weights, plus one action without a Matrix equivalent (ignored with a warning).
        actions: { ...Object.fromEntries(mapped.map((a) => [a, 1])), SwitchTeam: 1 },
        name: 'k6-all-actions',
      }),
    );
    await sleep(6000);
    const stats = await run.stats();
    await run.stop();
    const missing = mapped.filter((a) => !stats.actions[a]);
    assert.deepEqual(missing, [], 'every action ran at least once');
    assert.equal(stats.actions.SwitchTeam, undefined);
    assert.equal(stats.scriptErrors, 0, `script errors; see ${run.logFile}`);
    assert.equal(stats.errors, 0, 'the stand-in answered every request with success');
    assert.deepEqual(standin.unknown, [], 'only endpoints the stand-in knows');
    for (const route of [
      'login',
      'logout',
      'sync',
      'messages',
      'read_markers',
      'receipt',
      'send',
      'redact',
      'context',
      'relations',
      'threads',
      'search',
      'user_directory',
      'profile',
      'joined_rooms',
      'publicRooms',
      'join',
      'createRoom',
      'tags',
      'presence',
    ]) {
      assert.ok((standin.hits.get(route) ?? 0) > 0, `route ${route} was called`);
    }
    const log = await readFile(run.logFile, 'utf8');
    assert.match(log, /no Matrix equivalent for SwitchTeam; their weight is ignored/);
  });
});

test('a scenario that fails in setup stops startK6 with the reason from the k6 log', { skip, timeout: 30_000 }, async () => {
  await withBench(0, {}, async ({ dir, supervisor, options }) => {
    const emptyUsers = join(dir, 'empty-users.json');
    await writeFile(emptyUsers, '[]');
    await assert.rejects(startK6(await options({ usersFile: emptyUsers })), /k6 stopped before the test started[\s\S]*the users file is empty/);
    assert.equal(supervisor.firstCrash()?.running, false);
  });
});

test('bad settings are refused before k6 starts', { skip, timeout: 30_000 }, async () => {
  await withBench(0, {}, async ({ options }) => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const taken = (blocker.address() as { port: number }).port;
    try {
      await assert.rejects(
        startK6(await options({ apiPort: taken })),
        (e: Error) => e instanceof InputError && /port \d+ on 127\.0\.0\.1 is already taken/.test(e.message),
      );
    } finally {
      await new Promise((r) => blocker.close(r));
    }
    await assert.rejects(startK6(await options({ baseUrl: 'http://example.com' })), /baseUrl: expected a loopback URL/);
    await assert.rejects(startK6(await options({ initialUsers: 40 })), /initialUsers \(40\) is larger than maxUsers \(30\)/);
    await assert.rejects(startK6(await options({ usersFile: '/nonexistent/users.json' })), /users file \/nonexistent\/users\.json does not exist/);
    await assert.rejects(startK6(await options({ k6Path: '/nonexistent/k6' })), /k6 binary \/nonexistent\/k6 is missing/);
  });
});

test("idle time follows load-test-ng's PickIdleTimeMs: uniform in [min, 2*avg - min) times the rate", { skip, timeout: 30_000 }, async () => {
  await withBench(0, {}, async ({ dir, options }) => {
    // 100..300 ms, x2 -> 200..600 ms, mean 400 ms; requests to the stand-in take ~1 ms.
    const run = await startK6(
      await options({ initialUsers: 6, maxUsers: 6, idle: { minimumMs: 100, averageMs: 200, rateMultiplier: 2 }, actions: { UnreadCheck: 1 } }),
    );
    await sleep(7000);
    await run.stop();
    const summary = JSON.parse(await readFile(join(dir, 'k6-summary.json'), 'utf8')) as {
      metrics: Record<string, { min?: number; max?: number; avg?: number; count?: number }>;
    };
    const iteration = summary.metrics.iteration_duration!;
    assert.ok(iteration.min! >= 200, `shortest iteration ${iteration.min} ms`);
    assert.ok(iteration.max! < 600 + 150, `longest iteration ${iteration.max} ms`);
    assert.ok(iteration.avg! > 340 && iteration.avg! < 470, `mean iteration ${iteration.avg} ms`);
  });
});

test('a k6 killed during a run is reported as such, naming its log, and cleaned up', { skip, timeout: 30_000 }, async () => {
  await withBench(5, {}, async ({ supervisor, options }) => {
    const run = await startK6(await options({ initialUsers: 3 }));
    const exporter = await startExporter({ k6ApiPort: run.apiPort, k6Pid: run.process.pid! });
    try {
      process.kill(run.process.pid!, 'SIGKILL');
      await run.process.exited;
      await assert.rejects(run.setUsers(5), /k6 is not running: k6 was killed by SIGKILL; see its log: .*k6\.log/);
      await assert.rejects(run.stats(), /k6 is not running/);
      assert.equal(supervisor.firstCrash(), run.process);
      assert.equal((await fetch(exporter.url)).status, 503, 'Prometheus sees the engine down');
    } finally {
      await exporter.close();
    }
    assert.deepEqual(await supervisor.stopAll(), []);
    assert.equal(await portIsFree(run.apiPort), true);
  });
});

test('a request that outlives the per-request timeout is a client timeout, and still in the histogram', { skip, timeout: 30_000 }, async () => {
  await withBench(
    1,
    {},
    async ({ standin, options }) => {
      const run = await startK6(await options({ initialUsers: 4, maxUsers: 4, requestTimeoutMs: 400, actions: { UnreadCheck: 1, SwitchChannel: 1 } }));
      const exporter = await startExporter({ k6ApiPort: run.apiPort, k6Pid: run.process.pid! });
      try {
        await sleep(5000);
        const exp = parseExposition(await (await fetch(exporter.url)).text());
        const timeouts = valueOf(exp, 'loadtest_http_timeouts_total') ?? 0;
        const h = histogram(exp, 'loadtest_http_request_time');
        const syncs = standin.hits.get('sync') ?? 0;
        assert.ok(timeouts > 0 && timeouts <= syncs, `timeouts ${timeouts}, syncs ${syncs}`);
        // A timed-out request took ~0.4 s: it lands above the 0.3 s bound.
        const upTo03 = h.buckets.find(([le]) => le === 0.3)![1];
        assert.ok(h.count - upTo03 >= timeouts, `${h.count - upTo03} slow requests for ${timeouts} timeouts`);
        assert.equal(valueOf(exp, 'loadtest_http_errors_total', { status_code: '0' }), undefined, 'a timeout is not also a transport error');
        assert.ok((await run.stats()).timeouts >= timeouts, 'stats() counts the same timeouts');
      } finally {
        await exporter.close();
      }
      await run.stop();
    },
    { sync: 2000 },
  );
});
