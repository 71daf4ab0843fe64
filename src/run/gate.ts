import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Progress } from '../bench/progress.ts';
import { AwsGateBench } from '../bench/aws/aws-gate-bench.ts';
import type { CliIO } from '../util/io.ts';
import { compareAndReport, compareSetup } from '../compare/compare-and-report.ts';
import { compareRuns, type CompareSetup } from '../compare/compare-runs.ts';
import { parseRunResult } from '../results/load.ts';
import { formatDuration } from '../util/duration.ts';
import { InputError } from '../util/errors.ts';
import { OutDir } from '../util/out-dir.ts';
import { noiseModelPath } from '../noise/model.ts';
import { emptyModel, poolRuns, spreadSides } from '../noise/pool.ts';
import { EXIT_CODES, type VerdictFile } from '../results/verdict-schema.ts';
import { runResultSchema, RUN_RESULT_SCHEMA_VERSION, type BenchFingerprint, type RunResult } from '../results/schema.ts';
import { expandQuery } from '../metrics/target-cpus.ts';
import type { GateBench } from '../bench/gate-bench.ts';
import { recordHint } from '../bench/capacity-hints.ts';
import { disturbedRerunCap, disturbedStop, duetNotJudged } from '../bench/disturbance.ts';
import { disturbedFileName } from '../results/disturbed.ts';
import type { GateConfig } from '../config/schema.ts';
import { LocalGateBench } from '../bench/local/local-gate-bench.ts';
import { testParams } from '../results/test-params.ts';
import { pairRuns, plannedSeconds } from './options.ts';
import { runId, runTarget, type RunOptions, type ScheduledRun } from '../bench/gate-plan.ts';
import { appendGateRecord, gateHistory, readGateHistory } from './creep-duet.ts';
import type { HistoryRecord } from '../history/record.ts';

/**
 * `loadgate run`, start to verdict, on any bench: set-up → pairs of runs, counterbalanced
 * (AB, BA, BA, AB… per test) while the decision needs them → tear-down → compare and report → exit
 * code of the verdict. Runs that never happened are written as crashed results that say
 * why, so the verdict is inconclusive rather than a pass.
 */
export async function runGate(o: RunOptions, io: CliIO): Promise<number> {
  const progress = new Progress(io.out);
  // A directory that holds someone else's files is refused before any bench is touched.
  await openOutDir(o);
  const benchFor = async (options: RunOptions): Promise<GateBench> => {
    const logs = join(options.outDir, 'logs');
    return options.aws ? AwsGateBench.create(options, progress, logs) : new LocalGateBench(options, progress, logs);
  };
  return runGateOn(await benchFor(o), o, io, progress, Date.now, benchFor);
}

/**
 * The gate loop, shared by every bench: pairs in counterbalanced order, at least
 * `repeats`; after each pair the sequential decision (the one `compare` replays) says
 * whether another pair is needed, up to `maxRepeats`.
 */
