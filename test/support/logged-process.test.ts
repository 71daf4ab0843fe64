import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLogged } from './logged-process.ts';

async function inTempDir<T>(body: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-logged-'));
  try {
    return await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// The shell exits at once; a background child it started still holds the pipes and
// writes afterwards, as act's step shells do after act itself has exited.
test('output written after the process exits is kept, and the log is ended once', () =>
  inTempDir(async (dir) => {
    const logFile = join(dir, 'run.log');
    const result = await runLogged('sh', ['-c', '(sleep 0.3; echo late-out; echo late-err >&2) & echo early; exit 4'], {
      cwd: dir,
      logFile,
      timeoutMs: 60_000,
    });
    assert.deepEqual(result, { code: 4, signal: null, timedOut: false });
    const lines = (await readFile(logFile, 'utf8')).split('\n').filter(Boolean).sort();
    assert.deepEqual(lines, ['early', 'late-err', 'late-out']);
  }));

// stdout closes long before stderr: with pipe's default end, stdout's end would end the
// shared log and stderr's next write would throw ERR_STREAM_WRITE_AFTER_END.
test('one pipe closing early does not end the log for the other', () =>
  inTempDir(async (dir) => {
    const logFile = join(dir, 'run.log');
    const result = await runLogged('sh', ['-c', 'echo out; exec 1>&-; sleep 0.2; echo err-after-stdout-closed >&2'], { cwd: dir, logFile, timeoutMs: 60_000 });
    assert.equal(result.code, 0);
    assert.equal(await readFile(logFile, 'utf8'), 'out\nerr-after-stdout-closed\n');
  }));

test('the whole process group is stopped at the time limit and reported as timed out', () =>
  inTempDir(async (dir) => {
    const logFile = join(dir, 'run.log');
    const result = await runLogged('sh', ['-c', 'sleep 30 & wait'], { cwd: dir, logFile, timeoutMs: 200 });
    assert.deepEqual(result, { code: null, signal: 'SIGTERM', timedOut: true });
  }));

test('a command that cannot start rejects and still closes the log', () =>
  inTempDir(async (dir) => {
    const logFile = join(dir, 'run.log');
    await assert.rejects(runLogged(join(dir, 'no-such-binary'), [], { cwd: dir, logFile, timeoutMs: 60_000 }), /ENOENT/);
    assert.equal(await readFile(logFile, 'utf8'), '');
  }));
