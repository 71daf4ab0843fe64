import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runGateOn } from '../../src/run/gate.ts';
import { parseRunOptions, plannedSeconds } from '../../src/run/options.ts';
import type { RunOptions, ScheduledRun } from '../../src/bench/gate-plan.ts';
import { verdictFileSchema } from '../../src/results/verdict-schema.ts';
import { readHistory } from '../../src/history/store.ts';
import { InputError } from '../../src/util/errors.ts';
import type { RunResult } from '../../src/results/schema.ts';
import { unbounded, withTempDir } from '../support/runs.ts';
import { QuietBench } from '../support/fake-bench.ts';

/** Supported users per release: each release a little slower than the one before. */
const USERS: Record<string, number> = { '1.160.0': 100, '1.161.0': 97.9, '1.162.0': 96.1, '1.163.2': 93.8, '1.164.0': 91 };

class DuetBench extends QuietBench {
  duets: string[] = [];
  clock = 0;
  async execute(): Promise<RunResult> {
    throw new Error('a duet gate runs no run alone');
  }
  async executeDuet(runs: readonly [ScheduledRun, ScheduledRun]): Promise<[RunResult, RunResult]> {
    this.clock += plannedSeconds(runs[0]) * 1000;
    this.duets.push(runs.map((r) => r.side.label).join(' with '));
    const one = (run: ScheduledRun, slot: 'a' | 'b'): RunResult => ({
      ...unbounded(run.side.label, USERS[run.side.label] as number, run.repeat),
      duet: { slot, cpuShare: 0.5 },
    });
    return [one(runs[0], 'a'), one(runs[1], 'b')];
  }
}

/** The duet profile with a creep anchor, in `dir` (the built-in noise model is found from anywhere). */
async function creepConfig(dir: string, anchor: string): Promise<string> {
  const file = join(dir, 'gate.yml');
  await writeFile(file, `${await readFile('examples/local-synapse-duet.yml', 'utf8')}\ncreep:\n  anchor: '${anchor}'\n`);
  return file;
}

