import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ComponentError, waitUntilReady } from '../../src/util/readiness.ts';
import { ProcessSupervisor } from '../../src/util/process.ts';

test('readiness: bounded tries, then an error naming the component, what was expected and its log', async () => {
  let tries = 0;
  await assert.rejects(
    waitUntilReady(
      async () => {
        tries++;
        throw new Error('connection refused');
      },
      { component: 'prometheus', timeoutMs: 300, intervalMs: 50, what: 'answering /-/ready', logFile: '/out/logs/prometheus.log' },
    ),
    (e: unknown) => {
      assert.ok(e instanceof ComponentError);
      assert.equal(
        (e as Error).message,
        'prometheus: not ready after 0s: expected it to be answering /-/ready (last error: connection refused); see its log: /out/logs/prometheus.log',
      );
      return true;
    },
  );
  assert.ok(tries >= 3 && tries <= 10, `tries ${tries}`);
  let n = 0;
  await waitUntilReady(async () => ++n === 3, { component: 'x', timeoutMs: 5000, intervalMs: 10, what: 'ready' });
  assert.equal(n, 3);
});

test('readiness stops at once when the process exits, naming its exit and log', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lg-ready-'));
  const supervisor = new ProcessSupervisor();
  try {
    const proc = await supervisor.spawn({
      name: 'postgres',
      command: 'sh',
      args: ['-c', 'echo "FATAL: bad setting" >&2; exit 3'],
      logFile: join(dir, 'postgres.log'),
    });
    const started = Date.now();
    await assert.rejects(
      waitUntilReady(async () => false, { component: 'postgres', process: proc, timeoutMs: 30_000, intervalMs: 50, what: 'accepting connections' }),
      new RegExp(
        `^ComponentError: postgres: exited before it was ready \\(postgres exited with code 3; see its log: ${join(dir, 'postgres.log').replace(/[/.]/g, '\\$&')}\\)$`,
      ),
    );
    assert.ok(Date.now() - started < 5000, 'did not wait for the time-out');
  } finally {
    await supervisor.stopAll();
    await rm(dir, { recursive: true, force: true });
  }
});
