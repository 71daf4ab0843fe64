import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { GateBench } from '../../src/bench/gate-bench.ts';
import { runGateOn } from '../../src/run/gate.ts';
import { parseRunOptions, plannedSeconds } from '../../src/run/options.ts';
import type { RunOptions, ScheduledRun } from '../../src/bench/gate-plan.ts';
import { compareRuns } from '../../src/compare/compare-runs.ts';
import { compareSetup } from '../../src/compare/compare-and-report.ts';
import { verdictFileSchema, type VerdictFile } from '../../src/results/verdict-schema.ts';
import { loadGateConfig } from '../../src/config/load.ts';
import { asInput, unbounded } from '../support/runs.ts';
import { QuietBench } from '../support/fake-bench.ts';
import { LOCAL } from '../../src/coordinator/simulation/profiles.ts';
import { SimClock, SimSystem } from '../../src/coordinator/simulation/model.ts';
import { driveTest } from '../../src/bench/drive-test.ts';
import { run as calibrate } from '../../src/cli/commands/calibrate.ts';
import { InputError } from '../../src/util/errors.ts';
import { noiseModelFileSchema } from '../../src/noise/schema.ts';
import { runResultSchema, type BenchFingerprint, type RunResult } from '../../src/results/schema.ts';

/** The shared gate loop with a bench that fails: what every bench gets for free. */
class BrokenBench implements GateBench {
  readonly system = 'mattermost' as const;
  readonly runOverheadSec = 300;
  tornDown = 0;
  executed = 0;
  constructor(private readonly failAt: 'setUp' | 'stop') {}
  expandHealthQuery(q: string): string {
    return q.replace('$X', 'expanded');
  }
  handleSignals(): void {}
  async setUp(): Promise<void> {
    if (this.failAt === 'setUp') throw new Error('app node set-up failed on 1 of 2 node(s):\n  app1 (i-0aaaaaaaaaaaaaaa2): Failed, exit code 1');
  }
  fingerprint(): BenchFingerprint {
    return { kind: 'aws', instances: { app: '2 x c7i.2xlarge' }, versions: {} };
  }
  async execute(): Promise<RunResult> {
    this.executed++;
    throw new Error('not reached in these tests');
  }
  stopReason(): string | undefined {
    return undefined;
  }
  async tearDown(): Promise<string[]> {
    this.tornDown++;
    return ['could not stop k6 on agent3'];
  }
  tornDownMessage(): string {
    return 'torn down';
  }
  notes(fatal: readonly string[]): string[] {
    return fatal.map((f) => `stopped: ${f}`);
  }
}

