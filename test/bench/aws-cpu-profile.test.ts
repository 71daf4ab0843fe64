import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { captureProfileScript, fetchCpuProfile, PROFILE_CHUNK_BYTES, readProfileChunkScript } from '../../src/bench/aws/cpu-profile.ts';
import type { RemoteResult, RemoteShell } from '../../src/bench/aws/remote-shell.ts';
import { goStoredProfile } from '../../src/chat-servers/mattermost/pprof.ts';
import { diffProfiles } from '../../src/compare/profile-diff.ts';
import type { StoredProfile } from '../../src/results/profile.ts';
import { runResultSchema } from '../../src/results/schema.ts';
import { asInput, bounded } from '../support/runs.ts';

/**
 * The Mattermost profile path against a real Go CPU profile: a small Go program
 * (test/fixtures/go-pprof) serves net/http/pprof on 127.0.0.1 with one known hot function
 * on the CPU; the scripts the gate sends over SSM run with bash, the node's metrics
 * listener relocated to the program. The profile comes back in chunks, is checked by its
 * digest and decoded with pprof-format.
 */
const FIXTURE = fileURLToPath(new URL('../fixtures/go-pprof/', import.meta.url));
const skip = process.env.LOADGATE_SKIP_INTEGRATION === '1' ? 'LOADGATE_SKIP_INTEGRATION=1' : false;

function bashShell(env: Record<string, string>, sent: string[]): RemoteShell {
  return {
    async run(ids, script) {
      sent.push(script);
      const out = new Map<string, RemoteResult>();
      for (const id of ids) {
        const r = await promisify(execFile)('bash', ['-c', script], { env: { ...process.env, ...env }, maxBuffer: 1 << 20 }).then(
          ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
          (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }),
        );
        out.set(id, { instanceId: id, status: r.code === 0 ? 'Success' : 'Failed', exitCode: r.code, stdout: r.stdout.replace(/\n$/, ''), stderr: r.stderr });
      }
      return out;
    },
  };
}

function firstLine(child: ReturnType<typeof spawn>): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once('line', (line) => resolve(line.trim()));
    child.once('exit', (code) => reject(new Error(`the Go program exited (${code}) before printing its address`)));
  });
}

