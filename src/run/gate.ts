import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ProcessSupervisor } from '../bench/process.ts';
import { Progress } from '../bench/progress.ts';
import { startLocalBench, type LocalBench } from '../bench/local/bench.ts';
import { hostFingerprint } from '../bench/local/fingerprint.ts';
import type { CliIO } from '../cli/io.ts';
import { compareAndReport } from '../compare/index.ts';
import { EXIT_CODES, type VerdictFile } from '../compare/verdict-schema.ts';
import { ensureK6, k6Version } from '../engine/k6/install.ts';
import { PrometheusClient } from '../metrics/prometheus.ts';
import { runResultSchema, RUN_RESULT_SCHEMA_VERSION, type BenchFingerprint, type RunResult } from '../results/schema.ts';
import { buildDataset, datasetKey, describeDataset, findDataset, type DatasetArtifacts } from '../target/synapse/dataset.ts';
import { ensureSynapse, type SynapseInstall } from '../target/synapse/install.ts';
import { SYNAPSE_PACKAGE } from '../config/defaults/synapse.ts';
import { expandQuery } from '../metrics/synapse-queries.ts';
import { schedule, type RunOptions, type ScheduledRun } from './options.ts';
import { executeRun, runId } from './test-run.ts';

/**
 * `loadgate run` on the local bench, start to verdict:
 *   set-up (k6 and each Synapse version, cached) → bench (PostgreSQL, nginx, Prometheus,
 *   node_exporter) → dataset (cached dump, built with the older version) → the runs,
 *   interleaved → compare and report → exit code of the verdict.
 * Every process is stopped and every data dir removed (unless --keep) on success, on
 * failure and on SIGINT/SIGTERM; logs stay in <out>/logs.
 */
export async function runGate(o: RunOptions, io: CliIO): Promise<number> {
  const progress = new Progress(io.out);
  const supervisor = new ProcessSupervisor({ watchdog: true });
  const gateAbort = new AbortController();
  supervisor.handleSignals((signal) => {
    gateAbort.abort(new Error(`received ${signal}`));
    progress.problem(`received ${signal}: stopping every bench process`);
  });
  const logDir = join(o.outDir, 'logs');
  await mkdir(logDir, { recursive: true });
  const resultsDir = join(o.outDir, 'results');
  await mkdir(resultsDir, { recursive: true });
  const started = Date.now();
  const plan = schedule(o);
  const results: { run: ScheduledRun; result: RunResult }[] = [];
  const host = await hostFingerprint();
  let fingerprint: BenchFingerprint = { kind: 'local', host, versions: {} };
  const fatal: string[] = [];

  try {
    progress.begin('set-up: k6 and Synapse');
    const k6Path = await heartbeat(progress, 'k6', ensureK6(o.config.engine.version, o.cacheDir, { onProgress: (l) => progress.info(l) }));
    const installs = new Map<string, SynapseInstall>();
    for (const version of new Set([o.baseline.version, o.candidate.version, o.datasetVersion])) {
      installs.set(
        version,
        await heartbeat(progress, `Synapse ${version}`, ensureSynapse({
          version,
          cacheDir: o.cacheDir,
          packageName: o.config.target.package ?? SYNAPSE_PACKAGE,
          onStep: (l) => progress.info(l),
          logFile: join(logDir, `pip-${version}.log`),
        })),
      );
    }
    progress.info(`k6 ${k6Path}; Synapse ${[...installs.keys()].join(', ')} in ${o.cacheDir}`);

    progress.begin('bench: PostgreSQL, nginx, Prometheus, node_exporter on 127.0.0.1');
    const bench: LocalBench = await startLocalBench({
      supervisor,
      logDir,
      targetCpus: o.config.bench.local.targetCpus,
      engineCpus: o.config.bench.local.engineCpus,
      keep: o.keep,
      onStep: (l) => progress.info(`starting ${l}`),
    });
    if (o.keep) progress.info(`bench data dirs (kept): ${bench.dataRoot}`);

    progress.begin('dataset');
    const size = o.config.bench.local.dataset;
    const dsInstall = installs.get(o.datasetVersion) as SynapseInstall;
    const baseOverrides = o.baseline.overrides.slice(0, o.baseline.overrides.length - o.baseline.sideOverrides.length);
    const key = datasetKey(size, o.datasetVersion, baseOverrides);
    const state = { lastLoadEndMs: 0 };
    let dataset: DatasetArtifacts | undefined = await findDataset(o.cacheDir, key);
    if (dataset) progress.info(`cached dataset ${dataset.dir}`);
    else {
      progress.info(`building the dataset with Synapse ${o.datasetVersion}, the older version (schemas migrate forward only); cached afterwards`);
      dataset = await buildDataset({
        supervisor, bench, install: dsInstall, cacheDir: o.cacheDir, size, overrides: baseOverrides,
        workDir: join(bench.dataRoot, 'seed'), logFile: join(logDir, 'dataset-synapse.log'),
        onProgress: (l) => progress.info(l),
      });
      progress.info(`dataset built in ${dataset.meta.buildSeconds}s: ${dataset.dir}`);
      state.lastLoadEndMs = Date.now();
    }
    progress.info(describeDataset(dataset.meta));

    const [componentVersions, k6Label] = await Promise.all([bench.versions(), k6Version(k6Path).catch(() => o.config.engine.version)]);
    fingerprint = { kind: 'local', host, versions: { ...componentVersions, engine: `k6 ${k6Label}` }, dataset: describeDataset(dataset.meta) };

    const ctx = {
      supervisor, bench, progress, config: o.config, configDir: dirname(o.configFile), k6Path, dataset, installs, fingerprint, logDir,
      prometheus: new PrometheusClient(bench.prometheus.url),
      registrationSharedSecret: randomBytes(24).toString('hex'),
      signal: gateAbort.signal,
      state,
    };
    for (const [i, run] of plan.entries()) {
      if (gateAbort.signal.aborted) break;
      progress.begin(`run ${i + 1}/${plan.length}: ${run.side.role} ${run.side.label}, test "${run.test.name}", repeat ${run.repeat + 1}`);
      const result = await executeRun(ctx, run);
      await writeResult(resultsDir, run, result);
      results.push({ run, result });
      progress.info(summarize(result));
      // A bench component (not the target) that died takes the bench with it: stop here.
      const dead = bench.crashed();
      if (dead) {
        fatal.push(`the bench stopped: ${dead.describeExit()}`);
        break;
      }
    }
  } catch (error) {
    fatal.push((error as Error).message);
    progress.problem((error as Error).message);
  } finally {
    progress.begin('clean-up');
    const problems = await supervisor.stopAll();
    supervisor.dispose();
    for (const p of problems) progress.problem(p, 'warning');
    progress.info(`every bench process stopped${o.keep ? '' : ', data dirs removed'}; logs in ${logDir}`);
  }

  // Runs that never happened are reported as crashed, so the verdict says why.
  for (const run of plan) {
    if (results.some((r) => r.run === run)) continue;
    const result = notRun(run, fingerprint, fatal.length ? fatal : ['not run: the gate stopped before this run'], o.config.bench.local.targetCpus);
    await writeResult(resultsDir, run, result);
    results.push({ run, result });
  }

  progress.begin('compare and report');
  const verdict: VerdictFile = await compareAndReport({
    baseline: results.filter((r) => r.run.side.role === 'baseline').map((r) => r.result),
    candidate: results.filter((r) => r.run.side.role === 'candidate').map((r) => r.result),
    config: o.config,
    outDir: o.outDir,
    notes: reportNotes(o, fingerprint, fatal),
  });
  progress.end();
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  io.out(`verdict: ${verdict.verdict.toUpperCase()}: ${verdict.summary} (${minutes} min; report ${join(o.outDir, 'README.md')})`);
  for (const p of verdict.problems) io.out(`  - ${p}`);
  return EXIT_CODES[verdict.verdict];
}

