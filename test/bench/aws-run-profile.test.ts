import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AwsAttempt, type AwsRunDeps } from '../../src/bench/aws/run-attempt.ts';
import type { SlotProfileSource } from '../../src/bench/aws/cpu-profile.ts';
import type { ScheduledRun } from '../../src/bench/gate-plan.ts';
import type { CollectWindow } from '../../src/bench/run-stage.ts';
import type { TestSpec } from '../../src/config/schema.ts';
import type { StoredProfile } from '../../src/results/profile.ts';

/** A slot's profile as readMattermostCpuProfile returns it. */
const PROFILE: StoredProfile = {
  tool: 'Go pprof via Pyroscope (4 profiles of 14 s, 2 node(s))',
  sampleSec: 0.01,
  windowSec: 60,
  coveredSec: 56,
  frames: [
    { name: 'github.com/mattermost/mattermost/server/v8/channels/api4.createPost', file: 'github.com/mattermost/mattermost/server/v8/channels/api4/post.go', line: 30 },
    { name: 'github.com/mattermost/mattermost/server/v8/channels/app.(*App).CreatePost', file: 'github.com/mattermost/mattermost/server/v8/channels/app/post.go', line: 200 },
  ],
  stacks: [{ frames: [0, 1], samples: 6 }],
};

function attempt(source: SlotProfileSource | undefined, test: Partial<TestSpec>, notes: string[] = []) {
  const d = {
    ...(source ? { profile: source } : {}),
    signal: new AbortController().signal,
    progress: { info: () => {}, problem: () => {} },
    snapshots: { take: async () => ({ warnings: [] }) },
    agents: { stop: async () => [] },
    report: { warning: (note: string) => notes.push(note) },
    maxEngineCpuPercent: 90,
  } as unknown as AwsRunDeps;
  const spec = { name: 'bounded', type: 'bounded', users: 10, rampUp: 30, duration: 90, ...test } as TestSpec;
  const run = { side: { role: 'candidate', label: 'v11.0.1' }, test: spec, repeat: 0 } as unknown as ScheduledRun;
  return new AwsAttempt(d, run, spec, 'b');
}

/** A run that started at 1 700 000 000 s and measured from its 30th to its 90th second. */
const window: CollectWindow = { runStart: 1_700_000_000, runEnd: 1_700_000_095, stableStart: 1_700_000_030, stableEnd: 1_700_000_090 };
const stable = { startSec: 30, endSec: 90 };

test("profile: on: the slot's profile is read for the run's measured window, in seconds since the epoch, and stored in the run result", async () => {
  const asked: { startSec: number; endSec: number }[] = [];
  const a = attempt(async (w) => (asked.push(w), PROFILE), {});
  const extras = await a.extras({ stable, window, ran: true });
  assert.deepEqual(asked, [{ startSec: 1_700_000_030, endSec: 1_700_000_090 }]);
  assert.deepEqual(extras, { links: [], profile: PROFILE });
});

test('an unbounded test is profiled over the window it found; a run that never ran or measured nothing is not', async () => {
  const asked: { startSec: number; endSec: number }[] = [];
  const source: SlotProfileSource = async (w) => (asked.push(w), PROFILE);
  const unbounded = attempt(source, { type: 'unbounded' } as Partial<TestSpec>);
  assert.equal((await unbounded.extras({ stable, window, ran: true })).profile, PROFILE);
  assert.deepEqual(await attempt(source, {}).extras({ stable, window, ran: false }), { links: [] });
  const empty = { ...window, stableEnd: window.stableStart };
  assert.deepEqual(await attempt(source, {}).extras({ stable: { startSec: 30, endSec: 30 }, window: empty, ran: true }), { links: [] });
  assert.equal(asked.length, 1);
});

test('a profile that cannot be read leaves the run judged without it, and the report says why', async () => {
  const notes: string[] = [];
  const a = attempt(async () => {
    throw new Error('Pyroscope (http://203.0.113.10:4040) holds no process_cpu:cpu:nanoseconds:cpu:nanoseconds profile of {service_name="mattermost-b"}');
  }, {}, notes);
  assert.deepEqual(await a.extras({ stable, window, ran: true }), { links: [] });
  assert.deepEqual(notes, ['No CPU profile of candidate-v11.0.1-bounded-0 (slot b): Pyroscope (http://203.0.113.10:4040) holds no process_cpu:cpu:nanoseconds:cpu:nanoseconds profile of {service_name="mattermost-b"}']);
  assert.deepEqual(await attempt(undefined, {}).extras({ stable, window, ran: true }), { links: [] }, 'profile: off reads nothing');
});
