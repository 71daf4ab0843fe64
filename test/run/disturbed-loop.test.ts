import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runGateOn } from '../../src/run/gate.ts';
import { parseRunOptions, plannedSeconds } from '../../src/run/options.ts';
import type { ScheduledRun } from '../../src/bench/gate-plan.ts';
import { verdictFileSchema } from '../../src/results/verdict-schema.ts';
import { parseRunResult } from '../../src/results/load.ts';
import type { RunResult } from '../../src/results/schema.ts';
import { unbounded } from '../support/runs.ts';
import { QuietBench } from '../support/fake-bench.ts';

const DUET_CONFIG = 'examples/local-synapse-duet.yml';

/**
 * A duet bench on a machine whose other work is `busy(duet)` % of the bench's CPUs in the
 * n-th duet it runs (0-based); a busy duet shows the candidate a quarter down.
 */
class BusyBench extends QuietBench {
  duets: string[] = [];
  clock = 0;
  constructor(private readonly busy: (duet: number) => number | undefined) {
    super();
  }
  async execute(): Promise<RunResult> {
    throw new Error('a duet gate runs no run alone');
  }
  async executeDuet(runs: readonly [ScheduledRun, ScheduledRun]): Promise<[RunResult, RunResult]> {
    const outside = this.busy(this.duets.length);
    this.duets.push(`${runs[0].repeat}:${outside ?? '-'}`);
    this.clock += plannedSeconds(runs[0]) * 1000;
    const one = (run: ScheduledRun, slot: 'a' | 'b'): RunResult => ({
      ...unbounded(run.side.label, run.side.role === 'candidate' && (outside ?? 0) > 25 ? 45 : 60, run.repeat),
      duet: { slot, cpuShare: 0.5 },
      outsideCpu:
        outside === undefined
          ? { limitPercent: 25, unmeasured: "no samples of node_exporter's busy CPU in the measured window" }
          : { percent: outside, limitPercent: 25 },
    });
    return [one(runs[0], 'a'), one(runs[1], 'b')];
  }
}

async function gate(bench: QuietBench & { clock: number }, args: string[]): Promise<{ code: number; out: string; lines: string[]; files: string[] }> {
  const out = await mkdtemp(join(tmpdir(), 'lg-disturbed-'));
  try {
    const lines: string[] = [];
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
      ...args,
    ]);
    const code = await runGateOn(bench, o, { out: (l) => lines.push(l), err: (l) => lines.push(l) }, undefined, () => bench.clock);
    const files = (await readdir(join(out, 'results'))).sort();
    const verdict = await readFile(join(out, 'verdict.json'), 'utf8');
    const disturbed = await Promise.all(
      files.filter((f) => f.includes('-disturbed-')).map(async (f) => parseRunResult(JSON.parse(await readFile(join(out, 'results', f), 'utf8')), f)),
    );
    assert.ok(
      disturbed.every((r) => r.disturbed && (r.outsideCpu?.percent !== undefined || r.testStartedAt !== undefined)),
      'each run not judged keeps its measurement and the mark',
    );
    return { code, out: verdict, lines, files };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

