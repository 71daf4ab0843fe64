import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runResultSchema, type RunResult } from '../../src/results/schema.ts';
import { verdictFileSchema } from '../../src/results/verdict-schema.ts';

/**
 * `loadgate run` end to end on the real local bench: PostgreSQL, Synapse, nginx,
 * Prometheus, node_exporter and k6, all on 127.0.0.1, on a tiny profile. The same
 * Synapse version on both sides (the one a fresh machine most likely has cached).
 * Skipped only with LOADGATE_SKIP_INTEGRATION=1.
 */
const skip = process.env.LOADGATE_SKIP_INTEGRATION === '1' ? 'LOADGATE_SKIP_INTEGRATION=1: skipping the local-bench integration tests' : false;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CONFIG = fileURLToPath(new URL('./fixtures/tiny-synapse.yml', import.meta.url));
const VERSION = process.env.LOADGATE_IT_SYNAPSE_VERSION ?? '1.162.0';

async function runGate(args: string[], tmp: string, config = CONFIG): Promise<{ code: number | null; out: string }> {
  await chmod(tmp, 0o711); // PostgreSQL runs unprivileged and must reach its data dir under TMPDIR
  const child = spawn(process.execPath, [join(ROOT, 'bin/loadgate.js'), 'run', '--config', config, ...args], {
    cwd: ROOT,
    // The bench's data dirs go under TMPDIR: after the run that folder must hold none.
    env: { ...process.env, TMPDIR: tmp },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  return { code, out };
}

/** On an unexpected exit, the checks that decided it, so a CI log says why without the run dir. */
async function verdictDetail(outDir: string): Promise<string> {
  const text = await readFile(join(outDir, 'verdict.json'), 'utf8').catch(() => undefined);
  if (text === undefined) return 'no verdict.json was written';
  const v = verdictFileSchema.parse(JSON.parse(text));
  const notPassed = v.checks
    .filter((c) => c.verdict !== 'pass')
    .map((c) => `  ${c.test} ${c.metric}: ${c.verdict}${c.gating ? '' : ' (not gating)'}: ${c.reason}`);
  return [`verdict ${v.verdict}: ${v.summary}`, ...notPassed, ...v.problems.map((p) => `  problem: ${p}`)].join('\n');
}

async function readResults(outDir: string): Promise<Map<string, RunResult>> {
  const files = (await readdir(join(outDir, 'results'))).filter((f) => f.endsWith('.json'));
  return new Map(
    await Promise.all(files.map(async (f) => [f, runResultSchema.parse(JSON.parse(await readFile(join(outDir, 'results', f), 'utf8')))] as const)),
  );
}

/** No process of this run may survive it: nothing whose command line names its temp dir or out dir. */
async function leftovers(...paths: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir('/proc')).filter((p) => /^\d+$/.test(p))) {
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (paths.some((p) => cmd.includes(p))) found.push(`${pid}: ${cmd.replace(/\0/g, ' ').slice(0, 160)}`);
  }
  return found;
}

/**
 * One sequential gate runs both tests (what the main job does), and three tests read it: the
 * bounded runs, the unbounded runs, and what the gate leaves behind. One gate instead of one
 * per test spares a bench set-up and the settle between gates.
 */
