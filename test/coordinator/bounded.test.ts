import { test } from 'node:test';
import assert from 'node:assert/strict';
import { boundedTestSchema, type BoundedTest } from '../../src/config/schema.ts';
import { runBounded, type BoundedProgress } from '../../src/coordinator/bounded.ts';
import { gaussian, SharedSimClock } from '../../src/coordinator/simulation/model.ts';
import { JointWindow } from '../../src/coordinator/joint-window.ts';
import { seededRandom } from '../../src/util/random.ts';
import { InputError } from '../../src/util/errors.ts';
import { FakeClock, FakeUsers } from './fakes.ts';

function boundedTest(overrides: Record<string, unknown> = {}): BoundedTest {
  return boundedTestSchema.parse({ type: 'bounded', users: 40, rampUp: '30s', duration: '2m30s', ...overrides });
}

test('ramps linearly to the user count by the end of the ramp-up, then holds until the duration', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  const progress: BoundedProgress[] = [];
  const result = await runBounded({ test: boundedTest(), users, clock, onProgress: (p) => progress.push(p) });

  assert.equal(result.completed, true);
  assert.deepEqual(result.window, { startSec: 30, endSec: 150 });
  assert.equal(result.durationSec, 150);
  // Steps every 2 s: 40 users over 30 s is 8/3 users per second.
  assert.deepEqual(users.requested, [3, 6, 8, 11, 14, 16, 19, 22, 24, 27, 30, 32, 35, 38, 40]);
  const ramp = result.timeline.filter((p) => p.users < 40);
  for (let i = 1; i < ramp.length; i++) assert.ok(ramp[i]!.users > ramp[i - 1]!.users, 'strictly increasing during ramp-up');
  const full = result.timeline.find((p) => p.users === 40)!;
  assert.ok(full.tSec <= 30, `all users active by the window start (at ${full.tSec} s)`);
  // Holding: every sample from the window start on has every user.
  assert.ok(result.timeline.filter((p) => p.tSec >= 30).every((p) => p.users === 40));
  assert.equal(result.timeline.at(-1)!.tSec, 150);
  assert.ok(progress.some((p) => p.phase === 'steady') && progress.some((p) => p.phase === 'ramp-up'));
  assert.equal(progress.at(-1)!.timeLeftSec, 0);
  // Hold reports come every 5 s.
  const steady = result.timeline.filter((p) => p.tSec > 28).map((p) => p.tSec);
  assert.deepEqual(steady.slice(0, 4), [30, 35, 40, 45]);
});

test('a zero ramp-up starts every user at once', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  const result = await runBounded({ test: boundedTest({ rampUp: 0, duration: '20s', users: 12 }), users, clock });
  assert.deepEqual(users.requested, [12]);
  assert.deepEqual(result.window, { startSec: 0, endSec: 20 });
  assert.equal(result.durationSec, 20);
});

test('the ramp step is configurable and never overshoots the user count', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  await runBounded({ test: boundedTest({ users: 7, rampUp: '10s', duration: '15s' }), users, clock, rampStepSec: 4 });
  assert.deepEqual(users.requested, [3, 6, 7]);
});

test('an abort during the hold stops at once and marks the run incomplete', async () => {
  const clock = new FakeClock();
  const controller = new AbortController();
  const users = new FakeUsers();
  const result = await runBounded({
    test: boundedTest(),
    users,
    clock,
    signal: controller.signal,
    onProgress: (p) => {
      if (p.tSec >= 60) controller.abort('the target crashed; see synapse.log');
    },
  });
  assert.equal(result.completed, false);
  assert.match(result.reason, /stopped after 60 s of 150 s: the target crashed/);
  assert.equal(clock.elapsedSec(), 60);
});

test('a ramp-up as long as the duration is refused: nothing would be measured', async () => {
  const clock = new FakeClock();
  const users = new FakeUsers();
  await assert.rejects(runBounded({ test: boundedTest({ rampUp: '2m', duration: '2m' }), users, clock }), InputError);
  assert.equal(users.requested.length, 0);
});

test('earlyStop: the hold ends once the watched metric is known within its half-width, after minHold', async () => {
  const run = async (noise: number) => {
    const clock = new FakeClock();
    const users = new FakeUsers();
    const random = seededRandom(7);
    const spec = boundedTestSchema.parse({
      type: 'bounded',
      users: 100,
      rampUp: '1m',
      duration: '30m',
      earlyStop: { query: 'api_avg', halfWidthPct: 2, minHold: '5m' },
    });
    return runBounded({ test: spec, users, clock, sample: async () => 0.05 * Math.exp(noise * gaussian(random)) });
  };
  const steady = await run(0.05);
  assert.ok(steady.completed);
  assert.ok(steady.earlyStop, steady.reason);
  assert.ok(steady.earlyStop.atSec >= 60 + 300, `not before minHold: ${steady.earlyStop.atSec}`);
  assert.ok(steady.earlyStop.atSec < 30 * 60, 'stopped before duration');
  assert.deepEqual(steady.window, { startSec: 60, endSec: steady.earlyStop.atSec }, 'the measured window ends where the run did');
  assert.ok(steady.earlyStop.halfWidthPct !== undefined && steady.earlyStop.halfWidthPct <= 2, `half-width ${steady.earlyStop.halfWidthPct}`);
  const noisy = await run(1.5);
  assert.equal(noisy.earlyStop, undefined, 'a metric too noisy to pin down holds for the whole duration');
  assert.equal(noisy.window.endSec, 30 * 60);
});

test('earlyStop in a duet: neither side stops until both are sure, and both stop at the same moment', async () => {
  const clock = new SharedSimClock();
  const window = new JointWindow(2);
  const spec = boundedTestSchema.parse({
    type: 'bounded',
    users: 100,
    rampUp: '1m',
    duration: '30m',
    earlyStop: { query: 'api_avg', halfWidthPct: 2, minHold: '5m' },
  });
  const side = (noise: number, seed: number, slot: string) => {
    const random = seededRandom(seed);
    return runBounded({ test: spec, users: new FakeUsers(), clock, joint: window.party(slot), sample: async () => 0.05 * Math.exp(noise * gaussian(random)) });
  };
  // Slot a's metric is quiet (sure after minHold); slot b's is noisier and needs longer.
  const [a, b] = await Promise.all([side(0.05, 7, 'slot a'), side(0.2, 8, 'slot b')]);
  assert.ok(a.earlyStop && b.earlyStop, `${a.reason}; ${b.reason}`);
  assert.deepEqual(a.window, b.window, 'one window for both sides');
  assert.ok(a.earlyStop.atSec > 60 + 5 * 60 + 60, `slot a waited for slot b: stopped at ${a.earlyStop.atSec} s`);
  // Alone, slot a stops soon after minHold.
  const alone = await runBounded({
    test: spec,
    users: new FakeUsers(),
    clock: new FakeClock(),
    sample: (
      (random) => async () =>
        0.05 * Math.exp(0.05 * gaussian(random))
    )(seededRandom(7)),
  });
  assert.ok(alone.earlyStop && alone.earlyStop.atSec < a.earlyStop.atSec, `alone ${alone.earlyStop?.atSec} s, in the duet ${a.earlyStop.atSec} s`);
});