export async function runGateOn(
  bench: GateBench,
  o: RunOptions,
  io: CliIO,
  progress = new Progress(io.out),
  now: () => number = Date.now,
  benchFor?: (o: RunOptions) => Promise<GateBench>,
): Promise<number> {
  // The noise model is checked before anything starts: a wrong one is bad input (exit 3).
  // calibrate measures a new one, so it neither needs nor checks the configured model: that
  // model is stale exactly when the profile changed, which is when calibrate is run.
  const judgeConfig = o.calibrate ? withoutNoiseModel(o.config) : o.config;
  const setup = { ...(await compareSetup({ config: judgeConfig, configFile: o.configFile })), minPairs: o.repeats, maxPairs: o.maxRepeats };
  // Where a test's search starts when this gate has no run of its own yet: the capacity its model states.
  o.hints.useProfileCapacity(setup.model?.file?.capacity ?? []);
  const duet = o.config.mode === 'duet';
  if (duet && !bench.executeDuet) throw new InputError(`mode: duet: the ${bench.fingerprint().kind} bench cannot run a duet; set mode: sequential`);
  // Read before any run: a damaged or foreign history is bad input, not a gate's end.
  const history = await readGateHistory(o);
  const gateAbort = new AbortController();
  bench.handleSignals((signal) => gateAbort.abort(new Error(`received ${signal}`)));
  const out = await openOutDir(o);
  await out.mkdir('logs');
  const resultsDir = await out.mkdir('results');
  const gate: GateState = {
    bench,
    o,
    progress,
    now,
    setup,
    duet,
    out,
    resultsDir,
    signal: gateAbort.signal,
    started: now(),
    reusable: o.resume ? await resumable(resultsDir, o) : new Map<string, RunResult>(),
    results: [],
    fatal: [],
    pairsStarted: 0,
    setUp: false,
    disturbed: o.resume ? await disturbedBefore(resultsDir, o) : [],
    duetsRun: 0,
    disturbedDuets: 0,
    history,
    ...(benchFor ? { benchFor } : {}),
  };

  await runPairs(gate);
  if (gateAbort.signal.aborted && !gate.fatal.length)
    gate.fatal.push(String((gateAbort.signal.reason as Error | undefined)?.message ?? 'the gate was stopped'));

  // Runs that never happened (up to the minimum, and the rest of a broken pair) are
  // reported as crashed, so the verdict says why. A budget stop leaves them to a resume.
  const judged = gate.budgetStop ? gate.results.filter((r) => r.run.repeat < completePairs(gate.results, o)) : gate.results;
  if (gate.budgetStop && !judged.length) {
    throw new InputError(`--job-budget: ${gate.budgetStop}; no pair fits in the budget, so nothing can be judged: raise --job-budget`);
  }
  if (!gate.budgetStop) await recordRunsNotRun(gate);
  return report(gate, judgeConfig, judged, io);
}

/** One gate's progress, shared by its steps. */
interface GateState {
  bench: GateBench;
  o: RunOptions;
  progress: Progress;
  now: () => number;
  setup: CompareSetup;
  duet: boolean;
  /** The output directory: only what loadgate wrote there is ever replaced. */
  out: OutDir;
  resultsDir: string;
  /** Aborted when the gate must stop (a signal). */
  signal: AbortSignal;
  started: number;
  /** --resume: completed results that match a scheduled run, by run id. */
  reusable: Map<string, RunResult>;
  results: { run: ScheduledRun; result: RunResult }[];
  /** Why the gate stopped before its decision, if it did. */
  fatal: string[];
  budgetStop?: string;
  pairsStarted: number;
  setUp: boolean;
  /** Runs of disturbed duets: written to results/ and given to compare, which judges none of them. */
  disturbed: { run: ScheduledRun; result: RunResult }[];
  /** Duets this invocation ran, and how many of them were disturbed. */
  duetsRun: number;
  disturbedDuets: number;
  /** The gate history's records before this gate (--history), and a bench for the creep check's anchor duet. */
  history: HistoryRecord[];
  benchFor?: (o: RunOptions) => Promise<GateBench>;
}

/**
 * Pairs in counterbalanced order, at least `repeats`; after each, the sequential decision
 * says whether another is needed. The bench is set up before the first run that is not
 * reused, and torn down whatever happens.
 */
async function runPairs(gate: GateState): Promise<void> {
  const { o, progress, bench } = gate;
  try {
    for (let pair = 0; pair < o.maxRepeats; pair++) {
      gate.pairsStarted = pair + 1;
      const steps = runSteps(pairRuns(o, pair), gate.duet);
      for (const [i, step] of steps.entries()) {
        if (gate.signal.aborted) return;
        const what = step.map((run) => `${run.side.role} ${run.side.label}`).join(' with ');
        const label = `pair ${pair + 1} ${gate.duet ? 'duet' : 'run'} ${i + 1}/${steps.length}: ${what}, test "${step[0].test.name}"`;
        let outcome: StepOutcome;
        do outcome = await runStep(gate, step, label);
        while (outcome === 'again');
        if (outcome === 'stop') return;
      }
      if (pair + 1 < o.repeats) continue;
      const interim = decideSoFar(gate.results, pair + 1, o, gate.setup);
      if (interim.next === 'stop') return;
      progress.info(`after ${pair + 1} pair(s): ${interim.decision.stopReason}`);
    }
  } catch (error) {
    gate.fatal.push((error as Error).message);
    progress.problem((error as Error).message);
  } finally {
    if (gate.setUp) {
      progress.begin('clean-up');
      const problems = await bench.tearDown().catch((error: Error) => [`tear-down failed: ${error.message}`]);
      for (const p of problems) progress.problem(p, 'warning');
      progress.info(bench.tornDownMessage());
    }
  }
}

