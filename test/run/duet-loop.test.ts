import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runGateOn, runSteps } from '../../src/run/gate.ts';
import { pairRuns, parseRunOptions, plannedSeconds } from '../../src/run/options.ts';
import type { ScheduledRun } from '../../src/bench/gate-plan.ts';
import { verdictFileSchema } from '../../src/results/verdict-schema.ts';
import { noiseModelFileSchema } from '../../src/noise/schema.ts';
import { loadNoiseModel, sdLogFor } from '../../src/noise/model.ts';
import { emptyModel } from '../../src/noise/pool.ts';
import { loadGateConfig } from '../../src/config/load.ts';
import { runsMode, unpairedDuets } from '../../src/compare/mode.ts';
import { InputError } from '../../src/util/errors.ts';
import { Barrier } from '../../src/util/barrier.ts';
import type { RunResult } from '../../src/results/schema.ts';
import { unbounded } from '../support/runs.ts';
import { QuietBench } from '../support/fake-bench.ts';

const DUET_CONFIG = 'examples/local-synapse-duet.yml';

/** A bench that runs duets: each run records the slot it was given, as the local bench does. */
class DuetBench extends QuietBench {
  slots: string[] = [];
  clock = 0;
  constructor(private readonly users: (role: 'baseline' | 'candidate', repeat: number) => number) {
    super();
  }
  async execute(): Promise<RunResult> {
    throw new Error('a duet gate runs no run alone');
  }
  async executeDuet(runs: readonly [ScheduledRun, ScheduledRun]): Promise<[RunResult, RunResult]> {
    this.clock += plannedSeconds(runs[0]) * 1000;
    this.slots.push(`${runs[0].repeat}:a=${runs[0].side.role},b=${runs[1].side.role}`);
    const one = (run: ScheduledRun, slot: 'a' | 'b'): RunResult => ({
      ...unbounded(run.side.label, this.users(run.side.role, run.repeat), run.repeat),
      duet: { slot, cpuShare: 0.5 },
    });
    return [one(runs[0], 'a'), one(runs[1], 'b')];
  }
}

