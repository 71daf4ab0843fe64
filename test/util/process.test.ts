import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProcessSupervisor } from '../../src/util/process.ts';

/**
 * A process's pipes can outlive it: here a background child of the shell keeps writing
 * after the shell has exited. Its log must get what arrives while the pipes close, and
 * nothing may be written to the log after it is closed (ERR_STREAM_WRITE_AFTER_END, an
 * uncaught exception that ended a whole test file).
 */
test('output that arrives after a process exits is logged while its pipes close, and dropped once the log is closed', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lg-process-'));
  const supervisor = new ProcessSupervisor();
  const uncaught: Error[] = [];
  const onUncaught = (error: Error): void => void uncaught.push(error);
  process.on('uncaughtException', onUncaught);
  try {
    const soon = await supervisor.spawn({ name: 'soon', command: 'bash', args: ['-c', '(sleep 0.3; echo late) & echo first'], logFile: join(dir, 'soon.log') });
    await soon.exited;
    const soonLog = await readFile(join(dir, 'soon.log'), 'utf8');
    assert.match(soonLog, /^first$/m);
    assert.match(soonLog, /^late$/m, 'written by a child after the shell exited, before the pipes closed');

    const started = Date.now();
    const lingering = await supervisor.spawn({
      name: 'lingering',
      command: 'bash',
      args: ['-c', '(sleep 2.5; echo later; sleep 0.5; echo latest) & exit 0'],
      logFile: join(dir, 'lingering.log'),
    });
    await lingering.exited;
    assert.ok(Date.now() - started < 2400, 'the log closes after a grace period, not when the last child ends');
    await sleep(3500);
    assert.doesNotMatch(await readFile(join(dir, 'lingering.log'), 'utf8'), /^later$/m);
    assert.deepEqual(
      uncaught.map((e) => e.message),
      [],
    );
  } finally {
    process.off('uncaughtException', onUncaught);
    await supervisor.stopAll();
    supervisor.dispose();
    await rm(dir, { recursive: true, force: true });
  }
});
