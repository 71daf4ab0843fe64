import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AwsGateBench } from '../../src/bench/aws/aws-gate-bench.ts';
import { AwsAttempt, type AwsRunDeps } from '../../src/bench/aws/run-attempt.ts';
import type { ScheduledRun } from '../../src/bench/gate-plan.ts';
import { Progress } from '../../src/bench/progress.ts';
import type { CollectWindow } from '../../src/bench/run-stage.ts';
import type { Profiler, ProfileTarget } from '../../src/chat-servers/chat-server.ts';
import { chatServerOf } from '../../src/chat-servers/registry.ts';
import type { TestSpec } from '../../src/config/schema.ts';
import type { StoredProfile } from '../../src/results/profile.ts';
import { parseRunOptions } from '../../src/run/options.ts';
import { allocatePorts } from '../../src/util/ports.ts';

/**
 * The AWS bench's side of `profile: on`: it takes whatever profile capability the registry
 * chose for the server, attaches it to each run's slot at the test's start with the bench's
 * Pyroscope and Alloy interval, and asks for the measured window in seconds since the epoch.
 * The capability's own reading of Pyroscope is test/bench/aws-cpu-profile.test.ts's; the
 * whole path on the loopback bench is aws-run-known-cause.test.ts's.
 */

/** A slot's profile as Mattermost's capability returns it. */
const PROFILE: StoredProfile = {
  tool: 'Go pprof via Pyroscope (4 profiles of 14 s, 2 node(s))',
  sampleSec: 0.01,
  windowSec: 60,
  coveredSec: 56,
  frames: [
    {
      name: 'github.com/mattermost/mattermost/server/v8/channels/api4.createPost',
      file: 'github.com/mattermost/mattermost/server/v8/channels/api4/post.go',
      line: 30,
    },
    {
      name: 'github.com/mattermost/mattermost/server/v8/channels/app.(*App).CreatePost',
      file: 'github.com/mattermost/mattermost/server/v8/channels/app/post.go',
      line: 200,
    },
  ],
  stacks: [{ frames: [0, 1], samples: 6 }],
};

const CONTINUOUS = { url: 'http://203.0.113.10:4040', scrapeIntervalSec: 15 };

/** A profiler that records what the bench asks of it and answers `answer`. */
function recordingProfiler(answer: (w: { startSec: number; endSec: number }) => Promise<StoredProfile | string>) {
  const log = { attached: [] as ProfileTarget[], asked: [] as { startSec: number; endSec: number }[], stopped: 0 };
  const profiler: Profiler = {
    attach(target) {
      log.attached.push(target);
      return { stop: async () => void log.stopped++, profile: (w) => (log.asked.push(w), answer(w)) };
    },
  };
  return { profiler, log };
}

function attempt(
  profiler: Profiler | undefined,
  test: Partial<TestSpec>,
  notes: string[] = [],
  o: { continuous?: typeof CONTINUOUS; onAgentsStop?: () => void } = {},
) {
  const d = {
    ...(profiler ? { profile: { profiler, continuous: o.continuous ?? CONTINUOUS, dir: '/var/tmp/gate/logs/profiles' } } : {}),
    signal: new AbortController().signal,
    progress: { info: () => {}, problem: () => {} },
    snapshots: { take: async () => ({ warnings: [] }) },
    agents: { stop: async () => (o.onAgentsStop?.(), []) },
    report: { warning: (note: string) => notes.push(note) },
    maxEngineCpuPercent: 90,
  } as unknown as AwsRunDeps;
  const spec = { name: 'bounded', type: 'bounded', users: 10, rampUp: 30, duration: 90, ...test } as TestSpec;
  const run = { side: { role: 'candidate', label: 'v11.0.1' }, test: spec, repeat: 0 } as unknown as ScheduledRun;
  return new AwsAttempt(d, run, spec, 'b');
}

/** The run sequence's order: the test starts, the run stops, then its extras are read. */
async function ranRun(a: AwsAttempt, o: { stable: { startSec: number; endSec: number }; window: CollectWindow }) {
  a.testStarted();
  await a.stop();
  return a.extras({ ...o, ran: true });
}

/** A run that started at 1 700 000 000 s and measured from its 30th to its 90th second. */
const window: CollectWindow = { runStart: 1_700_000_000, runEnd: 1_700_000_095, stableStart: 1_700_000_030, stableEnd: 1_700_000_090 };
const stable = { startSec: 30, endSec: 90 };

test("profile: on: the profiler attaches to the slot at its test's start with the bench's Pyroscope, and the measured window's profile, in seconds since the epoch, is stored", async () => {
  const { profiler, log } = recordingProfiler(async () => PROFILE);
  const a = attempt(profiler, {});
  a.testStarted();
  assert.deepEqual(log.attached, [{ slot: 'b', continuous: CONTINUOUS, dir: '/var/tmp/gate/logs/profiles/candidate-v11.0.1-bounded-0-b' }]);
  assert.equal(log.stopped, 0);
  await a.stop();
  assert.equal(log.stopped, 1, 'stopped with the run, before its profile is read');
  assert.deepEqual(await a.extras({ stable, window, ran: true }), { links: [], profile: PROFILE });
  assert.deepEqual(log.asked, [{ startSec: 1_700_000_030, endSec: 1_700_000_090 }]);
});

