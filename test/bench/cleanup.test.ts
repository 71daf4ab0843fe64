import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isListening } from '../../src/util/ports.ts';

/**
 * A `loadgate run` that is stopped (SIGTERM) or killed (SIGKILL, which no handler sees)
 * must leave no bench process, listening port or data dir behind. Real components:
 * PostgreSQL, nginx, Prometheus, node_exporter (and the in-process exporter).
 */
const skip = process.env.LOADGATE_SKIP_INTEGRATION === '1' ? 'LOADGATE_SKIP_INTEGRATION=1: skipping the tests that start real bench components' : false;
const CHILD = fileURLToPath(new URL('./fixtures/bench-child.ts', import.meta.url));

interface Started {
  ports: Record<string, number>;
  dataRoot: string;
  pids: number[];
}

async function startChild(logDir: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, logDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const started = await new Promise<Started>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bench child did not start in 60 s: ${err}`)), 60_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) {
        clearTimeout(timer);
        resolve(JSON.parse(out.split('\n')[0]!) as Started);
      }
    });
    child.once('exit', (code) => reject(new Error(`bench child exited with ${code}: ${err}`)));
  });
  return { child, started };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

async function assertAllGone(s: Started, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const listening = async () => (await Promise.all(Object.values(s.ports).map(async (p) => ((await isListening(p)) ? p : 0)))).filter(Boolean);
  for (;;) {
    const pids = s.pids.filter(alive);
    const ports = await listening();
    const dir = await exists(s.dataRoot);
    if (!pids.length && !ports.length && !dir) return;
    if (Date.now() > deadline) assert.fail(`left behind: pids ${pids.join(',') || '-'}, ports ${ports.join(',') || '-'}, data dir ${dir ? s.dataRoot : '-'}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
  test(`after ${signal} of a running bench nothing is left running, listening or on disk`, { skip, timeout: 120_000 }, async () => {
    const logDir = await mkdtemp(join(tmpdir(), 'lg-cleanup-logs-'));
    try {
      const { child, started } = await startChild(logDir);
      assert.equal(started.pids.length, 4);
      for (const pid of started.pids) assert.ok(alive(pid), `pid ${pid} should be running`);
      assert.ok(await isListening(started.ports.postgres!));
      assert.ok(await isListening(started.ports.nginx!));
      assert.ok(await isListening(started.ports.prometheus!));
      assert.ok(await exists(started.dataRoot));
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      child.kill(signal);
      const code = await exited;
      if (signal === 'SIGTERM') assert.equal(code, 143, 'the handler stops everything, then exits 143');
      // SIGKILL: the watchdog notices the closed pipe and cleans up.
      await assertAllGone(started, 20_000);
      // Logs are kept (they belong to the out dir).
      assert.ok(await exists(join(logDir, 'postgres.log')));
    } finally {
      await rm(logDir, { recursive: true, force: true });
    }
  });
}
