import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalGateBench } from '../../src/bench/local/local-gate-bench.ts';
import { CapacityHints } from '../../src/bench/capacity-hints.ts';
import { Progress } from '../../src/bench/progress.ts';
import type { RunOptions, Side } from '../../src/bench/gate-plan.ts';
import { parseGateConfig } from '../../src/config/load.ts';
import { echo, ECHO_SCENARIO } from '../support/echo/chat-server.ts';
import { TEST_CACHE_DIR } from '../support/synapse-installs.ts';

/**
 * A third chat server runs on the local bench with no change to the bench: the echo
 * adapter (test/support/echo, a minimal HTTP server with a Prometheus endpoint) is handed
 * to the real LocalGateBench, which installs, seeds, starts and measures it with real
 * PostgreSQL, nginx, Prometheus, node_exporter and k6 on 127.0.0.1 through the ChatServer
 * capabilities alone. The shipped servers are chosen by target.system (the config's list
 * and the registry); this one is handed in, as the run options hand in theirs.
 */
test('a third chat server, known to the bench only through ChatServer, is set up, run, measured and stopped', { timeout: 10 * 60_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-echo-'));
  await chmod(dir, 0o711); // PostgreSQL runs unprivileged and must reach its data dir
  const tmp = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  const lines: string[] = [];
  const progress = new Progress((line) => lines.push(line), { githubActions: false });
  let bench: LocalGateBench | undefined;
  try {
    const config = parseGateConfig(
      {
        version: 1,
        name: 'echo',
        target: { system: 'synapse', versionPattern: '^[0-9]+\\.[0-9]+\\.[0-9]+$' },
        bench: { kind: 'local', local: { dataset: { users: 8 } } },
        engine: { scenario: ECHO_SCENARIO },
        tests: [{ type: 'bounded', name: 'bounded', users: 4, rampUp: '5s', duration: '20s' }],
      },
      'echo.yml',
    );
    const side = (role: Side['role'], label: string): Side => ({ role, label, version: label, overrides: [], sideOverrides: [] });
    const o: RunOptions = {
      configFile: join(dir, 'echo.yml'),
      config,
      server: echo,
      outDir: join(dir, 'out'),
      cacheDir: join(dir, 'cache'),
      repeats: 1,
      maxRepeats: 1,
      resume: false,
      updateNoiseModel: false,
      tests: config.tests,
      keep: false,
      baseline: side('baseline', '1.0.0'),
      candidate: side('candidate', '1.0.1'),
      datasetVersion: '1.0.0',
      hints: new CapacityHints(),
    };
    // k6 from the tests' cache (built there once); the rest of this cache is the test's own.
    await mkdir(join(TEST_CACHE_DIR, 'k6'), { recursive: true });
    await mkdir(o.cacheDir, { recursive: true });
    await symlink(join(TEST_CACHE_DIR, 'k6'), join(o.cacheDir, 'k6'));
    bench = new LocalGateBench(o, progress, join(dir, 'logs'));
    assert.equal(bench.system, 'echo');
    await bench.setUp(new AbortController().signal);
    assert.equal(bench.fingerprint().dataset, 'Echo dataset: 8 users');
    const result = await bench.execute({ side: o.candidate, test: config.tests[0]!, repeat: 0 });
    assert.equal(result.status, 'completed', `${result.problems.join('; ')}\n${lines.join('\n')}`);
    assert.equal(result.target.system, 'echo');
    assert.equal(result.bench.versions.target, 'Echo 1.0.1');
    assert.ok(result.totals.requests > 20, `k6 counted ${result.totals.requests} requests`);
    assert.equal(result.api[0]?.name, 'GET /echo');
    assert.ok((result.series.cpuPercent?.v.length ?? 0) > 0, 'the process exporter measured the echo server');
    assert.ok(
      (result.series.connectedUsers?.v ?? []).some((v) => v === 4),
      "k6 held the test's users",
    );
    assert.equal(await bench.changedFunctions([{ name: 'f', file: 'f.py' }]), undefined, 'a server without the changed-code capability');
    assert.ok(
      lines.some((l) => l.includes('starting echo 1.0.1')),
      lines.join('\n'),
    );
    assert.ok(bench.notes([]).some((n) => n.startsWith('Local bench: Echo behind nginx')));
  } finally {
    const problems: string[] = bench ? await bench.tearDown() : [];
    assert.deepEqual(problems, []);
    if (tmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmp;
    const left = (await readdir(dir)).filter((f) => f.startsWith('loadgate-bench-'));
    await rm(dir, { recursive: true, force: true });
    assert.deepEqual(left, [], 'the bench data dirs are removed');
  }
});

test("profile: on is refused before anything is installed when the server's profiler cannot work here, with the fix", async () => {
  const installed: string[] = [];
  const server = {
    ...echo,
    local: {
      ...echo.local!,
      install: async (side: { version: string }) => (installed.push(side.version), { key: side.version, version: side.version, dir: '/nonexistent' }),
    },
    profile: {
      refusal: async () => 'profile: on needs ptrace; run `sudo sysctl -w kernel.yama.ptrace_scope=0` first',
      prepare: async () => ({
        attach: () => {
          throw new Error('not reached');
        },
      }),
    },
  };
  const config = parseGateConfig(
    {
      version: 1,
      name: 'echo',
      target: { system: 'synapse' },
      bench: { kind: 'local' },
      profile: 'on',
      tests: [{ type: 'bounded', users: 1, rampUp: '1s', duration: '2s' }],
    },
    'echo.yml',
  );
  const side = (role: Side['role']): Side => ({ role, label: '1.0.0', version: '1.0.0', overrides: [], sideOverrides: [] });
  const o = {
    configFile: 'echo.yml',
    config,
    server,
    cacheDir: '/nonexistent',
    keep: false,
    baseline: side('baseline'),
    candidate: side('candidate'),
    datasetVersion: '1.0.0',
    hints: new CapacityHints(),
  } as unknown as RunOptions;
  const bench = new LocalGateBench(o, new Progress(() => {}, { githubActions: false }), '/nonexistent');
  await assert.rejects(
    bench.setUp(new AbortController().signal),
    (e: Error) => e.name === 'InputError' && /sudo sysctl -w kernel\.yama\.ptrace_scope=0/.test(e.message),
  );
  assert.deepEqual(installed, [], 'nothing was installed');
  await bench.tearDown();
});
