import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { defaultCacheDir } from '../../../src/run/options.ts';
import { ensurePySpy, ptraceRefusal, startPySpy } from '../../../src/chat-servers/synapse/py-spy.ts';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { withTempDir } from '../../support/runs.ts';

/**
 * The real py-spy (installed into the cache as a gate does) attached to a running Python
 * request loop, in short segments, cut to a window inside the recording.
 */
const skip = process.env.LOADGATE_SKIP_INTEGRATION === '1' ? 'LOADGATE_SKIP_INTEGRATION=1' : false;
const WORKLOAD = join(import.meta.dirname, '..', '..', 'fixtures', 'profiles', 'workload.py');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('py-spy attached in segments gives the profile of a window inside the recording', { skip, timeout: 300_000 }, async () => {
  const pySpy = await ensurePySpy({ cacheDir: defaultCacheDir() });
  await withTempDir(async (dir) => {
    const workload = spawn('python3', [WORKLOAD, '10', 'load_rows'], { stdio: 'ignore' });
    try {
      await sleep(500);
      const recorder = startPySpy({ pySpy, pid: workload.pid as number, dir: join(dir, 'segments'), rateHz: 100, segmentSec: 2 });
      const t0 = Date.now();
      await sleep(5000);
      await recorder.stop();
      const profile = recorder.profile({ startMs: t0 + 1000, endMs: t0 + 4000 });
      assert.ok(typeof profile !== 'string', String(profile));
      assert.equal(profile.windowSec, 3);
      assert.ok(profile.coveredSec > 2.5 && profile.coveredSec <= 3, `covered ${profile.coveredSec} s of 3`);
      const samples = profile.stacks.reduce((n, s) => n + s.samples, 0);
      // At most the 100 a second asked for; how many of them land depends on the CPU the
      // workload and py-spy get, which a busy machine takes, so only a floor is asserted.
      assert.ok(samples > 0.1 * 100 * profile.coveredSec && samples <= 1.05 * 100 * profile.coveredSec, `${samples} samples`);
      const loadRows = profile.frames.findIndex((f) => f.name === 'load_rows' && f.file === 'workload.py' && f.line === 25);
      assert.ok(loadRows >= 0, 'load_rows, with its first line');
      assert.ok(profile.stacks.some((s) => s.frames.at(-1) === loadRows));
      assert.ok(profile.frames.every((f) => !f.name.includes(';')));
      assert.equal(recorder.profile({ startMs: t0 + 60_000, endMs: t0 + 61_000 }), 'py-spy recorded no samples in the measured window');
    } finally {
      workload.kill('SIGKILL');
    }
  });
});

test('a py-spy that cannot attach says why instead of a profile', { skip, timeout: 300_000 }, async () => {
  const pySpy = await ensurePySpy({ cacheDir: defaultCacheDir() });
  await withTempDir(async (dir) => {
    // A pid far above pid_max: no such process.
    const recorder = startPySpy({ pySpy, pid: 99_999_999, dir, segmentSec: 1 });
    await sleep(1500);
    await recorder.stop();
    const t = Date.now();
    assert.match(String(recorder.profile({ startMs: t - 2000, endMs: t })), /^py-spy wrote no profile \(exit \d+\): .+/);
  });
});

test("py-spy's ptrace rights: refused with the fix for a non-root user under Yama scope 1 (a GitHub-hosted runner), allowed at 0 or as root", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-yama-'));
  try {
    const scope = async (value: string) => {
      await writeFile(join(dir, 'ptrace_scope'), `${value}\n`);
      return join(dir, 'ptrace_scope');
    };
    const runner = await ptraceRefusal(await scope('1'), 1001);
    assert.match(
      runner ?? '',
      /kernel\.yama\.ptrace_scope = 1 refuses to a user other than root: before the gate, run `sudo sysctl -w kernel\.yama\.ptrace_scope=0`/,
    );
    assert.equal(await ptraceRefusal(await scope('0'), 1001), undefined);
    assert.equal(await ptraceRefusal(await scope('1'), 0), undefined, 'root has CAP_SYS_PTRACE');
    assert.match((await ptraceRefusal(await scope('3'), 0)) ?? '', /cannot be lowered without a reboot/);
    assert.equal(await ptraceRefusal(join(dir, 'no-yama'), 1001), undefined, 'no Yama: ordinary same-user ptrace');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