test('a gate whose step passes but whose chain since the anchor cannot decide measures the anchor directly, fails on the creep line, and appends its record', async () => {
  await withTempDir(async (dir) => {
    const runs = join(dir, 'runs');
    await cp('test/fixtures/history/good', join(runs, 'history'), { recursive: true });
    const config = await creepConfig(dir, '1.160.0');
    const out = join(runs, '1.163.2-vs-1.164.0');
    const o = await parseRunOptions([
      '--config',
      config,
      '--baseline',
      '1.163.2',
      '--candidate',
      '1.164.0',
      '--out',
      out,
      '--tests',
      'unbounded',
      '--history',
      runs,
    ]);
    const bench = new DuetBench();
    const asked: RunOptions[] = [];
    const benchFor = async (options: RunOptions) => {
      asked.push(options);
      return bench;
    };
    const lines: string[] = [];
    const code = await runGateOn(bench, o, { out: (l) => lines.push(l), err: () => {} }, undefined, () => bench.clock, benchFor);
    assert.equal(code, 1);
    // The anchor gate: the anchor against the candidate, at half of each error rate, in <out>/creep-anchor.
    assert.equal(asked.length, 1);
    assert.equal(asked[0]?.baseline.label, '1.160.0');
    assert.equal(asked[0]?.config.errorRates.falseFailPct, 0.5);
    assert.equal(asked[0]?.outDir, join(out, 'creep-anchor'));
    assert.ok(bench.duets.includes('1.160.0 with 1.164.0') || bench.duets.includes('1.164.0 with 1.160.0'), bench.duets.join('; '));
    const verdict = verdictFileSchema.parse(JSON.parse(await readFile(join(out, 'verdict.json'), 'utf8')));
    assert.equal(verdict.verdict, 'fail');
    assert.equal(verdict.checks.find((c) => c.id === 'unbounded.supportedUsers')?.verdict, 'pass', 'the step itself passed');
    assert.equal(verdict.creep?.verdict, 'fail');
    assert.equal(verdict.creep?.direct?.report, 'creep-anchor');
    assert.match(verdict.summary, /^Creep since 1\.160\.0: each step passed; the change since 1\.160\.0 is −\d\.\d %/);
    const readme = await readFile(join(out, 'README.md'), 'utf8');
    assert.match(readme, /\*\*Creep since 1\.160\.0\*\*: ❌ each step passed/);
    assert.match(readme, /## Since earlier releases/);
    assert.match(readme, /1\.160\.0 → 1\.161\.0 → 1\.162\.0 → 1\.163\.2 → 1\.164\.0/);
    assert.match(readme, /!\[unbounded Supported users since 1\.160\.0\]\(graphs\/history_unbounded-supportedUsers\.png\)/);
    assert.ok((await readdir(join(out, 'graphs'))).includes('history_unbounded-supportedUsers.png'));
    // The record, appended to the history with its report linked from there, reads back.
    const records = await readHistory(join(runs, 'history'), { product: 'synapse', profile: 'synapse-local-duet' });
    const mine = records.find((r) => r.candidate === '1.164.0')!;
    assert.equal(mine.report, '../1.163.2-vs-1.164.0/README.md');
    assert.equal(mine.creep?.verdict, 'fail');
    // The step's estimate as the verdict has it (the duet model's slot effect taken out).
    const estimate = verdict.checks.find((c) => c.id === 'unbounded.supportedUsers')?.estimate;
    assert.equal(mine.checks.find((c) => c.id === 'unbounded.supportedUsers')?.logRatio, estimate?.logRatio);
    assert.ok(Math.abs((estimate?.logRatio ?? 0) - Math.log(91 / 93.8)) < 0.01);
  });
});

test('a damaged history stops the gate before any run, as bad input naming the file and line', async () => {
  await withTempDir(async (dir) => {
    const runs = join(dir, 'runs');
    await cp('test/fixtures/history/damaged', join(runs, 'history'), { recursive: true });
    const config = await creepConfig(dir, '1.160.0');
    const o = await parseRunOptions([
      '--config',
      config,
      '--baseline',
      '1.163.2',
      '--candidate',
      '1.164.0',
      '--out',
      join(runs, 'x'),
      '--tests',
      'unbounded',
      '--history',
      runs,
    ]);
    const bench = new DuetBench();
    await assert.rejects(
      runGateOn(bench, o, { out: () => {}, err: () => {} }),
      (e: unknown) => e instanceof InputError && /1\.161\.0-vs-1\.162\.0\.jsonl:2: not a JSON record/.test(e.message),
    );
    assert.deepEqual(bench.duets, []);
  });
});

test('without a creep anchor a gate with --history still records itself and draws its series; the step verdict stands alone', async () => {
  await withTempDir(async (dir) => {
    const runs = join(dir, 'runs');
    await cp('test/fixtures/history/good', join(runs, 'history'), { recursive: true });
    const out = join(runs, '1.163.2-vs-1.164.0');
    const o = await parseRunOptions([
      '--config',
      'examples/local-synapse-duet.yml',
      '--baseline',
      '1.163.2',
      '--candidate',
      '1.164.0',
      '--out',
      out,
      '--tests',
      'unbounded',
      '--history',
      runs,
    ]);
    const bench = new DuetBench();
    const code = await runGateOn(
      bench,
      o,
      { out: () => {}, err: () => {} },
      undefined,
      () => bench.clock,
      async () => bench,
    );
    assert.equal(code, 0);
    assert.ok(
      bench.duets.every((d) => !d.includes('1.160.0')),
      'no anchor duet without an anchor',
    );
    const verdict = verdictFileSchema.parse(JSON.parse(await readFile(join(out, 'verdict.json'), 'utf8')));
    assert.equal(verdict.creep, undefined);
    assert.deepEqual(verdict.history?.releases, ['1.160.0', '1.161.0', '1.162.0', '1.163.2', '1.164.0']);
    assert.equal((await readHistory(join(runs, 'history'))).length, 4);
  });
});

test('an anchor release the target cannot install is bad input before any run, naming creep.anchor', async () => {
  await withTempDir(async (dir) => {
    const config = await creepConfig(dir, 'v10.x');
    const o = await parseRunOptions(['--config', config, '--baseline', '1.163.2', '--candidate', '1.164.0', '--out', join(dir, 'out'), '--tests', 'unbounded']);
    const bench = new DuetBench();
    await assert.rejects(
      runGateOn(bench, o, { out: () => {}, err: () => {} }),
      (e: unknown) => e instanceof InputError && /^creep\.anchor: v10\.x cannot be run as a release of synapse: /.test(e.message),
    );
    assert.deepEqual(bench.duets, []);
  });
});

test("--history on a reports repository reads its profile's folder, reports/history/<profile>, as publish keeps it", async () => {
  await withTempDir(async (dir) => {
    const reports = join(dir, 'reports');
    await cp('test/fixtures/history/good', join(reports, 'history', 'synapse-local-duet'), { recursive: true });
    const out = join(dir, 'out');
    const o = await parseRunOptions([
      '--config',
      'examples/local-synapse-duet.yml',
      '--baseline',
      '1.163.2',
      '--candidate',
      '1.164.0',
      '--out',
      out,
      '--tests',
      'unbounded',
      '--history',
      reports,
    ]);
    const bench = new DuetBench();
    assert.equal(await runGateOn(bench, o, { out: () => {}, err: () => {} }, undefined, () => bench.clock), 0);
    const verdict = verdictFileSchema.parse(JSON.parse(await readFile(join(out, 'verdict.json'), 'utf8')));
    assert.equal(verdict.history?.source, '../reports/history/synapse-local-duet', 'relative to the report');
    assert.equal(verdict.history?.records, 4);
  });
});

test("--creep-anchor sets the creep check's anchor over the config's, checked as the config field is", async () => {
  const args = ['--config', 'examples/local-synapse-duet.yml', '--baseline', '1.162.0', '--candidate', '1.163.2', '--out', '/tmp/x'];
  assert.equal((await parseRunOptions(args)).config.creep, undefined);
  assert.deepEqual((await parseRunOptions([...args, '--creep-anchor', '1.160.*'])).config.creep, { anchor: '1.160.*' });
  await assert.rejects(parseRunOptions([...args, '--creep-anchor', '1.160 0']), (e: unknown) => e instanceof InputError && /--creep-anchor/.test(e.message));
});