test('a bench that cannot be set up: every run is a crashed result saying why, teardown still runs, the verdict is inconclusive', async () => {
  const out = await mkdtemp(join(tmpdir(), 'lg-gate-'));
  try {
    const o = await parseRunOptions([
      '--config',
      'examples/aws-mattermost-sequential.yml',
      '--baseline',
      'v10.12.0',
      '--candidate',
      'v11.0.1-rc2',
      '--out',
      out,
      '--bench-file',
      'b.json',
      '--users-file',
      'u.txt',
    ]);
    const bench = new BrokenBench('setUp');
    const lines: string[] = [];
    const code = await runGateOn(bench, o, { out: (l) => lines.push(l), err: (l) => lines.push(l) });
    assert.equal(code, 2, lines.join('\n'));
    assert.equal(bench.tornDown, 1);
    assert.equal(bench.executed, 0);
    assert.ok(
      lines.some((l) => l.includes('could not stop k6 on agent3')),
      'tear-down problems are warnings in the log',
    );
    const files = (await readdir(join(out, 'results'))).filter((f) => f.endsWith('.json'));
    assert.equal(files.length, 4);
    for (const f of files) {
      const r = runResultSchema.parse(JSON.parse(await readFile(join(out, 'results', f), 'utf8')));
      assert.equal(r.status, 'crashed');
      assert.equal(r.target.system, 'mattermost');
      assert.match(r.problems[0] ?? '', /app node set-up failed on 1 of 2 node\(s\)/);
    }
    assert.match(await readFile(join(out, 'README.md'), 'utf8'), /stopped: app node set-up failed/);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

/** A bench that "runs" instantly: supported users from a function, a fake clock advanced by each run's planned time. */
class FakeBench extends QuietBench {
  order: string[] = [];
  clock = 0;
  constructor(
    private readonly users: (role: 'baseline' | 'candidate', repeat: number) => number,
    runOverheadSec = 0,
  ) {
    super(runOverheadSec);
  }
  async execute(run: ScheduledRun): Promise<RunResult> {
    this.order.push(`${run.repeat}:${run.side.role}`);
    this.clock += (plannedSeconds(run) + this.runOverheadSec) * 1000;
    const result = unbounded(run.side.label, this.users(run.side.role, run.repeat), run.repeat);
    // As the local bench does: a run under a CPU quota says so in its result.
    return run.side.cpuQuota === undefined ? result : { ...result, target: { ...result.target, cpuQuota: run.side.cpuQuota } };
  }
}

/**
 * The local profile with its noise model pinned at 3.26 % per run for supported users (the
 * shipped model's figure before the 2026-11-24 calibration): these tests are about the
 * loop's order, stops and resumes, which must not change when the bench is recalibrated.
 */
const LOOP_CONFIG = (async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lg-loop-config-'));
  const model = noiseModelFileSchema.parse(JSON.parse(await readFile('noise/local-synapse.json', 'utf8')));
  const pinned = {
    ...model,
    entries: model.entries.map((e) => (e.metric === 'supportedUsers' ? { ...e, sdLog: 0.0326, source: 'pinned for the loop tests' } : e)),
  };
  await writeFile(join(dir, 'noise.json'), JSON.stringify(pinned));
  const yml = (await readFile('examples/local-synapse.yml', 'utf8')).replace(/^noiseModel: .*$/m, `noiseModel: ${join(dir, 'noise.json')}`);
  await writeFile(join(dir, 'gate.yml'), yml);
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'gate.yml');
})();

async function gate(bench: FakeBench, extra: string[], out: string): Promise<{ code: number; lines: string[]; verdict: VerdictFile; o: RunOptions }> {
  const o = await parseRunOptions([
    '--config',
    await LOOP_CONFIG,
    '--baseline',
    '1.162.0',
    '--candidate',
    '1.163.2',
    '--out',
    out,
    '--tests',
    'unbounded',
    ...extra,
  ]);
  const lines: string[] = [];
  const code = await runGateOn(bench, o, { out: (l) => lines.push(l), err: (l) => lines.push(l) }, undefined, () => bench.clock);
  const verdict = verdictFileSchema.parse(JSON.parse(await readFile(join(out, 'verdict.json'), 'utf8')));
  return { code, lines, verdict, o };
}

test('the loop adds pairs in ABBA order only while undecided: an unchanged release passes once the evidence is in, and compare replays the same verdict', async () => {
  const out = await mkdtemp(join(tmpdir(), 'lg-gate-'));
  try {
    const bench = new FakeBench(() => 200);
    const { code, verdict, lines } = await gate(bench, ['--max-repeats', '6'], out);
    assert.equal(code, 0, lines.join('\n'));
    assert.equal(verdict.next, 'stop');
    // Two pairs cannot pass at the local noise with its uncertainty; pairs 2 and 3 run the candidate first.
    assert.deepEqual(bench.order, ['0:baseline', '0:candidate', '1:candidate', '1:baseline', '2:candidate', '2:baseline']);
    assert.equal(verdict.decision.pairs, 3);
    const files = (await readdir(join(out, 'results'))).filter((f) => f.endsWith('.json')).sort();
    const runs = await Promise.all(files.map(async (f) => runResultSchema.parse(JSON.parse(await readFile(join(out, 'results', f), 'utf8')))));
    const configFile = await LOOP_CONFIG;
    const config = await loadGateConfig(configFile);
    const again = compareRuns(
      runs.filter((r) => r.target.version === '1.162.0'),
      runs.filter((r) => r.target.version === '1.163.2'),
      config.tolerances,
      {
        ...(await compareSetup({ config, configFile })),
        maxPairs: 6,
      },
    );
    assert.equal(again.verdict.verdict, verdict.verdict);
    assert.equal(again.verdict.next, verdict.next);
    assert.equal(again.verdict.decision.stopReason, verdict.decision.stopReason);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('a clear loss fails at the first look (pair 2: the local profile takes repeats 2): no further pair is run', async () => {
  const out = await mkdtemp(join(tmpdir(), 'lg-gate-'));
  try {
    const bench = new FakeBench((role) => (role === 'candidate' ? 160 : 200));
    const { code, verdict } = await gate(bench, [], out);
    assert.equal(code, 1);
    assert.equal(bench.order.length, 4);
    assert.match(verdict.decision.stopReason, /Supported users \(unbounded\) crossed the fail bound after 2 pairs/);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('--job-budget stops before a run that would overrun it (next: repeat, exit 2), and --resume continues from the saved results', async () => {
  const out = await mkdtemp(join(tmpdir(), 'lg-gate-'));
  try {
    // A budget of three unbounded runs and a bit fits the first pair and one run of the second.
    const test = (await loadGateConfig('examples/local-synapse.yml')).tests.find((t) => t.type === 'unbounded')!;
    const budget = 3 * plannedSeconds({ test } as ScheduledRun) + 60;
    const first = new FakeBench(() => 200);
    const stopped = await gate(first, ['--job-budget', `${budget}s`, '--max-repeats', '6'], out);
    assert.equal(stopped.code, 2);
    assert.equal(stopped.verdict.next, 'repeat');
    assert.equal(stopped.verdict.verdict, 'inconclusive');
    assert.equal(stopped.verdict.decision.pairs, 1, 'the half-done pair is not judged');
    assert.ok(
      stopped.lines.some((l) => /job budget reached: .*A resume \(--resume, same --out\) will continue/.test(l)),
      stopped.lines.join('\n'),
    );
    assert.deepEqual(first.order, ['0:baseline', '0:candidate', '1:candidate']);

    const second = new FakeBench(() => 200);
    const resumed = await gate(second, ['--resume', '--max-repeats', '6'], out);
    assert.equal(resumed.code, 0, resumed.lines.join('\n'));
    assert.deepEqual(second.order, ['1:baseline', '2:candidate', '2:baseline'], 'the missing run, then the pair still needed');
    assert.equal(resumed.verdict.decision.pairs, 3);
    const readme = await readFile(join(out, 'README.md'), 'utf8');
    assert.match(readme, /bench notes from the bench set up here/);
    assert.match(readme, /3 of the 6 runs were reused from an earlier invocation \(--resume\)/);

    // A finished gate resumed again runs nothing: the report still describes the bench, from the reused runs.
    const third = new FakeBench(() => 200);
    const again = await gate(third, ['--resume', '--max-repeats', '6'], out);
    assert.deepEqual(third.order, []);
    assert.equal(again.verdict.verdict, resumed.verdict.verdict);
    const readme3 = await readFile(join(out, 'README.md'), 'utf8');
    assert.match(readme3, /bench notes from the reused runs' local bench/);
    assert.match(readme3, /6 of the 6 runs were reused/);
    assert.ok(
      again.lines.some((l) => /^verdict: PASS: .*\(0\.0 min, 6 run\(s\) reused; 3 pair\(s\)/.test(l)),
      again.lines.join('\n'),
    );
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test("--job-budget counts each run's set-up: a bench that takes 5 min to switch builds fits one run fewer", async () => {
  const out = await mkdtemp(join(tmpdir(), 'lg-gate-'));
  try {
    // The budget above fits three runs of the test alone (12 min each) but only two with
    // 5 min of set-up per run: 2 × 17 min = 34 min, and a third would end at 51 min > 36 + 1.
    const test = (await loadGateConfig('examples/local-synapse.yml')).tests.find((t) => t.type === 'unbounded')!;
    const budget = 3 * plannedSeconds({ test } as ScheduledRun) + 60;
    const slow = new FakeBench(() => 200, 300);
    const stopped = await gate(slow, ['--job-budget', `${budget}s`, '--max-repeats', '6'], out);
    assert.deepEqual(slow.order, ['0:baseline', '0:candidate']);
    assert.ok(
      stopped.lines.includes(
        '  job budget reached: the job budget (37m) would end during candidate-1.163.2-unbounded-1 (up to 17m, set-up included, after 34m). A resume (--resume, same --out) will continue.',
      ),
      stopped.lines.join('\n'),
    );
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('--job-budget too short for any run is bad input, naming the flag', async () => {
  const out = await mkdtemp(join(tmpdir(), 'lg-gate-'));
  try {
    await assert.rejects(gate(new FakeBench(() => 200), ['--job-budget', '5m'], out), /--job-budget: .*raise --job-budget/);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('calibrate runs when the configured noise model is stale (measured with another profile): it measures a new one', async () => {
  const out = await mkdtemp(join(tmpdir(), 'lg-gate-'));
  try {
    // The AWS profile's model: another bench and other test shapes for the local config.
    const yml = (await readFile('examples/local-synapse.yml', 'utf8')).replace(
      /^noiseModel: .*$/m,
      `noiseModel: ${join(process.cwd(), 'noise/aws-mattermost.json')}`,
    );
    await writeFile(join(out, 'gate.yml'), yml);
    const args = [
      '--config',
      join(out, 'gate.yml'),
      '--baseline',
      '1.162.0',
      '--candidate',
      '1.162.0',
      '--out',
      join(out, 'gate'),
      '--tests',
      'unbounded',
      '--repeats',
      '2',
      '--max-repeats',
      '2',
    ];
    const o = await parseRunOptions(args);
    // A gate refuses it before anything starts (exit 3) ...
    await assert.rejects(
      runGateOn(new FakeBench(() => 100), o, { out: () => {}, err: () => {} }),
      /noise model is of another bench \(bench\.kind: the model's "aws", the config's "local"\).*calibrate on this bench \(loadgate calibrate\)/,
    );
    // ... calibrate does not, and its report says no model was used.
    const values = [100, 104, 98, 102];
    const bench = new FakeBench((role, repeat) => values[2 * repeat + (role === 'baseline' ? 0 : 1)]!);
    await runGateOn(bench, { ...o, calibrate: true }, { out: () => {}, err: () => {} }, undefined, () => bench.clock);
    assert.equal(bench.order.length, 4, JSON.stringify(bench.order));
    const model = noiseModelFileSchema.parse(JSON.parse(await readFile(join(out, 'gate', 'noise-model.json'), 'utf8')));
    assert.equal(model.entries.find((e) => e.metric === 'supportedUsers')?.kind, 'measured');
    assert.match(await readFile(join(out, 'gate', 'README.md'), 'utf8'), /\*\*Noise model\*\*: assumed \(none configured\)/);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('calibrate runs every pair (no early stop) and writes the measured model to <out>/noise-model.json', async () => {
  const out = await mkdtemp(join(tmpdir(), 'lg-gate-'));
  try {
    const values = [100, 100, 110, 105, 90, 95];
    const bench = new FakeBench((role, repeat) => values[2 * repeat + (role === 'baseline' ? 0 : 1)]!);
    const o = await parseRunOptions([
      '--config',
      'examples/local-synapse.yml',
      '--baseline',
      '1.162.0',
      '--candidate',
      '1.162.0',
      '--out',
      out,
      '--tests',
      'unbounded',
      '--repeats',
      '3',
      '--max-repeats',
      '3',
    ]);
    await runGateOn(bench, { ...o, calibrate: true }, { out: () => {}, err: () => {} }, undefined, () => bench.clock);
    assert.equal(bench.order.length, 6);
    const model = noiseModelFileSchema.parse(JSON.parse(await readFile(join(out, 'noise-model.json'), 'utf8')));
    const users = model.entries.find((e) => e.metric === 'supportedUsers')!;
    assert.equal(users.kind, 'measured');
    // One version on both sides: the six runs are one group (their side offset is noise).
    assert.equal(users.df, 5);
    // Python: statistics.stdev(map(math.log, [100, 110, 90, 100, 105, 95])) = 0.070951
    assert.ok(Math.abs(users.sdLog - 0.07095) < 1e-5, String(users.sdLog));
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('--resume reuses only results of the same CPU quota: runs measured under --candidate-cpu-quota are run again without it', async () => {
  const out = await mkdtemp(join(tmpdir(), 'lg-gate-'));
  try {
    const test = (await loadGateConfig('examples/local-synapse.yml')).tests.find((t) => t.type === 'unbounded')!;
    const budget = 2 * plannedSeconds({ test } as ScheduledRun) + 60;
    const quotad = new FakeBench((role) => (role === 'candidate' ? 176 : 200));
    await gate(quotad, ['--job-budget', `${budget}s`, '--candidate-cpu-quota', '0.88'], out);
    assert.deepEqual(quotad.order, ['0:baseline', '0:candidate']);
    const saved = runResultSchema.parse(JSON.parse(await readFile(join(out, 'results', 'candidate-1.163.2-unbounded-0.json'), 'utf8')));
    assert.equal(saved.target.cpuQuota, 0.88);

    const plain = new FakeBench(() => 200);
    const resumed = await gate(plain, ['--resume', '--max-repeats', '6'], out);
    assert.equal(plain.order[0], '0:candidate', "the quota'd candidate run is not reused; the baseline's is");
    assert.ok(!plain.order.includes('0:baseline'));
    assert.equal(resumed.code, 0, resumed.lines.join('\n'));
    // The reused baseline run is the baseline's warm-start hint, as if it had just run.
    assert.deepEqual(await resumed.o.hints.get('unbounded', '1.162.0', 'baseline'), { users: 200, source: 'baseline 1.162.0 run 0' });
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test("a gate's noise model pools no side measured under a CPU quota", async () => {
  const out = await mkdtemp(join(tmpdir(), 'lg-gate-'));
  try {
    // Two pairs; the quota'd candidate's runs differ wildly, the baseline's by 2 %.
    const bench = new FakeBench((role, repeat) => (role === 'candidate' ? [150, 190][repeat]! : [200, 204][repeat]!));
    await gate(bench, ['--repeats', '2', '--max-repeats', '2', '--candidate-cpu-quota', '0.88'], out);
    const pooled = noiseModelFileSchema.parse(JSON.parse(await readFile(join(out, 'noise-model.json'), 'utf8')));
    const users = pooled.entries.find((e) => e.test === 'unbounded' && e.metric === 'supportedUsers')!;
    assert.match(users.source, /pooled with 2 runs \(1 df\) of 1\.162\.0$/, "the baseline's two runs only");
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

const LOCAL_CONFIG = resolve('examples/local-synapse.yml');
/** The machine of these tests: lower than the run found under reports/, as on a new user's laptop. */
const CEILING = 60;

/** FakeBench whose runs drive the capacity model through drive-test with the gate's hints, as both benches do. */
class ModelBench extends FakeBench {
  /** Where each run started: `<side> <startSource> <startUsers>`. */
  readonly starts: string[] = [];
  private seed = 1;
  constructor(private readonly o: RunOptions) {
    super(() => 0);
  }
  override async execute(run: ScheduledRun): Promise<RunResult> {
    const clock = new SimClock();
    const system = new SimSystem(clock, { ...LOCAL.model, noiseSd: 0.1, ceiling: CEILING }, this.seed++);
    const driven = await driveTest({
      test: { ...LOCAL.scaleFree, name: run.test.name },
      users: system,
      health: system,
      clock,
      signal: new AbortController().signal,
      progress: { status: () => {}, info: () => {} },
      label: { version: run.side.label, repeat: run.repeat },
      side: run.side.role,
      hints: this.o.hints,
    });
    if (driven.coordinator.kind !== 'unbounded') throw new Error('expected an unbounded test');
    const { capacity, supportedUsers } = driven.coordinator.result;
    this.starts.push(`${run.side.role} ${capacity.startSource} ${capacity.startUsers}`);
    return unbounded(run.side.label, supportedUsers, run.repeat);
  }
}

/** A checkout whose reports/ holds a converged, measured run of the baseline version at 74 users, from another machine. */
async function checkoutWithReports(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'lg-hints-cwd-'));
  const results = join(dir, 'reports/calibration/local-synapse-1.162.0-unbounded/results');
  await mkdir(results, { recursive: true });
  const run = {
    ...asInput(unbounded('1.162.0', 74)),
    provenance: { kind: 'measured' as const },
    converged: true,
    status: 'completed' as const,
    bench: { kind: 'local' as const, versions: {} },
  };
  await writeFile(join(results, 'baseline-1.162.0-unbounded-0.json'), JSON.stringify(run));
  return dir;
}

/** One pair of the unbounded test, run from `cwd` as the working directory. */
async function gateFrom(cwd: string, extra: string[] = []): Promise<string[]> {
  const home = process.cwd();
  process.chdir(cwd);
  try {
    const o = await parseRunOptions(
      [
        '--config',
        LOCAL_CONFIG,
        '--baseline',
        '1.162.0',
        '--candidate',
        '1.163.2',
        '--out',
        'out',
        '--tests',
        'unbounded',
        '--repeats',
        '1',
        '--max-repeats',
        '1',
        ...extra,
      ],
      cwd,
    );
    const bench = new ModelBench(o);
    await runGateOn(bench, o, { out: () => {}, err: () => {} });
    return bench.starts;
  } finally {
    process.chdir(home);
  }
}

test("a gate does not warm-start from the run results under its working directory: its first run starts from the profile's capacity, and its own first run hints the next", async () => {
  const cwd = await checkoutWithReports();
  try {
    const [baseline, candidate] = await gateFrom(cwd);
    // The model's 62.31 users less the 15 % margin, not the 74 of the report lying in the checkout.
    assert.match(baseline ?? '', /^baseline the profile's calibrated capacity \(median supported users of 28 converged runs .*\) 52$/);
    assert.match(candidate ?? '', /^candidate baseline 1\.162\.0 run 0 \d+$/);
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
});

test('--history <dir>: the gate warm-starts from the newest compatible run in that folder', async () => {
  const cwd = await checkoutWithReports();
  try {
    const [baseline, candidate] = await gateFrom(cwd, ['--history', 'reports']);
    const file = join(cwd, 'reports/calibration/local-synapse-1.162.0-unbounded/results/baseline-1.162.0-unbounded-0.json');
    assert.equal(baseline, `baseline ${file} ${Math.floor(74 * 0.85)}`);
    assert.match(candidate ?? '', /^candidate baseline 1\.162\.0 run 0 \d+$/, "the gate's own run before --history");
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
});

test('a --history folder that does not exist is bad input naming the flag, for run and calibrate', async () => {
  const argv = ['--config', LOCAL_CONFIG, '--baseline', '1.162.0', '--candidate', '1.163.2', '--out', 'out', '--history', 'no/such/folder'];
  await assert.rejects(
    parseRunOptions(argv, '/tmp'),
    (e: Error) => e instanceof InputError && /^--history: no folder \/tmp\/no\/such\/folder: /.test(e.message),
  );
  const file = join(tmpdir(), `lg-hints-file-${process.pid}`);
  await writeFile(file, '');
  try {
    await assert.rejects(
      parseRunOptions([...argv.slice(0, -1), file]),
      (e: Error) => e instanceof InputError && e.message.startsWith(`--history: no folder ${file}`),
      'a file is no folder',
    );
  } finally {
    await rm(file, { force: true });
  }
  const io = { out: () => {}, err: () => {} };
  const calibration = [
    '--config',
    LOCAL_CONFIG,
    '--version',
    '1.162.0',
    '--runs',
    '2',
    '--out',
    join(tmpdir(), 'lg-never-written'),
    '--history',
    '/no/such/folder',
  ];
  await assert.rejects(calibrate(calibration, io), (e: Error) => e instanceof InputError && e.message.startsWith('--history: no folder /no/such/folder'));
});

test("run and calibrate refuse an --out holding someone's files before the bench is set up, and change nothing there", async () => {
  const out = await mkdtemp(join(tmpdir(), 'lg-foreign-'));
  try {
    await mkdir(join(out, 'results'));
    await writeFile(join(out, 'README.md'), '# Mine\n');
    await writeFile(join(out, 'results', 'mine.txt'), 'my numbers\n');
    for (const calibrate of [false, true]) {
      const bench = new FakeBench(() => 200);
      const o = await parseRunOptions(['--config', await LOOP_CONFIG, '--baseline', '1.162.0', '--candidate', '1.162.0', '--out', out, '--tests', 'unbounded']);
      await assert.rejects(
        runGateOn(bench, { ...o, calibrate }, { out: () => {}, err: () => {} }),
        (e: Error) => e instanceof InputError && e.message.startsWith(`--out: ${out} already holds files loadgate did not write (README.md, results)`),
      );
      assert.deepEqual(bench.order, []);
    }
    // Through the command as well: refused before the local bench is created.
    const io = { out: () => {}, err: () => {} };
    await assert.rejects(
      calibrate(['--config', LOCAL_CONFIG, '--version', '1.162.0', '--runs', '2', '--out', out], io),
      (e: Error) => e instanceof InputError && /^--out: .* already holds files loadgate did not write/.test(e.message),
    );
    assert.deepEqual((await readdir(out)).sort(), ['README.md', 'results']);
    assert.equal(await readFile(join(out, 'README.md'), 'utf8'), '# Mine\n');
    assert.deepEqual(await readdir(join(out, 'results')), ['mine.txt']);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('--resume takes a directory holding only results/ of run results (a multi-job gate restores them from an artifact, without the marker) as its own', async () => {
  const first = await mkdtemp(join(tmpdir(), 'lg-job1-'));
  const restored = await mkdtemp(join(tmpdir(), 'lg-job2-'));
  try {
    const test = (await loadGateConfig('examples/local-synapse.yml')).tests.find((t) => t.type === 'unbounded')!;
    const budget = 3 * plannedSeconds({ test } as ScheduledRun) + 60;
    await gate(new FakeBench(() => 200), ['--job-budget', `${budget}s`, '--max-repeats', '6'], first);
    // What the next job gets: the results/ folder alone.
    await mkdir(join(restored, 'results'));
    for (const f of await readdir(join(first, 'results'))) await writeFile(join(restored, 'results', f), await readFile(join(first, 'results', f)));
    const second = new FakeBench(() => 200);
    const resumed = await gate(second, ['--resume', '--max-repeats', '6'], restored);
    assert.equal(resumed.code, 0, resumed.lines.join('\n'));
    assert.deepEqual(second.order, ['1:baseline', '2:candidate', '2:baseline']);
    // Anything else in results/ is not taken for loadgate's: the directory is refused.
    const other = await mkdtemp(join(tmpdir(), 'lg-job3-'));
    try {
      await mkdir(join(other, 'results'));
      await writeFile(join(other, 'results', 'notes.txt'), 'mine\n');
      await assert.rejects(
        gate(new FakeBench(() => 200), ['--resume'], other),
        (e: Error) => e instanceof InputError && /already holds files loadgate did not write \(results\)/.test(e.message),
      );
      assert.deepEqual(await readdir(join(other, 'results')), ['notes.txt']);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  } finally {
    await rm(first, { recursive: true, force: true });
    await rm(restored, { recursive: true, force: true });
  }
});

test('calibrate --job-budget stops a multi-job calibration with pairs left (exit 2, no model reported), and --resume finishes it with the same model', async () => {
  const out = await mkdtemp(join(tmpdir(), 'lg-gate-'));
  try {
    const values = [100, 100, 110, 105, 90, 95];
    const test = (await loadGateConfig('examples/local-synapse.yml')).tests.find((t) => t.type === 'unbounded')!;
    // Three runs and a bit: the first pair and one run of the second, of three pairs.
    const budget = 3 * plannedSeconds({ test } as ScheduledRun) + 60;
    const args = ['--config', 'examples/local-synapse.yml', '--version', '1.162.0', '--runs', '3', '--out', out, '--tests', 'unbounded'];
    const calibrateOn = async (bench: FakeBench, extra: string[]) => {
      const lines: string[] = [];
      const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
      const code = await calibrate([...args, ...extra], io, (o, gateIo) => runGateOn(bench, o, gateIo, undefined, () => bench.clock));
      return { code, lines };
    };
    const first = new FakeBench((role, repeat) => values[2 * repeat + (role === 'baseline' ? 0 : 1)]!);
    const stopped = await calibrateOn(first, ['--job-budget', `${budget}s`]);
    assert.equal(stopped.code, 2, stopped.lines.join('\n'));
    assert.deepEqual(first.order, ['0:baseline', '0:candidate', '1:candidate']);
    assert.ok(
      stopped.lines.includes('calibrate: 1 of 3 pairs done within the job budget; run it again with --resume and the same --out to go on'),
      stopped.lines.join('\n'),
    );
    assert.ok(!stopped.lines.some((l) => l.startsWith('noise model:')), 'a partial calibration reports no model');

    const second = new FakeBench((role, repeat) => values[2 * repeat + (role === 'baseline' ? 0 : 1)]!);
    const resumed = await calibrateOn(second, ['--resume', '--runner-limit', '360']);
    assert.equal(resumed.code, 0, resumed.lines.join('\n'));
    assert.deepEqual(second.order, ['1:baseline', '2:candidate', '2:baseline'], 'the missing run, then the last pair');
    const model = noiseModelFileSchema.parse(JSON.parse(await readFile(join(out, 'noise-model.json'), 'utf8')));
    const users = model.entries.find((e) => e.metric === 'supportedUsers')!;
    // The same six runs as one uninterrupted calibration (the test above): one group, 5 df.
    assert.equal(users.df, 5);
    assert.ok(Math.abs(users.sdLog - 0.07095) < 1e-5, String(users.sdLog));
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('calibrate --stop-early, the last job of a multi-job calibration: the job budget leaves a pair, and the model is measured from the pairs completed, saying how many', async () => {
  const out = await mkdtemp(join(tmpdir(), 'lg-gate-'));
  try {
    const values = [100, 100, 110, 105, 90, 95];
    const test = (await loadGateConfig('examples/local-synapse.yml')).tests.find((t) => t.type === 'unbounded')!;
    // Four runs and a bit: two of the three pairs.
    const budget = 5 * plannedSeconds({ test } as ScheduledRun) + 60;
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
    const bench = new FakeBench((role, repeat) => values[2 * repeat + (role === 'baseline' ? 0 : 1)]!);
    const args = [
      '--config',
      'examples/local-synapse.yml',
      '--version',
      '1.162.0',
      '--runs',
      '3',
      '--out',
      out,
      '--tests',
      'unbounded',
      '--job-budget',
      `${budget}s`,
      '--runner-limit',
      '360',
      '--stop-early',
    ];
    const code = await calibrate(args, io, (o, gateIo) => runGateOn(bench, o, gateIo, undefined, () => bench.clock));
    assert.equal(code, 0, lines.join('\n'));
    assert.deepEqual(bench.order.slice(0, 4), ['0:baseline', '0:candidate', '1:candidate', '1:baseline'], 'two pairs ran; nothing was run again');
    assert.ok(
      lines.some((l) => l.startsWith('calibrate: stopped early after 2 of 3 pairs')),
      lines.join('\n'),
    );
    const model = noiseModelFileSchema.parse(JSON.parse(await readFile(join(out, 'noise-model.json'), 'utf8')));
    const users = model.entries.find((e) => e.metric === 'supportedUsers')!;
    assert.equal(users.runs, 4, 'the two completed pairs, both sides');
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('the gate asks a bench that installed both versions which grown functions changed, and the report records its answer', async () => {
  const { duets } = await import('../support/profiles.ts');
  const recorded = duets('inj', 3);
  /** Runs carry the recorded profiles of a duet with extra CPU in load_rows; the "installs" say it changed. */
  class ProfilingBench extends FakeBench {
    asked: string[][] = [];
    override async execute(run: ScheduledRun): Promise<RunResult> {
      const result = await super.execute(run);
      const source = recorded[run.side.role][run.repeat] as RunResult;
      return { ...result, profile: source.profile, totals: { ...result.totals, requests: source.totals.requests } };
    }
    async changedFunctions(hot: readonly { name: string; file: string; line?: number }[]) {
      this.asked.push(hot.map((f) => f.name));
      return hot.map((f) =>
        f.name === 'load_rows'
          ? { ...f, path: f.file, status: 'changed' as const, added: 4, removed: 0, baselineLine: 25, candidateLine: 25 }
          : { ...f, status: 'unchanged' as const, baselineLine: 1, candidateLine: 1 },
      );
    }
  }
  const out = await mkdtemp(join(tmpdir(), 'lg-gate-'));
  try {
    const bench = new ProfilingBench(() => 200);
    await gate(bench, ['--max-repeats', '3'], out);
    assert.equal(bench.asked.length, 1, 'asked once, for the one test, after the runs');
    assert.equal(bench.asked[0]?.[0], 'load_rows');
    const record = JSON.parse(await readFile(join(out, 'changed-code.json'), 'utf8'));
    assert.deepEqual([record.baseline, record.candidate, record.tests[0].test], ['1.162.0', '1.163.2', 'unbounded']);
    assert.match(
      await readFile(join(out, 'README.md'), 'utf8'),
      /### The changed code behind the hot spots - unbounded\n\n1 of the \d+ hot functions in the server's source changed between `1\.162\.0` and `1\.163\.2`/,
    );
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});