/** A "still working" line every 15 s while a slow, silent step (a build, pip) runs. */
async function heartbeat<T>(progress: Progress, what: string, work: Promise<T>): Promise<T> {
  const started = Date.now();
  const timer = setInterval(() => progress.info(`${what}: still installing (${Math.round((Date.now() - started) / 1000)}s)`), 15_000);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}

async function writeResult(dir: string, run: ScheduledRun, result: RunResult): Promise<void> {
  // Same name compareAndReport uses, so the report's copy replaces this one.
  await writeFile(join(dir, `${runId(run)}.json`), `${JSON.stringify(result, null, 2)}\n`);
}

function summarize(r: RunResult): string {
  const parts = [`${r.status}`];
  if (r.supportedUsers !== undefined) parts.push(`supported users ${r.supportedUsers}${r.converged ? '' : ' (not converged)'}`);
  parts.push(`${r.totals.requests} requests, ${r.totals.errors} errors, ${r.totals.timeouts} timeouts`);
  if (r.generator?.cpuPercentMax !== undefined) parts.push(`k6 CPU max ${r.generator.cpuPercentMax}%`);
  return `result: ${parts.join(', ')}${r.problems.length ? `\n  ${r.problems.join('\n  ')}` : ''}`;
}

/** The result of a run that never happened (the gate stopped first): crashed, with the reason. */
export function notRun(run: ScheduledRun, fingerprint: BenchFingerprint, problems: string[], targetCpus: string): RunResult {
  const now = new Date().toISOString();
  const t = run.test;
  return runResultSchema.parse({
    schemaVersion: RUN_RESULT_SCHEMA_VERSION,
    provenance: { kind: 'measured', note: `local bench run ${runId(run)} (not run)` },
    target: { system: 'synapse', version: run.side.label },
    test:
      t.type === 'bounded'
        ? { type: 'bounded', name: t.name, users: t.users, rampUpSec: t.rampUp, durationSec: t.duration }
        : {
            type: 'unbounded', name: t.name, maxUsers: t.maxUsers, usersIncrement: t.usersIncrement, usersDecrement: t.usersDecrement,
            restSec: t.restTime, stabilityWindowSec: t.stabilityWindow, maxDurationSec: t.maxDuration,
            health: t.health.filter((h) => h.enabled).map((h) => ({ name: h.name, query: expandQuery(h.query, targetCpus), threshold: h.threshold })),
          },
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

function reportNotes(o: RunOptions, fp: BenchFingerprint, fatal: string[]): string[] {
  const notes = [
    `Local bench: Synapse behind nginx, PostgreSQL, Prometheus, node_exporter and k6 on 127.0.0.1; target (Synapse, PostgreSQL, nginx) on cores ${o.config.bench.local.targetCpus}, load engine and monitoring on cores ${o.config.bench.local.engineCpus}.`,
  ];
  if (fp.dataset) notes.push(`${fp.dataset}; restored into a fresh database before every run.`);
  for (const side of [o.baseline, o.candidate]) {
    if (side.sideOverrides.length) notes.push(`${side.role} ${side.label} ran with config overrides: ${side.sideOverrides.map((x) => `\`${x.text}\``).join(', ')}.`);
  }
  notes.push('Store p99 is the p99 of single SQL statements (synapse_storage_query_time); per-method store p99 is the 99th percentile of the method\'s 15 s means, as Synapse exports no per-transaction histogram. "Heap in use" is the Synapse process\'s resident memory and "threads" its OS threads.');
  for (const f of fatal) notes.push(`The gate stopped early: ${f}`);
  return notes;
}