describe('a sequential A/A gate on the real bench, bounded then unbounded', { skip }, () => {
  let tmp = '';
  let out = '';
  let gate: { code: number | null; out: string } = { code: null, out: '' };
  before(
    async () => {
      tmp = await mkdtemp(join(tmpdir(), 'lg-it-'));
      out = join(tmp, 'report');
      gate = await runGate(['--baseline', VERSION, '--candidate', VERSION, '--out', out], tmp);
    },
    { timeout: 20 * 60_000 },
  );
  after(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  test('the A/A gate does not fail, and its verdict file and report are written', async () => {
    const { code, out: log } = gate;
    assert.ok(code === 0 || code === 2, `A/A must not fail (exit ${code}):\n${await verdictDetail(out)}\n${log.slice(-3000)}`);
    verdictFileSchema.parse(JSON.parse(await readFile(join(out, 'verdict.json'), 'utf8')));
    assert.match(await readFile(join(out, 'README.md'), 'utf8'), /unbounded/);
  });

  test('bounded: both runs complete with every measurement', async () => {
    const results = [...(await readResults(out))].filter(([name]) => name.includes('-bounded-'));
    assert.deepEqual(results.map(([name]) => name).sort(), [`baseline-${VERSION}-bounded-0.json`, `candidate-${VERSION}-bounded-0.json`]);
    for (const [name, r] of results) {
      assert.equal(r.status, 'completed', `${name}: ${r.problems.join('; ')}`);
      assert.deepEqual(r.stableWindow, { startSec: 10, endSec: 30 });
      assert.ok(r.totals.requests > 20, `${name}: ${r.totals.requests} requests`);
      assert.ok(r.api.length >= 3 && r.store.length >= 3, `${name}: per-handler and per-store timings`);
      for (const key of [
        'apiAvgMs',
        'apiP50Ms',
        'apiP95Ms',
        'apiP99Ms',
        'errorPercent',
        'storeAvgMs',
        'storeP99Ms',
        'cpuPercent',
        'threads',
        'heapInUseBytes',
        'connectedUsers',
        'rps',
      ] as const) {
        assert.ok(r.series[key]?.t.length, `${name}: series ${key}`);
      }
      assert.equal(Math.max(...r.series.connectedUsers!.v), 6);
      assert.equal(r.generator?.saturated, false);
      assert.match(r.bench.versions.target ?? '', new RegExp(`^Synapse ${VERSION.replace(/\./g, '\\.')}$`));
      assert.match(r.bench.versions.database ?? '', /^PostgreSQL \d+/);
      assert.match(r.bench.versions.engine ?? '', /^k6 v\d/);
      assert.ok(r.bench.host && r.bench.host.cores >= 1);
      // The speed probe ran on the target's core during the run (every 5 s over runs of 40 s and
      // more), summarised over the stable window when it held 6 probes, else over the whole run.
      assert.ok(
        r.speedProbe && r.speedProbe.samples >= 2 && r.speedProbe.cpuMsMin <= r.speedProbe.cpuMsMedian && r.speedProbe.cpuMsMedian <= r.speedProbe.cpuMsMax,
        `${name}: ${JSON.stringify(r.speedProbe)}`,
      );
      assert.match(r.speedProbe.workload, /^python-json-v1(@window)? CPython \d/, name);
    }
    const verdict = verdictFileSchema.parse(JSON.parse(await readFile(join(out, 'verdict.json'), 'utf8')));
    // Not gating at this size (see the fixture), but still measured and reported.
    for (const metric of ['API time, p99', 'Store time, p99', 'CPU utilization (stable phase)']) {
      assert.ok(
        verdict.checks.some((c) => c.test === 'bounded' && c.metric === metric && !c.gating),
        `${metric} reported as context`,
      );
    }
    assert.match(await readFile(join(out, 'README.md'), 'utf8'), /bounded/);
    assert.ok((await readdir(join(out, 'graphs'))).length >= 8, 'graphs rendered');
  });

  test('unbounded: the coordinator finds a supported user count; a crash-free run is judged', async () => {
    const { out: log } = gate;
    assert.match(log, /users \d+ \| Average client request duration \(s\)/, 'progress lines name users and health values');
    const results = [...(await readResults(out))].filter(([name]) => name.includes('-unbounded-'));
    assert.equal(results.length, 2);
    for (const [name, r] of results) {
      assert.equal(r.status, 'completed', `${name}: ${r.problems.join('; ')}`);
      assert.equal(r.test.type, 'unbounded');
      assert.ok(r.supportedUsers !== undefined && r.supportedUsers > 0 && r.supportedUsers <= 24, `${name}: supported ${r.supportedUsers}`);
      assert.ok(r.stableWindow.endSec - r.stableWindow.startSec > 0);
      assert.ok(r.series.connectedUsers?.v.some((v) => v > 0));
      if (r.test.type === 'unbounded') assert.match(r.test.health[1]!.query, /\/ 1$/, '$TARGET_CPU_COUNT expanded');
    }
  });

  test('nothing is left behind: logs in the out dir, no data dir, no process', async () => {
    assert.ok((await readdir(join(out, 'logs'))).includes('postgres.log'), 'logs kept in the out dir');
    assert.deepEqual(
      (await readdir(tmp)).filter((f) => f.startsWith('loadgate-bench-')),
      [],
      'data dirs removed',
    );
    assert.deepEqual(await leftovers(tmp), []);
  });
});

test('bad input exits 3 before anything starts', { skip, timeout: 60_000 }, async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'lg-it-'));
  try {
    const { code, out } = await runGate(['--baseline', VERSION, '--candidate', '1.2', '--out', join(tmp, 'r')], tmp);
    assert.equal(code, 3);
    assert.match(out, /--candidate: "1.2" does not match target.versionPattern/);
    assert.deepEqual(
      (await readdir(tmp)).filter((f) => !f.startsWith('tsx-')),
      [],
      'nothing created (tsx keeps its own cache there)',
    );
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
});

