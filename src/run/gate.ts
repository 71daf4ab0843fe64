import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Progress } from '../bench/progress.ts';
import { AwsGateBench } from '../bench/aws/gate-bench.ts';
import type { CliIO } from '../cli/io.ts';
import { compareAndReport } from '../compare/index.ts';
import { EXIT_CODES, type VerdictFile } from '../compare/verdict-schema.ts';
import { runResultSchema, RUN_RESULT_SCHEMA_VERSION, type BenchFingerprint, type RunResult } from '../results/schema.ts';
import { expandQuery } from '../metrics/synapse-queries.ts';
import type { GateBench } from './gate-bench.ts';
import { LocalGateBench } from '../bench/local/gate-bench.ts';
import { testParams } from '../results/test-params.ts';
import { runId, schedule, type RunOptions, type ScheduledRun } from './options.ts';

/**
 * `loadgate run`, start to verdict, on any bench: set-up → the runs, interleaved
 * (baseline, candidate, … per test and repeat) → tear-down → compare and report → exit
 * code of the verdict. Runs that never happened are written as crashed results that say
 * why, so the verdict is inconclusive rather than a pass.
 */
export async function runGate(o: RunOptions, io: CliIO): Promise<number> {
  const progress = new Progress(io.out);
  const logDir = join(o.outDir, 'logs');
  const bench: GateBench = o.aws ? await AwsGateBench.create(o, progress, logDir) : new LocalGateBench(o, progress, logDir);
  return runGateOn(bench, o, io, progress);
}

/** The gate loop, shared by every bench. */
export async function runGateOn(bench: GateBench, o: RunOptions, io: CliIO, progress = new Progress(io.out)): Promise<number> {
  const gateAbort = new AbortController();
  bench.handleSignals((signal) => gateAbort.abort(new Error(`received ${signal}`)));
  const logDir = join(o.outDir, 'logs');
  await mkdir(logDir, { recursive: true });
  const resultsDir = join(o.outDir, 'results');
  await mkdir(resultsDir, { recursive: true });
  const started = Date.now();
  const plan = schedule(o);
  const results: { run: ScheduledRun; result: RunResult }[] = [];
  const fatal: string[] = [];

  try {
    await bench.setUp(gateAbort.signal);
    for (const [i, run] of plan.entries()) {
      if (gateAbort.signal.aborted) break;
      progress.begin(`run ${i + 1}/${plan.length}: ${run.side.role} ${run.side.label}, test "${run.test.name}", repeat ${run.repeat + 1}`);
      const result = await bench.execute(run);
      await writeResult(resultsDir, run, result);
      results.push({ run, result });
      progress.info(summarize(result));
      const stop = bench.stopReason();
      if (stop) {
        fatal.push(stop);
        break;
      }
    }
  } catch (error) {
    fatal.push((error as Error).message);
    progress.problem((error as Error).message);
  } finally {
    progress.begin('clean-up');
    const problems = await bench.tearDown().catch((error: Error) => [`tear-down failed: ${error.message}`]);
    for (const p of problems) progress.problem(p, 'warning');
    progress.info(bench.tornDownMessage());
  }
  if (gateAbort.signal.aborted && !fatal.length) fatal.push(String((gateAbort.signal.reason as Error | undefined)?.message ?? 'the gate was stopped'));

  // Runs that never happened are reported as crashed, so the verdict says why.
  for (const run of plan) {
    if (results.some((r) => r.run === run)) continue;
    const result = notRun(run, bench.fingerprint(), fatal.length ? fatal : ['not run: the gate stopped before this run'], (q) => bench.expandHealthQuery(q), bench.system);
    await writeResult(resultsDir, run, result);
    results.push({ run, result });
  }

  progress.begin('compare and report');
  const verdict: VerdictFile = await compareAndReport({
    baseline: results.filter((r) => r.run.side.role === 'baseline').map((r) => r.result),
    candidate: results.filter((r) => r.run.side.role === 'candidate').map((r) => r.result),
    config: o.config,
    configFile: o.configFile,
    outDir: o.outDir,
    notes: bench.notes(fatal),
  });
  progress.end();
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  io.out(`verdict: ${verdict.verdict.toUpperCase()}: ${verdict.summary} (${minutes} min; report ${join(o.outDir, 'README.md')})`);
  for (const p of verdict.problems) io.out(`  - ${p}`);
  return EXIT_CODES[verdict.verdict];
}

async function writeResult(dir: string, run: ScheduledRun, result: RunResult): Promise<void> {
  // Same name compareAndReport uses, so the report's copy replaces this one.
  await writeFile(join(dir, `${runId(run)}.json`), `${JSON.stringify(result, null, 2)}\n`);
}

function summarize(r: RunResult): string {
  const parts = [`${r.status}`];
  if (r.supportedUsers !== undefined) parts.push(`supported users ${r.supportedUsers}${r.converged ? '' : ' (not converged)'}`);
  parts.push(`${r.totals.requests} requests, ${r.totals.errors} errors, ${r.totals.timeouts} timeouts`);
  if (r.generator?.cpuPercentMax !== undefined) parts.push(`load generator CPU max ${r.generator.cpuPercentMax}%`);
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
  system: 'synapse' | 'mattermost' = 'synapse',
): RunResult {
  const now = new Date().toISOString();
  const fill = typeof expand === 'string' ? (q: string) => expandQuery(q, expand) : expand;
  return runResultSchema.parse({
    schemaVersion: RUN_RESULT_SCHEMA_VERSION,
    provenance: { kind: 'measured', note: `${fingerprint.kind} bench run ${runId(run)} (not run)` },
    target: { system, version: run.side.label },
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