async function withOut<T>(work: (out: string) => Promise<T>): Promise<T> {
  const out = await mkdtemp(join(tmpdir(), 'lg-duet-'));
  try {
    return await work(out);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

test('a duet step holds both sides of one test, the side that would have run first in slot a, so the slots swap in Thue-Morse order', async () => {
  const o = await parseRunOptions(['--config', DUET_CONFIG, '--baseline', '1.162.0', '--candidate', '1.163.2', '--out', '/tmp/x']);
  const slotA = [0, 1, 2, 3].map((repeat) =>
    runSteps(pairRuns(o, repeat), true).map((step) => `${step[0].test.name}:${step[0].side.role}/${step[1]?.side.role}`),
  );
  assert.deepEqual(slotA, [
    ['bounded:baseline/candidate', 'unbounded:baseline/candidate'],
    ['bounded:candidate/baseline', 'unbounded:candidate/baseline'],
    ['bounded:candidate/baseline', 'unbounded:candidate/baseline'],
    ['bounded:baseline/candidate', 'unbounded:baseline/candidate'],
  ]);
  assert.deepEqual(
    runSteps(pairRuns(o, 0), false).map((s) => s.length),
    [1, 1, 1, 1],
  );
});

test('a duet gate runs each pair as one duet per test, in swapping slots, and its verdict says it judged duets', async () => {
  await withOut(async (out) => {
    const bench = new DuetBench(() => 60);
    const o = await parseRunOptions([
      '--config',
      DUET_CONFIG,
      '--baseline',
      '1.162.0',
      '--candidate',
      '1.163.2',
      '--out',
      out,
      '--tests',
      'unbounded',
      '--repeats',
      '2',
      '--max-repeats',
      '3',
    ]);
    await runGateOn(bench, o, { out: () => {}, err: () => {} }, undefined, () => bench.clock);
    assert.deepEqual(bench.slots.slice(0, 2), ['0:a=baseline,b=candidate', '1:a=candidate,b=baseline']);
    const verdict = verdictFileSchema.parse(JSON.parse(await readFile(join(out, 'verdict.json'), 'utf8')));
    assert.equal(verdict.mode, 'duet');
  });
});

test('mode: duet on a bench that cannot run a duet is bad input naming the field', async () => {
  await withOut(async (out) => {
    const alone = new (class extends QuietBench {
      async execute(): Promise<RunResult> {
        throw new Error('not reached: the gate refuses before any run');
      }
    })();
    const o = await parseRunOptions(['--config', DUET_CONFIG, '--baseline', '1.162.0', '--candidate', '1.163.2', '--out', out, '--tests', 'unbounded']);
    await assert.rejects(
      runGateOn(alone, o, { out: () => {}, err: () => {} }),
      (e: unknown) => e instanceof InputError && /^mode: duet: .*set mode: sequential/.test(e.message),
    );
  });
});

test('a duet gate whose bench cannot be set up is inconclusive, saying why, not bad input: its runs never ran in any mode', async () => {
  await withOut(async (out) => {
    const bench = new (class extends DuetBench {
      override async setUp(): Promise<void> {
        throw new Error('postgres: initdb failed');
      }
    })(() => 60);
    const o = await parseRunOptions(['--config', DUET_CONFIG, '--baseline', '1.162.0', '--candidate', '1.163.2', '--out', out, '--tests', 'unbounded']);
    const code = await runGateOn(bench, o, { out: () => {}, err: () => {} }, undefined, () => bench.clock);
    assert.equal(code, 2);
    const verdict = verdictFileSchema.parse(JSON.parse(await readFile(join(out, 'verdict.json'), 'utf8')));
    assert.equal(verdict.verdict, 'inconclusive');
    assert.equal(verdict.mode, 'duet');
    assert.match(verdict.problems.join('\n'), /postgres: initdb failed/);
  });
});

test("an A/A duet calibration measures the sd of the duets' log ratio (n − 1 df), and writes a duet-mode model", async () => {
  await withOut(async (out) => {
    // Per duet (baseline, candidate): ratios 1.02, 0.99, 1.01, 0.97.
    const values: Record<string, number[]> = { baseline: [100, 100, 100, 100], candidate: [102, 99, 101, 97] };
    const bench = new DuetBench((role, repeat) => values[role]![repeat]!);
    const o = await parseRunOptions([
      '--config',
      DUET_CONFIG,
      '--baseline',
      '1.162.0',
      '--candidate',
      '1.162.0',
      '--out',
      out,
      '--tests',
      'unbounded',
      '--repeats',
      '4',
      '--max-repeats',
      '4',
    ]);
    await runGateOn(bench, { ...o, calibrate: true }, { out: () => {}, err: () => {} }, undefined, () => bench.clock);
    const model = noiseModelFileSchema.parse(JSON.parse(await readFile(join(out, 'noise-model.json'), 'utf8')));
    assert.equal(model.mode, 'duet');
    const users = model.entries.find((e) => e.metric === 'supportedUsers')!;
    assert.equal(users.df, 3);
    assert.equal(users.runs, 8);
    assert.equal(users.speed, undefined);
    // Python: statistics.stdev(math.log(x) for x in (1.02, 0.99, 1.01, 0.97)) = 0.022293
    assert.ok(Math.abs(users.sdLog - 0.02229) < 1e-5, String(users.sdLog));
    assert.match(users.source, /log ratio of 4 duets \(3 df\)/);
  });
});

test('a noise model measured in one mode is refused in the other, naming both modes and the fix', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lg-duet-model-'));
  try {
    const duetConfig = await loadGateConfig(DUET_CONFIG);
    const sequential = { ...emptyModel(duetConfig) };
    delete (sequential as { mode?: unknown }).mode;
    await writeFile(join(dir, 'seq.json'), JSON.stringify(sequential));
    await assert.rejects(
      loadNoiseModel(join(dir, 'seq.json'), duetConfig),
      (e: unknown) => e instanceof InputError && /measured in sequential mode, the config runs in duet/.test(e.message),
    );
    const seqConfig = { ...duetConfig, mode: 'sequential' as const };
    await writeFile(join(dir, 'duet.json'), JSON.stringify(emptyModel(duetConfig)));
    await assert.rejects(
      loadNoiseModel(join(dir, 'duet.json'), seqConfig),
      (e: unknown) => e instanceof InputError && /measured in duet mode, the config runs in sequential/.test(e.message),
    );
    // In its own mode it loads, and a duet's sd is the pair difference's: per side 1/√2 of it.
    const model = await loadNoiseModel(join(dir, 'duet.json'), duetConfig);
    const entry = model.file!.entries.find((e) => e.metric === 'supportedUsers')!;
    assert.ok(Math.abs(sdLogFor(model, duetConfig.tolerances, entry.test, 'supportedUsers') - entry.sdLog / Math.SQRT2) < 1e-12);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("compare refuses a mix of duet and sequential runs, and runs of the other mode than the config's", () => {
  const seq = [unbounded('1.162.0', 60, 0)];
  const duet = (version: string, slot: 'a' | 'b', repeat = 0): RunResult => ({ ...unbounded(version, 60, repeat), duet: { slot, cpuShare: 0.5 } });
  assert.equal(runsMode([duet('1.162.0', 'a')], [duet('1.163.2', 'b')]), 'duet');
  assert.equal(runsMode(seq, [unbounded('1.163.2', 60, 0)]), 'sequential');
  assert.throws(
    () => runsMode(seq, [duet('1.163.2', 'b')]),
    (e: unknown) => e instanceof InputError && /1 of the 2 completed runs ran in a duet/.test(e.message),
  );
  assert.throws(
    () => runsMode(seq, seq, 'duet'),
    (e: unknown) => e instanceof InputError && /ran in sequential mode, the config judges duet/.test(e.message),
  );
  assert.deepEqual(unpairedDuets([duet('1.162.0', 'a'), duet('1.162.0', 'a', 1)], [duet('1.163.2', 'b'), duet('1.163.2', 'a', 1)]), [
    'the duet of test "unbounded" #2 has both sides in slot a',
  ]);
  assert.deepEqual(unpairedDuets([duet('1.162.0', 'a')], []), ['the baseline\'s duet run of test "unbounded" #1 has no candidate run beside it']);
});

test('a barrier opens when every party has arrived, or left: a side that fails never strands its partner', async () => {
  const both = new Barrier(2);
  let opened = false;
  const waiting = both.arrive('a').then(() => (opened = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(opened, false);
  both.arrive('a');
  await new Promise((r) => setImmediate(r));
  assert.equal(opened, false, 'a party counts once');
  both.leave('b');
  await waiting;
  assert.equal(both.isOpen, true);
  assert.throws(() => new Barrier(0));
});
