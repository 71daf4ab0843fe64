import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { Function as PprofFunction, Line, Location, Profile, Sample, StringTable, ValueType } from 'pprof-format';
import { AwsAttempt, type AwsRunDeps } from '../../src/bench/aws/run-attempt.ts';
import { mattermost } from '../../src/chat-servers/mattermost/chat-server.ts';
import type { RemoteResult, RemoteShell } from '../../src/bench/aws/remote-shell.ts';
import type { ScheduledRun } from '../../src/bench/gate-plan.ts';
import type { CollectWindow } from '../../src/bench/run-stage.ts';
import type { TestSpec } from '../../src/config/schema.ts';

/** A CPU profile as runtime/pprof writes it (gzipped; samples/count and cpu/nanoseconds; 10 ms period): 3 samples in app.(*App).CreatePost under its handler. */
function goProfile(): Buffer {
  const strings = new StringTable();
  const s = (text: string) => strings.dedup(text);
  const profile = new Profile({
    sampleType: [new ValueType({ type: s('samples'), unit: s('count') }), new ValueType({ type: s('cpu'), unit: s('nanoseconds') })],
    periodType: new ValueType({ type: s('cpu'), unit: s('nanoseconds') }),
    period: 10_000_000,
    durationNanos: 1_000_000_000,
    function: [
      new PprofFunction({ id: 1, name: s('github.com/mattermost/mattermost/server/v8/channels/api4.createPost'), filename: s('github.com/mattermost/mattermost/server/v8/channels/api4/post.go'), startLine: 30 }),
      new PprofFunction({ id: 2, name: s('github.com/mattermost/mattermost/server/v8/channels/app.(*App).CreatePost'), filename: s('github.com/mattermost/mattermost/server/v8/channels/app/post.go'), startLine: 200 }),
    ],
    location: [new Location({ id: 1, line: [new Line({ functionId: 2, line: 210 })] }), new Location({ id: 2, line: [new Line({ functionId: 1, line: 40 })] })],
    sample: [new Sample({ locationId: [1, 2], value: [3, 30_000_000] })],
    stringTable: strings,
  });
  return gzipSync(profile.encode());
}

/** The node side of cpu-profile.ts's scripts: captures answer with the profile's size and digest, reads with its chunks. */
function nodeShell(bytes: Buffer, captures: { at: number; script: string }[]): RemoteShell {
  return {
    async run(ids, script) {
      let stdout = '';
      if (script.includes('/debug/pprof/profile')) {
        captures.push({ at: Date.now(), script });
        stdout = `${bytes.length} ${createHash('sha256').update(bytes).digest('hex')}`;
      } else if (script.includes('base64 -w0')) {
        const [, from, length] = /tail -c \+(\d+) .* head -c (\d+)/.exec(script) ?? [];
        stdout = bytes.subarray(Number(from) - 1, Number(from) - 1 + Number(length)).toString('base64');
      }
      return new Map(ids.map((id): [string, RemoteResult] => [id, { instanceId: id, status: 'Success', exitCode: 0, stdout, stderr: '' }]));
    },
  };
}

function attempt(captures: { at: number; script: string }[], test: Partial<TestSpec>) {
  const d = {
    server: mattermost,
    profile: { shell: nodeShell(goProfile(), captures), nodes: [{ id: 'i-0a', name: 'app0' }, { id: 'i-0b', name: 'app1' }], metricsPort: 8167 },
    signal: new AbortController().signal,
    progress: { info: () => {}, problem: () => {} },
    snapshots: { take: async () => ({ warnings: [] }) },
    agents: { stop: async () => [] },
    maxEngineCpuPercent: 90,
  } as unknown as AwsRunDeps;
  const spec = { name: 'bounded', type: 'bounded', users: 10, rampUp: 0.3, duration: 1.5, ...test } as TestSpec;
  const run = { side: { role: 'candidate', label: 'v11.0.1' }, test: spec, repeat: 0 } as unknown as ScheduledRun;
  return new AwsAttempt(d, run, spec, 'b');
}

const window = { runStart: 0, runEnd: 2, stableStart: 0.3, stableEnd: 1.5 } as CollectWindow;

test("profile: on: every app node's CPU profile is fetched after the ramp-up, for the measured window, and stored in the run result", async () => {
  const captures: { at: number; script: string }[] = [];
  const a = attempt(captures, {});
  const started = Date.now();
  a.testStarted();
  const extras = await a.extras({ stable: { startSec: 0.3, endSec: 1.5 }, window, ran: true });
  assert.equal(captures.length, 2, 'one capture per app node');
  assert.ok(captures.every((c) => c.at - started >= 290), 'not before the ramp-up ended');
  assert.ok(captures.every((c) => /:8167}\/debug\/pprof\/profile\?seconds=1"/.test(c.script)), "the slot's metrics listener, for the window's whole seconds");
  assert.ok(captures[0]?.script.includes('candidate-v11.0.1-bounded-0-b-app0') && captures[1]?.script.includes('-b-app1'), 'a file per run, slot and node');
  const p = extras.profile;
  assert.ok(p, 'the run result carries the profile');
  assert.equal(p.tool, 'Go pprof');
  assert.equal(p.windowSec, 1.2);
  assert.equal(p.coveredSec, 1);
  assert.deepEqual(p.frames.map((f) => f.name.split('/').at(-1)), ['api4.createPost', 'app.(*App).CreatePost']);
  assert.deepEqual(p.stacks, [{ frames: [0, 1], samples: 6 }], 'root first; both nodes pooled');
});

test('a run that stops before its measured window fetches no profile, and an unbounded test is not profiled', async () => {
  const captures: { at: number; script: string }[] = [];
  const a = attempt(captures, { rampUp: 5, duration: 10 });
  a.testStarted();
  await a.stop();
  assert.deepEqual(await a.extras({ stable: { startSec: 5, endSec: 10 }, window, ran: true }), { links: [] });
  const u = attempt(captures, { type: 'unbounded' } as Partial<TestSpec>);
  u.testStarted();
  assert.deepEqual(await u.extras({ stable: { startSec: 0, endSec: 1 }, window, ran: true }), { links: [] });
  assert.equal(captures.length, 0);
});
