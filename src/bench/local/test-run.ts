import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { GateConfig, TestSpec } from '../../config/schema.ts';
import type { ManagedProcess, ProcessSupervisor } from '../../util/process.ts';
import type { LocalBench } from './bench.ts';
import type { Progress } from '../progress.ts';
import { realClock } from '../../coordinator/index.ts';
import { startK6, resolveScenarioPath, type K6Run, type K6Stats } from '../../engine/k6/runner.ts';
import { startExporter, type Exporter } from '../../engine/k6/exporter.ts';
import { collectRun, type Collected } from '../../metrics/collect.ts';
import { createHealthSource } from '../../metrics/health.ts';
import type { PrometheusClient } from '../../metrics/prometheus.ts';
import { RATE_WINDOW, expandQuery, longestRangeSec } from '../../metrics/synapse-queries.ts';
import { SCRAPE_INTERVAL_SEC } from './prometheus-server.ts';
import { runResultSchema, RUN_RESULT_SCHEMA_VERSION, type BenchFingerprint, type RunResult } from '../../results/schema.ts';
import { DATABASE_NAME } from '../../target/synapse/config.ts';
import { restoreDataset, SEARCH_WORDS, type DatasetArtifacts } from '../../target/synapse/dataset.ts';
import type { SynapseInstall } from '../../target/synapse/install.ts';
import { startSynapse, type RunningSynapse } from '../../target/synapse/server.ts';
import { runId, runTarget, type ScheduledRun } from '../../run/options.ts';
import { driveTest, type CoordinatorOutcome } from '../../run/drive-test.ts';
import type { CapacityHints } from '../../run/capacity-hints.ts';
import { testParams } from '../../results/test-params.ts';
import { limitCpu } from './cpu-quota.ts';
import type { QuotaGroup } from './cpu-quota.ts';
import { startSpeedProbe, summarizeProbes, type ProbeSample } from './speed-probe.ts';
import type { Barrier } from '../../util/barrier.ts';

/**
 * One side of a duet: the slot it runs in, the share of the target CPUs each side is
 * measured against (the sides share the same cores), and the two meeting points that keep
 * both sides' load on together, from the first user to the end of the later side's test.
 */
export interface DuetPart {
  slot: 'a' | 'b';
  cpuShare: number;
  start: Barrier;
  end: Barrier;
}

/**
 * One test run: restore the dataset, start this side's Synapse, start k6 and its
 * exporter, let the coordinator drive the users, then read the numbers back from
 * Prometheus and assemble the run result. A crash of the target or of a bench component
 * aborts the coordinator at once and makes the result `crashed`, naming the component and
 * its log; a saturated load generator makes it `invalid`.
 */
export interface RunContext {
  supervisor: ProcessSupervisor;
  bench: LocalBench;
  prometheus: PrometheusClient;
  progress: Progress;
  config: GateConfig;
  configDir: string;
  k6Path: string;
  dataset: DatasetArtifacts;
  installs: ReadonlyMap<string, SynapseInstall>;
  fingerprint: BenchFingerprint;
  /** Per-run logs go to `<logDir>/<run id>/`. */
  logDir: string;
  registrationSharedSecret: string;
  /** Aborted when the whole gate must stop (SIGINT, a bench component died). */
  signal: AbortSignal;
  /** When the previous load on the bench ended (ms since epoch), for the settle period. */
  state: { lastLoadEndMs: number };
  /** The gate's warm-start hints. */
  hints: CapacityHints;
}

/**
 * Seconds the bench must be quiet before a run starts: the previous run's samples must
 * have left every rate window, or the first health evaluations (and the first graph
 * points) would judge this run on the last one's load.
 */
export function settleSeconds(test: TestSpec): number {
  const health = test.type === 'unbounded' ? test.health.filter((h) => h.enabled).map((h) => h.query) : [];
  return Math.min(300, Math.max(longestRangeSec([...health, `[${RATE_WINDOW}]`]), 0) + SCRAPE_INTERVAL_SEC);
}