test('a CPU profile of a Go server under load is fetched over the remote shell in chunks, decoded, and names its hot function', { skip, timeout: 120_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-pprof-'));
  const bin = join(dir, 'go-pprof');
  // Standard library only: no module download.
  await promisify(execFile)('go', ['build', '-o', bin, '.'], { cwd: FIXTURE, env: { ...process.env, GOPROXY: 'off', GOTOOLCHAIN: 'local', GOFLAGS: '' } });
  const server = spawn(bin, [], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const address = await firstLine(server);
    const home = join(dir, 'node-home');
    const sent: string[] = [];
    const shell = bashShell({ LOADGATE_HOME: home, LOADGATE_METRICS_URL_8167: `http://${address}` }, sent);
    const node = { id: 'i-0aaaaaaaaaaaaaaa1', name: 'app0' };
    // The tiny program's profile is smaller than a real server's: small chunks make several.
    const bytes = await fetchCpuProfile({ shell, node, name: 'candidate-v1-test-0', seconds: 2, metricsPort: 8167, chunkBytes: 100 });
    assert.ok(bytes.length > 300, `a profile of several chunks (${bytes.length} bytes)`);
    assert.equal(sent.filter((s) => s.includes('base64 -w0')).length, Math.ceil(bytes.length / 100), 'one command per chunk');
    assert.deepEqual(await readdir(join(home, 'profiles')), [], 'the node keeps no profile');

    // Decoded into the run result's stored form: stacks root first, inlined calls expanded.
    const stored = goStoredProfile([bytes], { windowSec: 2 });
    assert.equal(stored.tool, 'Go pprof');
    assert.equal(stored.sampleSec, 0.01, "runtime/pprof's 100 Hz");
    assert.ok(stored.coveredSec >= 1.9 && stored.coveredSec <= 2, `sampled ${stored.coveredSec} s of the 2 s window`);
    const cpuSeconds = stored.stacks.reduce((n, st) => n + st.samples, 0) * stored.sampleSec;
    // One busy goroutine on a shared machine: well above nothing, at most about 2 CPU-seconds.
    assert.ok(cpuSeconds > 0.3 && cpuSeconds < 2.5, `CPU-seconds in 2 s: ${cpuSeconds}`);
    const self = new Map<number, number>();
    for (const st of stored.stacks) self.set(st.frames.at(-1) as number, (self.get(st.frames.at(-1) as number) ?? 0) + st.samples * stored.sampleSec);
    const [hot, hotSelf] = [...self].sort((a, b) => b[1] - a[1])[0] as [number, number];
    const top = stored.frames[hot];
    assert.equal(top?.name, 'main.hotSpin', 'the hot function first by self time');
    assert.ok(top.file.endsWith('go-pprof/main.go'), top.file);
    assert.equal(top.line, 17, 'its first line in main.go');
    assert.ok(hotSelf > 0.5 * cpuSeconds, `most of the CPU: ${hotSelf} of ${cpuSeconds} s`);
    assert.ok(stored.stacks.every((st) => stored.frames[st.frames[0] as number]?.name !== 'main.hotSpin'), 'stacks are root first');
    const caller = stored.frames.findIndex((f) => f.name === 'main.main.func1');
    const callerTotal = stored.stacks.filter((st) => st.frames.includes(caller)).reduce((n, st) => n + st.samples, 0) * stored.sampleSec;
    assert.ok(caller >= 0 && callerTotal >= hotSelf * 0.99, 'its caller holds it in its total time');

    // As a run result's profile, the profile diff applies unchanged: a candidate whose
    // two app nodes each spent this CPU, against a baseline with one, per the same requests.
    const run = (version: string, profile: StoredProfile) => runResultSchema.parse({ ...asInput(bounded(version, 0)), totals: { requests: 1000, errors: 0, timeouts: 0 }, profile });
    const diff = diffProfiles([run('10.12.0', stored)], [run('11.0.1', goStoredProfile([bytes, bytes], { windowSec: 2 }))]);
    assert.equal(diff?.grown[0]?.name, 'main.hotSpin', 'the hot function grew most');
    assert.ok(Math.abs((diff?.totalPerKReq.candidate ?? 0) - 2 * (diff?.totalPerKReq.baseline ?? 0)) < 1e-9, 'two nodes pooled: twice the CPU per request');
    assert.equal(goStoredProfile([bytes], { windowSec: 1 }).coveredSec, 1, 'a profile that ran past an early-stopped test covers at most its window');

    // From slot a's port: nothing listens there.
    await assert.rejects(fetchCpuProfile({ shell, node, name: 'slot-a', seconds: 1, metricsPort: 8067 }), /profile Mattermost failed on 1 of 1 node\(s\)/);
  } finally {
    server.kill();
    await rm(dir, { recursive: true, force: true });
  }
});

test('profile scripts take only validated names, ports and durations', () => {
  assert.throws(() => captureProfileScript('../etc', 10, 8067), /not a safe profile name/);
  assert.throws(() => captureProfileScript('run', 300, 8067), /below Mattermost's 300 s WriteTimeout/);
  assert.throws(() => captureProfileScript('run', 10, 70000), /not a port/);
  assert.throws(() => readProfileChunkScript('run', 0, PROFILE_CHUNK_BYTES + 1), /bad chunk/);
  assert.match(captureProfileScript('run', 30, 8167), /\/debug\/pprof\/profile\?seconds=30/);
  assert.throws(() => goStoredProfile([Buffer.from([0x0a, 0x02, 0x08, 0x01])], { windowSec: 1 }), /not a CPU profile/);
});