/** After a step: the next one, the same one again (its duet was disturbed), or stop. */
type StepOutcome = 'next' | 'again' | 'stop';

/** One step (a run, or a duet's two): reused, refused by the job budget, or run. */
async function runStep(gate: GateState, step: [ScheduledRun] | [ScheduledRun, ScheduledRun], label: string): Promise<StepOutcome> {
  const { o, progress, bench, resultsDir, out } = gate;
  const priors = step.map((run) => gate.reusable.get(runId(run)));
  if (priors.every((prior) => prior)) {
    progress.info(`${label}: reusing the completed result${step.length > 1 ? 's' : ''} in ${resultsDir}`);
    for (const [j, run] of step.entries()) {
      const prior = priors[j] as RunResult;
      gate.results.push({ run, result: prior });
      // As if it had just run: the side's next unbounded run warm-starts from it.
      recordHint(o.hints, prior, run.side.role);
    }
    return 'next';
  }
  const elapsed = (gate.now() - gate.started) / 1000;
  const upTo = plannedSeconds(step[0]) + bench.runOverheadSec;
  if (o.jobBudgetSec !== undefined && elapsed + upTo > o.jobBudgetSec) {
    gate.budgetStop = `the job budget (${formatDuration(o.jobBudgetSec)}) would end during ${step.map(runId).join(' and ')} (up to ${formatDuration(upTo)}${bench.runOverheadSec ? ', set-up included' : ''}, after ${formatDuration(elapsed)})`;
    return 'stop';
  }
  if (!gate.setUp) {
    gate.setUp = true;
    await bench.setUp(gate.signal);
  }
  progress.begin(label);
  const done = step.length === 2 && bench.executeDuet ? await bench.executeDuet([step[0], step[1]]) : [await bench.execute(step[0])];
  const disturbance = step.length === 2 ? duetNotJudged(done) : undefined;
  if (step.length === 2) gate.duetsRun++;
  for (const [j, result] of done.entries()) {
    const run = step[j] as ScheduledRun;
    if (disturbance) await keepDisturbed(gate, run, { ...result, disturbed: disturbance });
    else {
      await writeResult(out, run, result);
      gate.results.push({ run, result });
    }
    progress.info(`${step.length > 1 ? `${run.side.role}: ` : ''}${summarize(result)}`);
  }
  const stop = bench.stopReason();
  if (stop) {
    gate.fatal.push(stop);
    return 'stop';
  }
  return disturbance ? afterDisturbed(gate, disturbance) : 'next';
}

/**
 * A duet the gate does not judge (disturbed, or its two windows apart) is run again, up to
 * disturbedRerunCap times in a gate; the next one stops the gate, whose runs left unrun then
 * make it inconclusive, saying why.
 */
function afterDisturbed(gate: GateState, why: string): StepOutcome {
  gate.disturbedDuets++;
  const cap = disturbedRerunCap(gate.o.maxRepeats);
  if (gate.disturbedDuets > cap) {
    const stop = disturbedStop(gate.disturbedDuets, gate.duetsRun);
    gate.fatal.push(stop);
    gate.progress.problem(`duet not judged: ${why}; ${stop}`);
    return 'stop';
  }
  gate.progress.problem(
    `duet not judged: ${why}: recorded in results/ but not judged; running it again (${gate.disturbedDuets} of at most ${cap} re-runs)`,
    'warning',
  );
  return 'again';
}

/** A run of a disturbed duet: written beside the run's own file, which its re-run takes. */
async function keepDisturbed(gate: GateState, run: ScheduledRun, result: RunResult): Promise<void> {
  const nth = gate.disturbed.filter((d) => runId(d.run) === runId(run)).length + 1;
  gate.disturbed.push({ run, result });
  await gate.out.writeFile(join('results', disturbedFileName(runId(run), nth)), `${JSON.stringify(result, null, 2)}\n`);
}

