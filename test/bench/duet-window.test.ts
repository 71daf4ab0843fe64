import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SharedSimClock, SimSystem } from '../../src/coordinator/simulation/model.ts';
import { LOCAL } from '../../src/coordinator/simulation/profiles.ts';
import { CapacityHints } from '../../src/bench/capacity-hints.ts';
import { executeRun } from '../../src/bench/run-sequence.ts';
import {
  duetParts,
  type CollectWindow,
  type GeneratorRule,
  type RunAttempt,
  type RunCollected,
  type RunStage,
  type StartedLoad,
} from '../../src/bench/run-stage.ts';
import { windowsApart, WINDOW_ALIGNMENT_SEC } from '../../src/bench/disturbance.ts';
import type { ScheduledRun } from '../../src/bench/gate-plan.ts';
import type { RunResult } from '../../src/results/schema.ts';

/**
 * A stand-in duet bench on the shared run sequence: each side's target is a capacity model
 * on one virtual clock, the two sides share the machine (once one side's test ends, the
 * other can hold 15 % more users), and one side's first alert comes early, as a cold
 * Synapse's did on a fresh machine, so it settles minutes after the other.
 */

const RULE: GeneratorRule = { limitPercent: 80, words: { cpu: (m) => `engine ${m}%`, dropped: (n) => `dropped ${n}`, scriptErrors: (n) => `threw ${n}` } };
const COLLECTED: RunCollected = {
  series: {},
  api: [],
  store: [],
  totals: { requests: 1000, errors: 0, timeouts: 0 },
  problems: [],
  missingEssential: false,
  engineCpuPercentMax: 30,
};
const TEST = { ...LOCAL.scaleFree, name: 'unbounded', initialUsers: 15 };

class ModelAttempt implements RunAttempt {
  readonly generator = RULE;
  readonly test = TEST;
  window?: CollectWindow;
  partner?: ModelAttempt;
  constructor(
    readonly system: SimSystem,
    private readonly clock: SharedSimClock,
    private readonly earlyAlertSec: number,
  ) {}
  expandQuery(q: string): string {
    return q;
  }
  async start(): Promise<StartedLoad> {
    const health = {
      query: async () => {
        const v = await this.system.query();
        return v !== null && this.clock.now() < this.earlyAlertSec * 1000 ? v * 2 : v;
      },
    };
    return { users: this.system, health, stats: async () => ({ requests: 1000, errors: 0, droppedIterations: 0, scriptErrors: 0, engineCpuPercentMax: 30 }) };
  }
  alive(): boolean {
    return true;
  }
  testEnded(): void {
    // This side's users stop joining and leaving: its partner has more of the machine.
    if (this.partner) this.partner.system.params.ceiling *= 1.15;
  }
  async stop() {
    return { problems: [] };
  }
  async collect(w: CollectWindow): Promise<RunCollected> {
    this.window = w;
    return COLLECTED;
  }
  describe() {
    return { note: 'model duet', bench: { kind: 'local' as const, versions: {} } };
  }
}

function stage(attempt: ModelAttempt, clock: SharedSimClock): RunStage {
  return {
    system: 'synapse',
    progress: { status: () => {}, info: () => {}, problem: () => {}, begin: () => {} } as unknown as RunStage['progress'],
    signal: new AbortController().signal,
    clock,
    hints: new CapacityHints(),
    state: { lastLoadEndMs: 0 },
    scrapeIntervalSec: 0,
    rateWindowSec: 0,
    attempt: () => attempt,
  };
}

const run = (role: 'baseline' | 'candidate'): ScheduledRun => ({
  side: { role, label: '1.162.0', version: '1.162.0', overrides: [], sideOverrides: [] },
  test: TEST,
  repeat: 0,
});

async function duet(seed: number): Promise<[RunResult, RunResult, ModelAttempt, ModelAttempt]> {
  const clock = new SharedSimClock();
  const model = { ...LOCAL.model, noiseSd: 0.1 };
  const a = new ModelAttempt(new SimSystem(clock, { ...model, ceiling: 30 }, seed), clock, 40);
  const b = new ModelAttempt(new SimSystem(clock, { ...model, ceiling: 30 }, seed + 1), clock, 0);
  a.partner = b;
  b.partner = a;
  const [pa, pb] = duetParts(0.5);
  const [ra, rb] = await Promise.all([executeRun(stage(a, clock), run('baseline'), pa), executeRun(stage(b, clock), run('candidate'), pb)]);
  return [ra, rb, a, b];
}

test('a duet whose sides settle minutes apart is measured over one window: both collect the same wall-clock interval', async () => {
  const [ra, rb, a, b] = await duet(1);
  assert.equal(ra.status, 'completed', ra.problems.join('; '));
  assert.equal(rb.status, 'completed', rb.problems.join('; '));
  assert.equal(windowsApart([ra, rb]), undefined, `windows ${JSON.stringify([ra.stableWindow, rb.stableWindow])}`);
  const wa = a.window as CollectWindow;
  const wb = b.window as CollectWindow;
  // The sequence's clock for runStart is real time, the model's is virtual: both sides met at
  // the start barrier within milliseconds, so their collected windows agree to well under a second.
  assert.ok(Math.abs(wa.stableStart - wb.stableStart) < 1 && Math.abs(wa.stableEnd - wb.stableEnd) < 1, JSON.stringify([wa, wb]));
  assert.ok(Math.abs(rb.supportedUsers! / ra.supportedUsers! - 1) <= 0.03, `b/a ${rb.supportedUsers}/${ra.supportedUsers}`);
});

test(`two windows more than ${WINDOW_ALIGNMENT_SEC} s apart are named, with each slot's span`, () => {
  const base = { status: 'completed', testStartedAt: '2026-11-29T10:00:00.000Z' } as const;
  const a = { ...base, duet: { slot: 'a', cpuShare: 0.5 }, stableWindow: { startSec: 422, endSec: 672 } } as unknown as RunResult;
  const b = { ...base, duet: { slot: 'b', cpuShare: 0.5 }, stableWindow: { startSec: 322, endSec: 472 } } as unknown as RunResult;
  assert.match(windowsApart([a, b]) ?? '', /slot a 422-672 s, slot b 322-472 s of their tests: starts 100 s apart, ends 200 s apart; at most 5 s each/);
  // The same minutes read from starts 3 s apart: aligned.
  const c = { ...b, testStartedAt: '2026-11-29T10:00:03.000Z', stableWindow: { startSec: 419, endSec: 669 } } as unknown as RunResult;
  assert.equal(windowsApart([a, c]), undefined);
  // A run that did not complete is judged by its status, one without a test start cannot be placed.
  assert.equal(windowsApart([a, { ...b, status: 'crashed' } as RunResult]), undefined);
  assert.equal(windowsApart([a, { ...b, testStartedAt: undefined } as unknown as RunResult]), undefined);
});
