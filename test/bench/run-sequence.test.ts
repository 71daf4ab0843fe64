import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SimClock } from '../../src/coordinator/simulation/model.ts';
import { realClock } from '../../src/coordinator/index.ts';
import { CapacityHints } from '../../src/bench/capacity-hints.ts';
import { parseRunOptions, schedule } from '../../src/run/options.ts';
import type { ScheduledRun } from '../../src/bench/gate-plan.ts';
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

const options = await parseRunOptions([
  '--config',
  'examples/local-synapse.yml',
  '--baseline',
  '1.162.0',
  '--candidate',
  '1.163.2',
  '--out',
  'reports/x',
  '--tests',
  'bounded',
]);
const [first, second] = schedule(options) as [ScheduledRun, ScheduledRun];

const RULE: GeneratorRule = {
  limitPercent: 80,
  words: { cpu: (max) => `engine at ${max}%`, dropped: (n) => `dropped ${n}`, scriptErrors: (n) => `threw ${n}` },
};

const COLLECTED: RunCollected = {
  series: {},
  api: [],
  store: [],
  totals: { requests: 1000, errors: 2, timeouts: 1 },
  problems: [],
  missingEssential: false,
  engineCpuPercentMax: 40,
};

/** A bench attempt that records what the sequence asked of it. */
class FakeAttempt implements RunAttempt {
  readonly generator = RULE;
  readonly calls: string[] = [];
  windows: CollectWindow[] = [];
  abort?: (reason: Error) => void;
  users = 0;
  constructor(
    readonly test: ScheduledRun['test'],
    private readonly o: { failStart?: string; onUsers?: (attempt: FakeAttempt) => void; alive?: boolean; dropped?: number; stopCrash?: string } = {},
  ) {}
  expandQuery(q: string): string {
    return q;
  }
  async start(abort: (reason: Error) => void): Promise<StartedLoad> {
    this.calls.push('start');
    this.abort = abort;
    if (this.o.failStart) throw new Error(this.o.failStart);
    return {
      users: {
        setUsers: async (n) => {
          this.users = n;
          this.o.onUsers?.(this);
        },
        activeUsers: async () => this.users,
      },
      health: { query: async () => 0 },
      stats: async () => ({ requests: 10, errors: 0, droppedIterations: this.o.dropped ?? 0, scriptErrors: 0, engineCpuPercentMax: 55 }),
    };
  }
  alive(): boolean {
    return this.o.alive ?? true;
  }
  async stop(): Promise<{ problems: string[]; crash?: string }> {
    this.calls.push('stop');
    return { problems: [], ...(this.o.stopCrash ? { crash: this.o.stopCrash } : {}) };
  }
  async collect(w: CollectWindow): Promise<RunCollected> {
    this.windows.push(w);
    return COLLECTED;
  }
  describe() {
    return { note: 'fake run', bench: { kind: 'local' as const, versions: {} } };
  }
}

function stage(attempt: FakeAttempt, signal = new AbortController().signal, clock: RunStage['clock'] = new SimClock()): RunStage {
  return {
    system: 'synapse',
    progress: { status: () => {}, info: () => {}, problem: () => {}, begin: () => {} } as unknown as RunStage['progress'],
    signal,
    clock,
    hints: new CapacityHints(),
    state: { lastLoadEndMs: 0 },
    scrapeIntervalSec: 0,
    rateWindowSec: 0,
    attempt: () => attempt,
  };
}

test('a run that completes is collected over its measured window, with the totals and generator load the bench measured', async () => {
  // Real time: the measured window is clamped to the run's wall-clock length.
  const short = { ...first, test: { ...first.test, rampUp: 1, duration: 2 } } as ScheduledRun;
  const attempt = new FakeAttempt(short.test);
  const result = await executeRun(stage(attempt, undefined, realClock), short);
  assert.equal(result.status, 'completed', result.problems.join('; '));
  assert.deepEqual(attempt.calls, ['start', 'stop']);
  assert.equal(attempt.windows.length, 1);
  const w = attempt.windows[0]!;
  assert.ok(w.stableStart >= w.runStart && w.stableEnd <= w.runEnd && w.stableEnd > w.stableStart);
  assert.deepEqual(result.totals, COLLECTED.totals);
  // The higher of the engine's own and the collected CPU.
  assert.equal(result.generator?.cpuPercentMax, 55);
  assert.equal(result.provenance.note, 'fake run');
});