/** Every scheduled run up to the minimum and the pairs begun that has no result: crashed, saying why. */
async function recordRunsNotRun(gate: GateState): Promise<void> {
  const { o, bench, fatal } = gate;
  for (let pair = 0; pair < Math.max(o.repeats, gate.pairsStarted); pair++) {
    for (const run of pairRuns(o, pair)) {
      if (gate.results.some((r) => runId(r.run) === runId(run))) continue;
      const result = notRun(
        run,
        bench.fingerprint(),
        fatal.length ? fatal : ['not run: the gate stopped before this run'],
        (q) => bench.expandHealthQuery(q),
        bench.system,
      );
      await writeResult(gate.out, run, result);
      gate.results.push({ run, result });
    }
  }
}

/** Compare and report the judged runs, write the pooled noise model, print the verdict; returns the exit code. */
async function report(gate: GateState, judgeConfig: GateConfig, judged: GateState['results'], io: CliIO): Promise<number> {
  const { o, progress, bench, results, fatal, budgetStop } = gate;
  progress.begin('compare and report');
  // A resume that reused every run set nothing up: its notes describe the bench the reused runs ran on.
  const reusedRuns = results.filter((r) => gate.reusable.get(runId(r.run)) === r.result);
  const notes = gate.setUp
    ? bench.notes(fatal)
    : reusedRuns.length
      ? bench.notes(fatal, reusedRuns[0]?.result.bench)
      : fatal.map((f) => `The gate stopped: ${f}`);
  if (reusedRuns.length)
    notes.push(
      `${reusedRuns.length} of the ${results.length} runs were reused from an earlier invocation (--resume); their results are unchanged in results/.`,
    );
  if (budgetStop) notes.push(`Stopped by the job budget: ${budgetStop}; run again with --resume to continue.`);
  // Disturbed duets go to compare too, which names them and judges none of them.
  const given = [...judged, ...gate.disturbed];
  // A bench that installed both versions says which hot functions changed between them.
  const changedFunctions = bench.changedFunctions?.bind(bench);
  const history = budgetStop
    ? undefined
    : await gateHistory(
        { ...gate, records: gate.history, io, runGate: runGateOn },
        {
          baseline: judged.filter((r) => r.run.side.role === 'baseline').map((r) => r.result),
          candidate: judged.filter((r) => r.run.side.role === 'candidate').map((r) => r.result),
        },
      );
  const verdict: VerdictFile = await compareAndReport({
    baseline: given.filter((r) => r.run.side.role === 'baseline').map((r) => r.result),
    candidate: given.filter((r) => r.run.side.role === 'candidate').map((r) => r.result),
    config: { ...judgeConfig, repeats: o.repeats, maxRepeats: o.maxRepeats },
    configFile: o.configFile,
    outDir: o.outDir,
    notes,
    ...(changedFunctions ? { changedFunctions } : {}),
    ...(history ? { history } : {}),
  });
  if (!budgetStop) await appendGateRecord(o).catch((error: Error) => progress.problem(`the gate history was not appended: ${error.message}`, 'warning'));
  await writeNoiseModel(gate.out, o, gate.setup, judged);
  // The report's copy of results/ holds the judged runs; a resume needs the rest too.
  for (const r of results) if (!judged.includes(r)) await writeResult(gate.out, r.run, r.result);
  progress.end();
  const minutes = ((gate.now() - gate.started) / 60_000).toFixed(1);
  const reusedNote = reusedRuns.length ? `, ${reusedRuns.length} run(s) reused` : '';
  io.out(
    `verdict: ${verdict.verdict.toUpperCase()}: ${verdict.summary} (${minutes} min${reusedNote}; ${verdict.decision.pairs} pair(s); report ${join(o.outDir, 'README.md')})`,
  );
  if (budgetStop) io.out(`  job budget reached: ${budgetStop}. A resume (--resume, same --out) will continue.`);
  for (const p of verdict.problems) io.out(`  - ${p}`);
  return EXIT_CODES[verdict.verdict];
}