test('an unbounded test is profiled over the window it found; a run that never ran or measured nothing is not', async () => {
  const { profiler, log } = recordingProfiler(async () => PROFILE);
  assert.equal((await ranRun(attempt(profiler, { type: 'unbounded' } as Partial<TestSpec>), { stable, window })).profile, PROFILE);
  const never = attempt(profiler, {});
  await never.stop();
  assert.deepEqual(await never.extras({ stable, window, ran: false }), { links: [] });
  const empty = { ...window, stableEnd: window.stableStart };
  assert.deepEqual(await ranRun(attempt(profiler, {}), { stable: { startSec: 30, endSec: 30 }, window: empty }), { links: [] });
  assert.equal(log.asked.length, 1);
  assert.equal(log.attached.length, 2, 'a run whose test never started attaches nothing');
});

test("Mattermost's capability, its Pyroscope unreachable: the run is judged without a profile, and the report says why", async () => {
  const profiler = await chatServerOf('mattermost').profile!.prepare({ cacheDir: '/nonexistent', onStep: () => {} });
  const [port] = (await allocatePorts(1)) as [number];
  const notes: string[] = [];
  const a = attempt(profiler, {}, notes, { continuous: { url: `http://127.0.0.1:${port}`, scrapeIntervalSec: 15 } });
  assert.deepEqual(await ranRun(a, { stable, window }), { links: [] });
  assert.deepEqual(notes, [
    `No CPU profile of candidate-v11.0.1-bounded-0 (slot b): Pyroscope SelectSeries failed: cannot reach Pyroscope at http://127.0.0.1:${port}: fetch failed`,
  ]);

  // A profiler that throws instead of giving its reason is read the same way.
  const thrown: string[] = [];
  const failing = recordingProfiler(async () => {
    throw new Error('no route to host');
  });
  assert.deepEqual(await ranRun(attempt(failing.profiler, {}, thrown), { stable, window }), { links: [] });
  assert.deepEqual(thrown, ['No CPU profile of candidate-v11.0.1-bounded-0 (slot b): no route to host']);
  assert.deepEqual(await ranRun(attempt(undefined, {}), { stable, window }), { links: [] }, 'profile: off reads nothing');
});

test('a profiler that fails to stop leaves the load stopped and says so', async () => {
  let agentsStopped = 0;
  const profiler: Profiler = { attach: () => ({ stop: async () => assert.fail('py-spy did not exit'), profile: async () => PROFILE }) };
  const a = attempt(profiler, {}, [], { onAgentsStop: () => agentsStopped++ });
  a.testStarted();
  const stopped = await a.stop();
  assert.equal(agentsStopped, 1);
  assert.deepEqual(stopped.problems, ['stopping the profiler: py-spy did not exit']);
});

test("Mattermost's capability waits for the window's last profile to be written, and the gate's stop ends the wait", async () => {
  const gate = new AbortController();
  const profiler = await chatServerOf('mattermost').profile!.prepare({ cacheDir: '/nonexistent', onStep: () => {}, signal: gate.signal });
  const slot = profiler.attach({ slot: 'a', continuous: CONTINUOUS, dir: '/nonexistent' });
  const nowSec = Date.now() / 1000;
  const started = Date.now();
  // A window ending now: its last 14 s profile may start 7 s before the end, and Alloy needs a few seconds more to write it.
  const answer = slot.profile({ startSec: nowSec - 60, endSec: nowSec });
  setTimeout(() => gate.abort(), 200);
  assert.match(String(await answer), /aborted/);
  const waited = Date.now() - started;
  assert.ok(waited >= 150 && waited < 5000, `waited ${waited} ms, until the gate stopped`);
  assert.throws(() => profiler.attach({ dir: '/nonexistent' }), /read from the bench's continuous profiler \(Pyroscope\): the bench gave none/);
});

test('profile: on with a server that has no profile capability, or one that refuses this bench, is refused before the bench is touched', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-aws-profile-'));
  try {
    const { terraformOutputs } = await import('../aws/fixtures.ts');
    const { parseTerraformOutputs } = await import('../../src/aws/terraform-outputs.ts');
    const bench = parseTerraformOutputs(terraformOutputs(), 'outputs.json');
    await writeFile(join(dir, 'bench.json'), JSON.stringify(bench));
    await writeFile(join(dir, 'users.txt'), 'user1 pass-1\n');
    const o = await parseRunOptions([
      '--config',
      'examples/aws-mattermost-sequential.yml',
      '--baseline',
      'v10.12.0',
      '--candidate',
      'v11.0.1-rc2',
      '--out',
      join(dir, 'out'),
      '--bench-file',
      join(dir, 'bench.json'),
      '--users-file',
      join(dir, 'users.txt'),
    ]);
    assert.equal(o.config.profile, 'on');
    const { profile: _, ...unprofiled } = o.server;
    const progress = new Progress(() => {}, { githubActions: false, intervalMs: 60_000 });
    const unused = {
      async run(): Promise<never> {
        throw new Error('nothing may run');
      },
    };
    assert.throws(
      () => new AwsGateBench({ ...o, server: unprofiled }, progress, join(dir, 'logs'), bench, { shell: unused, aws: unused }),
      /^InputError: profile: on: loadgate cannot profile Mattermost on this bench; set profile: off$/,
    );
    const admin = { email: 'admin@example.com', password: 'admin-password' };
    assert.doesNotThrow(() => new AwsGateBench(o, progress, join(dir, 'logs'), bench, { shell: unused, aws: unused, admin }), 'Mattermost has one');
    // A capability that refuses this machine stops the set-up before any node is asked anything.
    const refusing = {
      ...o.server,
      profile: { refusal: async () => 'profile: on needs X here: do Y, or set profile: off', prepare: async () => assert.fail('not prepared') },
    };
    const refused = new AwsGateBench({ ...o, server: refusing }, progress, join(dir, 'logs'), bench, { shell: unused, aws: unused, admin });
    await assert.rejects(refused.setUp(new AbortController().signal), { name: 'InputError', message: 'profile: on needs X here: do Y, or set profile: off' });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