test('a disturbed duet is recorded, not judged, and run again: the progress line and the report say so', async () => {
  // The first duet ran while other work took 60 % of the bench's CPUs; its candidate side shows a loss the re-run does not.
  const bench = new BusyBench((n) => (n === 0 ? 60 : 3));
  const { code, out, lines, files } = await gate(bench, ['--repeats', '2', '--max-repeats', '3']);
  assert.deepEqual(bench.duets.slice(0, 3), ['0:60', '0:3', '1:3']);
  const verdict = verdictFileSchema.parse(JSON.parse(out));
  assert.equal(verdict.verdict, 'pass', verdict.summary);
  assert.equal(code, 0);
  assert.deepEqual(verdict.disturbed, [
    'test "unbounded" duet #1: other work used 60 % of the bench\'s CPUs during the measured window (limit 25 %, bench.local.maxOutsideCpuPercent)',
  ]);
  assert.ok(
    files.includes('baseline-1.162.0-unbounded-0.json') &&
      files.includes('baseline-1.162.0-unbounded-0-disturbed-1.json') &&
      files.includes('candidate-1.163.2-unbounded-0-disturbed-1.json'),
    files.join(', '),
  );
  const progress = lines.join('\n');
  assert.match(
    progress,
    /duet not judged: other work used 60 % of the bench's CPUs .*: recorded in results\/ but not judged; running it again \(1 of at most 4 re-runs\)/,
  );
  assert.match(progress, /other work on the bench's CPUs 3%/);
});

test('a bench disturbed throughout ends inconclusive, saying in how many duets, after a bounded number of re-runs, never a pass', async () => {
  const bench = new BusyBench(() => 80);
  const { code, out, lines } = await gate(bench, ['--repeats', '1', '--max-repeats', '2']);
  // maxRepeats + 1 = 3 re-runs, then the fourth disturbed duet stops the gate.
  assert.deepEqual(bench.duets, ['0:80', '0:80', '0:80', '0:80']);
  const verdict = verdictFileSchema.parse(JSON.parse(out));
  assert.equal(verdict.verdict, 'inconclusive');
  assert.equal(code, 2);
  assert.match(verdict.summary, /4 of 4 duets could not be judged/);
  assert.equal(verdict.disturbed?.length, 4);
  assert.ok(verdict.checks.every((c) => c.verdict !== 'pass' && c.verdict !== 'fail'));
  assert.match(lines.join('\n'), /4 of 4 duets could not be judged/);
});

test('a share that was not measured disturbs nothing, and one at the limit is not above it', async () => {
  const bench = new BusyBench((n) => (n === 0 ? undefined : 25));
  const { code, files } = await gate(bench, ['--repeats', '2', '--max-repeats', '2']);
  assert.deepEqual(bench.duets, ['0:-', '1:25']);
  assert.equal(code, 0);
  assert.ok(!files.some((f) => f.includes('-disturbed-')), files.join(', '));
});

test('a resumed gate keeps naming the disturbed duets of the invocation before, and keeps their files', async () => {
  const out = await mkdtemp(join(tmpdir(), 'lg-disturbed-resume-'));
  try {
    const io = { out: () => {}, err: () => {} };
    const args = (n: string) => [
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
      n,
      '--max-repeats',
      n,
    ];
    const first = new BusyBench((n) => (n === 0 ? 70 : 2));
    await runGateOn(first, await parseRunOptions(args('1')), io, undefined, () => first.clock);
    const second = new BusyBench(() => 2);
    await runGateOn(second, await parseRunOptions([...args('2'), '--resume']), io, undefined, () => second.clock);
    assert.deepEqual(second.duets, ['1:2'], 'the first pair is reused, the second runs');
    const verdict = verdictFileSchema.parse(JSON.parse(await readFile(join(out, 'verdict.json'), 'utf8')));
    assert.deepEqual(verdict.disturbed, [
      'test "unbounded" duet #1: other work used 70 % of the bench\'s CPUs during the measured window (limit 25 %, bench.local.maxOutsideCpuPercent)',
    ]);
    const files = await readdir(join(out, 'results'));
    assert.ok(files.includes('candidate-1.163.2-unbounded-0-disturbed-1.json'), files.join(', '));
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

/**
 * A duet bench whose n-th duet measured its two sides `apartSec` seconds apart (0-based);
 * a duet apart shows the candidate a fifth down, as a side measured alone on a machine its
 * partner had left can.
 */
class ApartBench extends QuietBench {
  duets: number[] = [];
  clock = 0;
  constructor(private readonly apartSec: (duet: number) => number) {
    super();
  }
  async execute(): Promise<RunResult> {
    throw new Error('a duet gate runs no run alone');
  }
  async executeDuet(runs: readonly [ScheduledRun, ScheduledRun]): Promise<[RunResult, RunResult]> {
    const apart = this.apartSec(this.duets.length);
    this.duets.push(apart);
    this.clock += plannedSeconds(runs[0]) * 1000;
    const testStartedAt = new Date(Date.UTC(2026, 10, 29, 10, this.duets.length)).toISOString();
    const one = (run: ScheduledRun, slot: 'a' | 'b', shift: number): RunResult => ({
      ...unbounded(run.side.label, run.side.role === 'candidate' && apart > 30 ? 48 : 60, run.repeat),
      duet: { slot, cpuShare: 0.5 },
      testStartedAt,
      stableWindow: { startSec: 300 + shift, endSec: 450 + shift },
    });
    return [one(runs[0], 'a', 0), one(runs[1], 'b', apart)];
  }
}

test('a duet whose two sides were measured over different minutes is not judged and is run again, naming both windows', async () => {
  const bench = new ApartBench((n) => (n === 0 ? 100 : 0));
  const { code, out, lines, files } = await gate(bench, ['--repeats', '1', '--max-repeats', '2']);
  assert.deepEqual(bench.duets, [100, 0]);
  const verdict = verdictFileSchema.parse(JSON.parse(out));
  assert.equal(verdict.verdict, 'pass', verdict.summary);
  assert.equal(code, 0);
  assert.equal(verdict.disturbed?.length, 1);
  assert.match(
    verdict.disturbed?.[0] ?? '',
    /^test "unbounded" duet #1: the two sides were measured over different minutes \(slot a 300-450 s, slot b 400-550 s of their tests: starts 100 s apart, ends 100 s apart; at most 5 s each\)/,
  );
  assert.ok(files.includes('candidate-1.163.2-unbounded-0-disturbed-1.json'), files.join(', '));
  assert.match(lines.join('\n'), /duet not judged: the two sides were measured over different minutes .*running it again \(1 of at most 3 re-runs\)/);
});

test('windows a few seconds apart are one window: the duet is judged', async () => {
  const bench = new ApartBench(() => 4);
  const { files } = await gate(bench, ['--repeats', '1', '--max-repeats', '1']);
  assert.deepEqual(bench.duets, [4]);
  assert.ok(!files.some((f) => f.includes('-disturbed-')), files.join(', '));
});