/**
 * What runs at once: each run alone in sequential mode; in a duet, the baseline's and the
 * candidate's run of each test together, in the pair's counterbalanced order, so the side
 * that would have run first takes slot a and the sides swap slots between repeats.
 */
export function runSteps(runs: readonly ScheduledRun[], duet: boolean): Array<[ScheduledRun] | [ScheduledRun, ScheduledRun]> {
  if (!duet) return runs.map((run) => [run]);
  const steps: Array<[ScheduledRun, ScheduledRun]> = [];
  for (const test of [...new Set(runs.map((r) => r.test))]) {
    const both = runs.filter((r) => r.test === test);
    if (both.length !== 2) throw new Error(`a duet needs two runs of test "${test.name}", found ${both.length}`);
    steps.push([both[0] as ScheduledRun, both[1] as ScheduledRun]);
  }
  return steps;
}

/**
 * The noise model pooled with this gate's within-version spread, at <out>/noise-model.json
 * (and over the config's model with --update-noise-model). calibrate starts afresh, and
 * takes an A/A calibration's runs as one group (spreadSides).
 */
async function writeNoiseModel(
  dir: OutDir,
  o: RunOptions,
  setup: CompareSetup,
  judged: readonly { run: ScheduledRun; result: RunResult }[],
): Promise<string | undefined> {
  const base = o.calibrate || !setup.model?.file ? emptyModel(o.config) : setup.model.file;
  // A side under a CPU quota is another bench (CFS throttling adds its own latency): its
  // spread says nothing of the shipped profile's noise.
  const side = (role: string) => judged.filter((r) => r.run.side.role === role && r.run.side.cpuQuota === undefined).map((r) => r.result);
  // A duet's noise is its ratio, so its sides stay paired even in an A/A calibration.
  const sides = { baseline: side('baseline'), candidate: side('candidate') };
  const pooled = poolRuns(base, o.config, o.config.mode === 'duet' ? sides : spreadSides(sides, o.calibrate === true), {
    startSpeedFit: o.calibrate === true,
    measureCapacity: o.calibrate === true,
  });
  if (!pooled) return undefined;
  const text = `${JSON.stringify(pooled, null, 2)}\n`;
  await dir.writeFile('noise-model.json', text);
  const out = dir.path('noise-model.json');
  const inPlace = noiseModelPath(o.config, o.configFile);
  if (o.updateNoiseModel && inPlace) await writeFile(inPlace, text);
  return out;
}

function withoutNoiseModel(config: GateConfig): GateConfig {
  const { noiseModel: _unused, ...rest } = config;
  return rest;
}

/** Pairs whose every run has a result (a budget stop can leave one half done). */
function completePairs(results: readonly { run: ScheduledRun }[], o: RunOptions): number {
  let pair = 0;
  while (pairRuns(o, pair).every((run) => results.some((r) => runId(r.run) === runId(run)))) pair++;
  return pair;
}

/** The decision after `pairs` pairs, exactly as compare will make it. */
function decideSoFar(results: readonly { run: ScheduledRun; result: RunResult }[], pairs: number, o: RunOptions, setup: CompareSetup): VerdictFile {
  const upTo = results.filter((r) => r.run.repeat < pairs);
  const side = (role: string) => upTo.filter((r) => r.run.side.role === role).map((r) => r.result);
  return compareRuns(side('baseline'), side('candidate'), o.config.tolerances, setup).verdict;
}

/**
 * --resume: the completed, problem-free results already in <out>/results that match a
 * run this gate schedules (version, CPU quota, test, repeat). Anything else is run again.
 */
async function resumable(dir: string, o: RunOptions): Promise<Map<string, RunResult>> {
  const found = new Map<string, RunResult>();
  for (let pair = 0; pair < o.maxRepeats; pair++) {
    for (const run of pairRuns(o, pair)) {
      const file = join(dir, `${runId(run)}.json`);
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch {
        continue;
      }
      const result = parseRunResult(JSON.parse(text), file);
      const same =
        result.target.version === run.side.label &&
        result.target.cpuQuota === run.side.cpuQuota &&
        result.test.name === run.test.name &&
        result.test.type === run.test.type &&
        result.repeat === run.repeat;
      if (same && result.status === 'completed' && !result.problems.length) found.set(runId(run), result);
    }
  }
  return found;
}