/** Aborts `controller` when the target, k6 or a bench component dies, with a message naming it and its log. */
function watchForCrashes(ctx: RunContext, procs: () => Array<ManagedProcess | undefined>, controller: AbortController): () => void {
  const timer = setInterval(() => {
    if (controller.signal.aborted) return;
    const dead = procs().find((p) => p && !p.running) ?? ctx.bench.crashed();
    if (dead) controller.abort(new Error(dead.describeExit()));
  }, 1000);
  const onGate = () => controller.abort(ctx.signal.reason);
  ctx.signal.addEventListener('abort', onGate, { once: true });
  return () => {
    clearInterval(timer);
    ctx.signal.removeEventListener('abort', onGate);
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function executeRun(ctx: RunContext, run: ScheduledRun, duet?: DuetPart): Promise<RunResult> {
  const { bench, progress, config } = ctx;
  // A duet side is a machine with its share of the target cores, as a CPU quota is.
  const share = (duet?.cpuShare ?? 1) * (run.side.cpuQuota ?? 1);
  const party = duet ? `slot ${duet.slot}` : '';
  const id = runId(run);
  const runLogDir = join(ctx.logDir, id);
  const workDir = join(bench.dataRoot, 'runs', id);
  await mkdir(runLogDir, { recursive: true });
  await mkdir(workDir, { recursive: true });
  const install = ctx.installs.get(run.side.version);
  if (!install) throw new Error(`no Synapse install for ${run.side.version}`);
  const startedAt = new Date();
  const problems: string[] = [];
  let status: RunResult['status'] = 'completed';
  const local = config.bench.local;

  let synapse: RunningSynapse | undefined;
  let k6: K6Run | undefined;
  let exporter: Exporter | undefined;
  let coordinator: CoordinatorOutcome | undefined;
  let runStart = Date.now() / 1000;
  let runEnd = runStart;
  let stats: K6Stats | undefined;
  const controller = new AbortController();
  let stopWatching = () => {};
  let quota: QuotaGroup | undefined;
  let probe: ReturnType<typeof startSpeedProbe> | undefined;
  let probeSamples: ProbeSample[] = [];

  try {
    progress.info(`restoring the dataset into a fresh "${DATABASE_NAME}" database`);
    const signingKey = join(workDir, 'signing.key');
    await restoreDataset(bench, ctx.dataset, signingKey);

    progress.info(`${duet ? `slot ${duet.slot}: ` : ''}starting synapse ${run.side.version} on cores ${bench.targetCpus}${run.side.sideOverrides.length ? ` with ${run.side.sideOverrides.map((o) => o.text).join(', ')}` : ''}`);
    synapse = await startSynapse({
      supervisor: ctx.supervisor,
      install,
      dir: join(workDir, 'synapse'),
      logFile: join(runLogDir, 'synapse.log'),
      cpus: bench.targetCpus,
      config: {
        clientPort: bench.ports.synapseClient,
        metricsPort: bench.ports.synapseMetrics,
        publicBaseUrl: bench.nginx.url,
        database: { host: bench.postgres.host, port: bench.postgres.port, user: bench.postgres.user, password: bench.postgres.password, name: DATABASE_NAME },
        signingKeyPath: signingKey,
        registrationSharedSecret: ctx.registrationSharedSecret,
        overrides: run.side.overrides,
      },
    });
    bench.processExporter.setPid(synapse.process.pid);
    if (run.side.cpuQuota !== undefined) {
      if (synapse.process.pid === undefined) throw new Error('synapse has no pid, so its CPU quota cannot be set');
      quota = await limitCpu(synapse.process.pid, share, bench.targetCpus, run.side.role, progress);
    }
    stopWatching = watchForCrashes(ctx, () => [synapse?.process, k6?.process], controller);

    const test = run.test;
    const maxUsers = test.type === 'bounded' ? test.users : test.maxUsers;
    const maxDurationSec = (test.type === 'bounded' ? test.duration : test.maxDuration) + 120;
    progress.info(`starting k6 (${maxUsers} users max) on cores ${bench.engineCpus}`);
    k6 = await startK6({
      supervisor: ctx.supervisor,
      k6Path: ctx.k6Path,
      runDir: runLogDir,
      baseUrl: bench.nginx.url,
      usersFile: ctx.dataset.usersFile,
      maxUsers,
      initialUsers: 0,
      idle: config.engine.idle,
      ...(config.engine.actions ? { actions: config.engine.actions } : {}),
      cpus: bench.engineCpus,
      apiPort: bench.ports.k6Api,
      scenario: resolveScenarioPath(config.engine.scenario, ctx.configDir),
      maxDurationSec,
      env: { LOADGATE_SEARCH_TERMS: SEARCH_WORDS.join(',') },
    });
    exporter = await startExporter({ k6ApiPort: bench.ports.k6Api, k6Pid: k6.process.pid, port: bench.ports.k6Exporter });

    const settleUntil = ctx.state.lastLoadEndMs + settleSeconds(test) * 1000;
    while (Date.now() < settleUntil && !controller.signal.aborted) {
      progress.status({ version: run.side.label, repeat: run.repeat, detail: 'letting the previous run leave the rate windows', leftSec: (settleUntil - Date.now()) / 1000 });
      await sleep(Math.min(1000, settleUntil - Date.now()));
    }
    if (controller.signal.aborted) throw new Error(`stopped before the test began: ${String(controller.signal.reason?.message ?? controller.signal.reason)}`);
    if (duet) {
      progress.status({ version: run.side.label, repeat: run.repeat, detail: `${party}: waiting for the other side` });
      await duet.start.arrive(party);
    }

    runStart = Date.now() / 1000;
    // A duet needs no probe: the machine's speed moves both sides alike.
    if (!duet) probe = startSpeedProbe({ python: install.python, cpus: bench.targetCpus });
    const driven = await driveTest({
      test,
      users: k6,
      health: createHealthSource(ctx.prometheus, bench.targetCpus, share),
      clock: realClock,
      signal: controller.signal,
      progress,
      label: { version: run.side.label, repeat: run.repeat },
      side: run.side.role,
      hints: ctx.hints,
    });
    coordinator = driven.coordinator;
    problems.push(...driven.problems);
    if (driven.noData) status = 'crashed';
    runEnd = Date.now() / 1000;
    if (duet) {
      // Keep this side's load on until the other side's test ends too: its measured window
      // must not see a machine this side has left.
      if (!duet.end.isOpen) progress.info(`${party}: test done, holding the load until the other side's ends`);
      await duet.end.arrive(party);
    }
    if (controller.signal.aborted) {
      const reason = controller.signal.reason instanceof Error ? controller.signal.reason.message : String(controller.signal.reason);
      status = ctx.signal.aborted && !ctx.bench.crashed() && synapse.process.running ? 'aborted' : 'crashed';
      problems.push(status === 'crashed' ? `a component stopped during the run: ${reason}` : `the run was stopped: ${reason}`);
    } else {
      // Keep the load on for one more scrape, so Prometheus holds samples up to runEnd.
      await sleep((SCRAPE_INTERVAL_SEC + 1) * 1000);
    }
    stats = await k6.stats().catch((error: Error) => {
      problems.push(`could not read k6's own statistics: ${error.message}`);
      return undefined;
    });
  } catch (error) {
    status = 'crashed';
    runEnd = Date.now() / 1000;
    problems.push((error as Error).message);
    progress.problem(`${id}: ${(error as Error).message}`);
  } finally {
    // Stop probing now, but wait for a probe in flight only after the load is down.
    const probeStopped = probe?.stop();
    duet?.start.leave(party);
    duet?.end.leave(party);
    stopWatching();
    await exporter?.close().catch(() => {});
    await k6?.stop().catch(() => {});
    if (synapse) {
      // A crash seen only now (e.g. during the last scrape) still makes the run crashed.
      if (!synapse.process.running && status === 'completed') {
        status = 'crashed';
        problems.push(synapse.process.describeExit());
      }
      await synapse.stop().catch(() => {});
    }
    await quota?.release();
    if (probeStopped) {
      const probed = await probeStopped;
      probeSamples = probed.samples;
      for (const failure of probed.failures) progress.info(`speed probe: ${failure}`);
    }
    bench.processExporter.setPid(undefined);
    // The load ends when k6 and its exporter are gone: their last samples are older than this.
    ctx.state.lastLoadEndMs = Date.now();
  }

  // Which part of the run is measured.
  let stable = { startSec: 0, endSec: 0 };
  let supportedUsers: number | undefined;
  let converged: boolean | undefined;
  if (coordinator?.kind === 'bounded') stable = coordinator.result.window;
  if (coordinator?.kind === 'unbounded') {
    stable = coordinator.result.window;
    supportedUsers = coordinator.result.supportedUsers;
    converged = coordinator.result.converged;
  }
  stable = { startSec: Math.min(stable.startSec, runEnd - runStart), endSec: Math.min(stable.endSec, runEnd - runStart) };
  // The machine's speed while the measured window ran (the probe started with the run).
  const speed = summarizeProbes(probeSamples, stable.endSec > stable.startSec ? stable : undefined);

  let collected: Collected | undefined;
  if (coordinator && stable.endSec > stable.startSec) {
    collected = await collectRun(ctx.prometheus, { runStart, runEnd, stableStart: runStart + stable.startSec, stableEnd: runStart + stable.endSec }, bench.targetCpus, bench.engineCpus, share);
    problems.push(...collected.problems);
    if (collected.missingEssential && status === 'completed') status = 'crashed';
  }

  // The load generator must not be the bottleneck. A duet's two generators share the
  // engine cores, so each gets its share of the limit.
  const cpuMax = Math.max(stats?.engineCpuPercentMax ?? 0, collected?.engineCpuPercentMax ?? 0);
  const engineLimit = local.maxEngineCpuPercent * (duet?.cpuShare ?? 1);
  const dropped = stats?.droppedIterations ?? 0;
  const saturated = cpuMax > engineLimit || dropped > 0;
  if (saturated && status === 'completed') {
    status = 'invalid';
    problems.push(
      cpuMax > engineLimit
        ? `the load generator (k6) used up to ${cpuMax.toFixed(0)}% of its cores (limit bench.local.maxEngineCpuPercent = ${local.maxEngineCpuPercent}%${duet ? `, of which each side of a duet has ${Math.round(duet.cpuShare * 100)} %` : ''}): the bench, not the target, was the bottleneck`
        : `k6 dropped ${dropped} iterations: the load generator could not keep up`,
    );
  }
  if (stats && stats.scriptErrors > 0 && status === 'completed') {
    status = 'invalid';
    problems.push(`the k6 scenario threw ${stats.scriptErrors} errors; see ${k6?.logFile ?? runLogDir}`);
  }

  const result = {
    schemaVersion: RUN_RESULT_SCHEMA_VERSION,
    provenance: {
      kind: 'measured',
      note: `local bench run ${id}${duet ? ` (duet, slot ${duet.slot})` : ''}${run.side.sideOverrides.length ? `; ${run.side.role} config overrides: ${run.side.sideOverrides.map((o) => o.text).join(', ')}` : ''}`,
    },
    target: runTarget('synapse', run.side),
    // Both sides record the same queries: a CPU quota is a property of the side, not of the test.
    test: testParams(run.test, (q) => expandQuery(q, bench.targetCpus, duet?.cpuShare ?? 1)),
    repeat: run.repeat,
    ...(duet ? { duet: { slot: duet.slot, cpuShare: duet.cpuShare } } : {}),
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    status,
    problems,
    ...(supportedUsers !== undefined ? { supportedUsers } : {}),
    ...(converged !== undefined ? { converged } : {}),
    ...(coordinator?.kind === 'unbounded' ? { capacity: coordinator.result.capacity } : {}),
    ...(coordinator?.kind === 'bounded' && coordinator.result.earlyStop ? { earlyStop: coordinator.result.earlyStop } : {}),
    stableWindow: stable,
    totals: collected?.totals ?? { requests: stats?.requests ?? 0, errors: stats?.errors ?? 0, timeouts: stats?.timeouts ?? 0 },
    api: collected?.api ?? [],
    store: collected?.store ?? [],
    series: collected?.series ?? {},
    ...(speed ? { speedProbe: speed } : {}),
    generator: { ...(cpuMax > 0 ? { cpuPercentMax: Math.round(cpuMax * 10) / 10 } : {}), ...(stats ? { droppedIterations: dropped } : {}), saturated },
    bench: { ...ctx.fingerprint, versions: { ...ctx.fingerprint.versions, target: `Synapse ${install.version}` } },
    links: [],
  };
  return runResultSchema.parse(result);
}