test("dropped iterations make a run invalid, in the bench's words", async () => {
  const result = await executeRun(stage(new FakeAttempt(first.test, { dropped: 3 })), first);
  assert.equal(result.status, 'invalid');
  assert.ok(result.problems.includes('dropped 3'), result.problems.join('; '));
  assert.equal(result.generator?.saturated, true);
});

test('a gate stopped from outside aborts the run; a dead component or a crash seen while stopping makes it crashed', async () => {
  const gate = new AbortController();
  const aborted = await executeRun(stage(new FakeAttempt(first.test, { onUsers: () => gate.abort(new Error('SIGINT')) }), gate.signal), first);
  assert.equal(aborted.status, 'aborted');
  assert.ok(
    aborted.problems.some((p) => /the run was stopped: SIGINT/.test(p)),
    aborted.problems.join('; '),
  );

  const gate2 = new AbortController();
  const deadTarget = await executeRun(
    stage(new FakeAttempt(first.test, { alive: false, onUsers: () => gate2.abort(new Error('bench died')) }), gate2.signal),
    first,
  );
  assert.equal(deadTarget.status, 'crashed');

  const component = await executeRun(stage(new FakeAttempt(first.test, { onUsers: (a) => a.abort?.(new Error('synapse exited with code 1')) })), first);
  assert.equal(component.status, 'crashed');
  assert.ok(
    component.problems.some((p) => /a component stopped during the run: synapse exited with code 1/.test(p)),
    component.problems.join('; '),
  );

  const late = await executeRun(stage(new FakeAttempt(first.test, { stopCrash: 'synapse exited during the last scrape' })), first);
  assert.equal(late.status, 'crashed');
  assert.ok(late.problems.includes('synapse exited during the last scrape'));
});

test('a duet side that fails to start leaves both meeting points: its partner runs alone, and each result carries its slot', async () => {
  const a = new FakeAttempt(first.test);
  const b = new FakeAttempt(second.test, { failStart: 'postgres would not start' });
  const [partA, partB] = duetParts(0.5);
  const [ra, rb] = await Promise.all([executeRun(stage(a), first, partA), executeRun(stage(b), second, partB)]);
  assert.equal(ra.status, 'completed', ra.problems.join('; '));
  assert.deepEqual(ra.duet, { slot: 'a', cpuShare: 0.5 });
  assert.equal(rb.status, 'crashed');
  assert.ok(rb.problems.includes('postgres would not start'));
  assert.deepEqual(b.calls, ['start', 'stop'], 'what a failed start began is still stopped');
  assert.equal(b.windows.length, 0, 'nothing ran, so nothing is collected');
});

test('the profile a bench recorded beside the test is kept in the result, cut to the measured window it was given', async () => {
  const short = { ...first, test: { ...first.test, rampUp: 1, duration: 2 } } as ScheduledRun;
  const windows: CollectWindow[] = [];
  const attempt = Object.assign(new FakeAttempt(short.test), {
    async extras(o: { window: CollectWindow }) {
      windows.push(o.window);
      const windowSec = o.window.stableEnd - o.window.stableStart;
      return {
        profile: {
          tool: 'py-spy 0.4.3',
          sampleSec: 0.02,
          windowSec,
          coveredSec: windowSec,
          frames: [{ name: 'main', file: 'a.py', line: 1 }],
          stacks: [{ frames: [0], samples: 5 }],
        },
      };
    },
  });
  const result = await executeRun(stage(attempt, undefined, realClock), short);
  assert.equal(result.status, 'completed', result.problems.join('; '));
  assert.equal(windows.length, 1);
  assert.deepEqual(result.profile?.stacks, [{ frames: [0], samples: 5 }]);
  assert.equal(result.profile?.windowSec, windows[0]!.stableEnd - windows[0]!.stableStart);
});