/** --resume: the disturbed duets' runs an earlier invocation kept in <out>/results, in order, so the report still names them. */
async function disturbedBefore(dir: string, o: RunOptions): Promise<GateState['disturbed']> {
  const found: GateState['disturbed'] = [];
  for (let pair = 0; pair < o.maxRepeats; pair++) {
    for (const run of pairRuns(o, pair)) {
      for (let nth = 1; ; nth++) {
        const file = join(dir, disturbedFileName(runId(run), nth));
        const text = await readFile(file, 'utf8').catch(() => undefined);
        if (text === undefined) break;
        const result = parseRunResult(JSON.parse(text), file);
        if (result.disturbed) found.push({ run, result });
      }
    }
  }
  return found;
}

/**
 * The output directory, checked. A resume may find only the completed runs of earlier jobs
 * in <out>/results, restored without the rest of the directory: when every file there is
 * a run result, they are taken as loadgate's own.
 */
async function openOutDir(o: RunOptions): Promise<OutDir> {
  if (o.resume) {
    const top = await readdir(o.outDir).catch(() => [] as string[]);
    if (top.length === 1 && top[0] === 'results') {
      const names = await readdir(join(o.outDir, 'results')).catch(() => undefined);
      const results = names ? await Promise.all(names.map((n) => isRunResult(join(o.outDir, 'results', n)))) : [false];
      if (names && results.every(Boolean))
        await OutDir.adopt(
          o.outDir,
          names.map((n) => join('results', n)),
          ['results'],
        );
    }
  }
  return OutDir.open(o.outDir);
}

async function isRunResult(file: string): Promise<boolean> {
  if (!file.endsWith('.json')) return false;
  try {
    parseRunResult(JSON.parse(await readFile(file, 'utf8')), file);
    return true;
  } catch {
    return false;
  }
}

async function writeResult(out: OutDir, run: ScheduledRun, result: RunResult): Promise<void> {
  // Same name compareAndReport uses, so the report's copy replaces this one.
  await out.writeFile(join('results', `${runId(run)}.json`), `${JSON.stringify(result, null, 2)}\n`);
}

function summarize(r: RunResult): string {
  const parts = [`${r.status}`];
  if (r.supportedUsers !== undefined) parts.push(`supported users ${r.supportedUsers}${r.converged ? '' : ' (not converged)'}`);
  parts.push(`${r.totals.requests} requests, ${r.totals.errors} errors, ${r.totals.timeouts} timeouts`);
  if (r.generator?.cpuPercentMax !== undefined) parts.push(`load generator CPU max ${r.generator.cpuPercentMax}%`);
  if (r.outsideCpu?.percent !== undefined) parts.push(`other work on the bench's CPUs ${r.outsideCpu.percent}%`);
  return `result: ${parts.join(', ')}${r.problems.length ? `\n  ${r.problems.join('\n  ')}` : ''}`;
}

/**
 * The result of a run that never happened (the gate stopped first): crashed, with the
 * reason. `expand` fills in a bench's health-query placeholders: a CPU list string is
 * the local bench's target cores (kept for existing callers).
 */
export function notRun(
  run: ScheduledRun,
  fingerprint: BenchFingerprint,
  problems: string[],
  expand: string | ((query: string) => string),
  system: RunResult['target']['system'] = 'synapse',
): RunResult {
  const now = new Date().toISOString();
  const fill = typeof expand === 'string' ? (q: string) => expandQuery(q, expand) : expand;
  return runResultSchema.parse({
    schemaVersion: RUN_RESULT_SCHEMA_VERSION,
    provenance: { kind: 'measured', note: `${fingerprint.kind} bench run ${runId(run)} (not run)` },
    target: runTarget(system, run.side),
    test: testParams(run.test, fill),
    repeat: run.repeat,
    startedAt: now,
    finishedAt: now,
    status: 'crashed',
    problems,
    stableWindow: { startSec: 0, endSec: 0 },
    totals: { requests: 0, errors: 0, timeouts: 0 },
    api: [],
    store: [],
    series: {},
    bench: fingerprint,
    links: [],
  });
}