test('a target that does not start, or dies mid-run, makes the verdict inconclusive and names it with its log', { skip, timeout: 15 * 60_000 }, async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'lg-it-'));
  const out = join(tmp, 'report');
  try {
    // The baseline gets a config Synapse refuses (it exits at start); the candidate is
    // SIGKILLed by this test a few seconds into its run.
    let killed = false;
    const killer = setInterval(async () => {
      for (const pid of (await readdir('/proc')).filter((p) => /^\d+$/.test(p))) {
        const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
        if (!killed && cmd.includes('synapse.app.homeserver') && cmd.includes(tmp) && cmd.includes('/candidate-')) {
          // Wait until it serves requests, then kill it.
          const log = await readFile(join(out, 'logs', `candidate-${VERSION}-bounded-0`, 'k6.log'), 'utf8').catch(() => undefined);
          if (log === undefined) continue;
          await new Promise((r) => setTimeout(r, 12_000));
          try {
            process.kill(Number(pid), 'SIGKILL');
            killed = true;
          } catch {
            /* gone */
          }
        }
      }
    }, 1000);
    const { code, out: log } = await runGate(
      ['--baseline', VERSION, '--candidate', VERSION, '--tests', 'bounded', '--baseline-set', 'caches.global_factor=not-a-number', '--out', out],
      tmp,
    );
    clearInterval(killer);
    assert.ok(killed, `the test found and killed the candidate's Synapse:\n${log.slice(-2000)}`);
    assert.equal(code, 2, `inconclusive:\n${log.slice(-2000)}`);
    const results = await readResults(out);
    const baseline = results.get(`baseline-${VERSION}-bounded-0.json`)!;
    const candidate = results.get(`candidate-${VERSION}-bounded-0.json`)!;
    assert.equal(baseline.status, 'crashed');
    assert.match(
      baseline.problems.join('\n'),
      new RegExp(
        `synapse ${VERSION.replace(/\./g, '\\.')}: exited before it was ready .*see its log: .*baseline-${VERSION.replace(/\./g, '\\.')}-bounded-0/synapse\\.log`,
      ),
    );
    assert.match(await readFile(join(out, 'logs', `baseline-${VERSION}-bounded-0`, 'synapse.log'), 'utf8'), /global_factor must be a number/);
    assert.equal(candidate.status, 'crashed');
    assert.match(candidate.problems.join('\n'), /synapse .* was killed by SIGKILL; see its log: .*candidate-.*synapse\.log/);
    const verdict = verdictFileSchema.parse(JSON.parse(await readFile(join(out, 'verdict.json'), 'utf8')));
    assert.equal(verdict.verdict, 'inconclusive');
    assert.ok(verdict.problems.length > 0);
    assert.deepEqual(
      (await readdir(tmp)).filter((f) => f.startsWith('loadgate-bench-')),
      [],
    );
    assert.deepEqual(await leftovers(tmp), []);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
});

test(
  'a duet on the real bench: both sides run at once on their own servers, in slots a and b, and the verdict judges their ratio',
  { skip, timeout: 15 * 60_000 },
  async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'lg-it-'));
    const out = join(tmp, 'report');
    try {
      const duetConfig = join(tmp, 'tiny-duet.yml');
      await writeFile(duetConfig, (await readFile(CONFIG, 'utf8')).replace(/^name: (.*)$/m, 'name: $1-duet\nmode: duet'));
      const { code, out: log } = await runGate(['--baseline', VERSION, '--candidate', VERSION, '--out', out], tmp, duetConfig);
      assert.ok(code === 0 || code === 2, `A/A must not fail (exit ${code}):\n${await verdictDetail(out)}\n${log.slice(-3000)}`);
      assert.match(log, /pair 1 duet 1\/2: baseline .* with candidate .*, test "bounded"/);
      const results = await readResults(out);
      assert.equal(results.size, 4);
      for (const test of ['bounded', 'unbounded']) {
        const a = results.get(`baseline-${VERSION}-${test}-0.json`)!;
        const b = results.get(`candidate-${VERSION}-${test}-0.json`)!;
        for (const r of [a, b]) {
          assert.equal(r.status, 'completed', `${test}: ${r.problems.join('; ')}`);
          assert.equal(r.speedProbe, undefined, 'a duet needs no speed probe');
          if (r.test.type === 'unbounded') assert.match(r.test.health[1]!.query, /\/ 0\.5$/, 'each side is measured against half the target CPUs');
        }
        assert.deepEqual(
          [a.duet, b.duet],
          [
            { slot: 'a', cpuShare: 0.5 },
            { slot: 'b', cpuShare: 0.5 },
          ],
        );
        // Together: the later side's test ends within a scrape or two of the other's (the end barrier).
        const gapSec = Math.abs(Date.parse(a.finishedAt) - Date.parse(b.finishedAt)) / 1000;
        assert.ok(gapSec < 20, `${test}: the sides finished ${gapSec} s apart`);
      }
      const verdict = verdictFileSchema.parse(JSON.parse(await readFile(join(out, 'verdict.json'), 'utf8')));
      assert.equal(verdict.mode, 'duet');
      assert.match(await readFile(join(out, 'README.md'), 'utf8'), /Duet: each baseline run ran at the same time as the candidate run/);
      for (const slot of ['slot-a', 'slot-b']) assert.ok((await readdir(join(out, 'logs', slot))).includes('postgres.log'), `${slot} has its own PostgreSQL`);
      assert.deepEqual(
        (await readdir(tmp)).filter((f) => f.startsWith('loadgate-bench-')),
        [],
        'data dirs removed',
      );
      assert.deepEqual(await leftovers(tmp), []);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  },
);
