import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { GateConfig } from '../../config/schema.ts';
import type { ManagedProcess, ProcessSupervisor } from '../../util/process.ts';
import type { LocalBench } from './bench.ts';
import type { Progress } from '../progress.ts';
import { realClock } from '../../coordinator/index.ts';
import { startK6, resolveScenarioPath, type K6Run } from '../../engine/k6/runner.ts';
import { startExporter, type Exporter } from '../../engine/k6/exporter.ts';
import type { ChatServer, LocalDataset, LocalInstall, LocalServer, Profiler, RunningServer, SlotProfile } from '../../chat-servers/chat-server.ts';
import { createHealthSource } from '../../metrics/health.ts';
import type { PrometheusClient } from '../../metrics/prometheus.ts';
import { expandQuery } from '../../metrics/target-cpus.ts';
import { SCRAPE_INTERVAL_SEC } from './prometheus-server.ts';
import type { BenchFingerprint, RunResult } from '../../results/schema.ts';
import { runId, type ScheduledRun } from '../gate-plan.ts';
import { executeRun } from '../run-sequence.ts';
import type { CollectWindow, DuetPart, GeneratorRule, RunAttempt, RunStage, StartedLoad } from '../run-stage.ts';
import { limitCpu, type QuotaGroup } from './cpu-quota.ts';
import { startSpeedProbe, summarizeProbes, type ProbeSample } from './speed-probe.ts';
import { measureOutsideCpu, type OutsideCpu } from './outside-cpu.ts';

/** A chat server the local bench can run: one with the `local` capability. */
export type LocalChatServer = ChatServer & { local: LocalServer };

/** What one slot of the local bench runs with: its own bench processes, the shared installs and dataset. */
export interface RunContext {
  server: LocalChatServer;
  supervisor: ProcessSupervisor;
  bench: LocalBench;
  prometheus: PrometheusClient;
  progress: Progress;
  config: GateConfig;
  configDir: string;
  k6Path: string;
  dataset: LocalDataset;
  /** By LocalServer.installKey. */
  installs: ReadonlyMap<string, LocalInstall>;
  fingerprint: BenchFingerprint;
  /** Per-run logs go to `<logDir>/<run id>/`. */
  logDir: string;
  /** Aborted when the whole gate must stop (SIGINT, a bench component died). */
  signal: AbortSignal;
  /** When the previous load on the bench ended (ms since epoch), for the settle period. */
  state: { lastLoadEndMs: number };
  /** The gate's warm-start hints. */
  hints: RunStage['hints'];
  /** The server's profiler when the config says `profile: on`. */
  profiler?: Profiler;
}

/** The local Prometheus' scrape interval and the server's collected series' rate window. */
export function localTiming(server: LocalServer): { scrapeIntervalSec: number; rateWindowSec: number } {
  return { scrapeIntervalSec: SCRAPE_INTERVAL_SEC, rateWindowSec: server.metrics.rateWindowSec };
}

/** One test run on a slot of the local bench, through the shared run sequence. */
export function executeLocalRun(ctx: RunContext, run: ScheduledRun, duet?: DuetPart): Promise<RunResult> {
  return executeRun(localStage(ctx), run, duet);
}

/** One slot of the local bench as the shared run sequence (src/bench/run-sequence.ts) drives it. */
function localStage(ctx: RunContext): RunStage {
  return {
    system: ctx.server.system,
    progress: ctx.progress,
    signal: ctx.signal,
    clock: realClock,
    hints: ctx.hints,
    state: ctx.state,
    ...localTiming(ctx.server.local),
    attempt: (run, duet) => new LocalAttempt(ctx, run, duet),
  };
}

/**
 * One test run on a local bench slot: start this side's server on the restored dataset
 * (under its CPU quota), start k6 and its exporter; a dead server, k6 or bench component
 * aborts the run. Outside a duet a speed probe runs beside the test.
 */
class LocalAttempt implements RunAttempt {
  readonly test;
  readonly generator: GeneratorRule;
  private readonly id: string;
  private readonly runLogDir: string;
  private readonly install: LocalInstall | undefined;
  /** A duet side is a machine with its share of the target cores, as a CPU quota is. */
  private readonly share: number;
  private server?: RunningServer;
  private k6?: K6Run;
  private exporter?: Exporter;
  private quota?: QuotaGroup;
  private probe?: ReturnType<typeof startSpeedProbe>;
  private probeSamples: ProbeSample[] = [];
  private profiler?: SlotProfile;
  private watcher?: ReturnType<typeof setInterval>;

  constructor(
    private readonly ctx: RunContext,
    private readonly run: ScheduledRun,
    private readonly duet: DuetPart | undefined,
  ) {
    this.test = run.test;
    this.id = runId(run);
    this.runLogDir = join(ctx.logDir, this.id);
    this.install = ctx.installs.get(ctx.server.local.installKey(run.side));
    this.share = (duet?.cpuShare ?? 1) * (run.side.cpuQuota ?? 1);
    this.generator = localGeneratorRule(ctx.config.bench.local.maxEngineCpuPercent, duet?.cpuShare, () => this.k6?.logFile ?? this.runLogDir);
  }

  expandQuery(query: string): string {
    // Both sides record the same queries: a CPU quota is a property of the side, not of the test.
    return expandQuery(query, this.ctx.bench.targetCpus, this.duet?.cpuShare ?? 1);
  }

  async start(abort: (reason: Error) => void): Promise<StartedLoad> {
    const { ctx, run } = this;
    const workDir = join(ctx.bench.dataRoot, 'runs', this.id);
    await mkdir(this.runLogDir, { recursive: true });
    await mkdir(workDir, { recursive: true });
    if (!this.install) throw new Error(`no ${ctx.server.displayName} install for ${run.side.version}`);
    this.server = await this.startServer(this.install, workDir);
    this.watch(abort);
    const maxUsers = this.test.type === 'bounded' ? this.test.users : this.test.maxUsers;
    const maxDurationSec = (this.test.type === 'bounded' ? this.test.duration : this.test.maxDuration) + 120;
    ctx.progress.info(`starting k6 (${maxUsers} users max) on cores ${ctx.bench.engineCpus}`);
    const { config } = ctx;
    const k6 = await startK6({
      supervisor: ctx.supervisor,
      k6Path: ctx.k6Path,
      runDir: this.runLogDir,
      baseUrl: ctx.bench.nginx.url,
      usersFile: ctx.dataset.usersFile,
      maxUsers,
      initialUsers: 0,
      idle: config.engine.idle,
      ...(config.engine.actions ? { actions: config.engine.actions } : {}),
      cpus: ctx.bench.engineCpus,
      apiPort: ctx.bench.ports.k6Api,
      scenario: resolveScenarioPath(config.engine.scenario, ctx.configDir),
      maxDurationSec,
      env: {
        ...ctx.server.local.engineEnv(ctx.dataset),
        // Both sides of a duet draw the same workload: its randomness cancels in their ratio.
        ...(this.duet ? { LOADGATE_WORKLOAD_SEED: `${run.test.name}#${run.repeat}` } : {}),
      },
    });
    this.k6 = k6;
    this.exporter = await startExporter({ k6ApiPort: ctx.bench.ports.k6Api, k6Pid: k6.process.pid, port: ctx.bench.ports.k6Exporter });
    return { users: k6, health: createHealthSource(ctx.prometheus, ctx.bench.targetCpus, this.share), stats: () => k6.stats() };
  }

  private async startServer(install: LocalInstall, workDir: string): Promise<RunningServer> {
    const { ctx, run } = this;
    const { bench } = ctx;
    const overrides = run.side.sideOverrides.length ? ` with ${run.side.sideOverrides.map((o) => o.text).join(', ')}` : '';
    ctx.progress.info(
      `${this.duet ? `slot ${this.duet.slot}: ` : ''}starting ${ctx.server.displayName} ${run.side.version} on cores ${bench.targetCpus}${overrides}`,
    );
    const server = await ctx.server.local.start({
      supervisor: ctx.supervisor,
      host: bench,
      install,
      dataset: ctx.dataset,
      dir: workDir,
      logFile: join(this.runLogDir, `${ctx.server.system}.log`),
      cpus: bench.targetCpus,
      overrides: run.side.overrides,
      onStep: (line) => ctx.progress.info(line),
    });
    this.server = server;
    bench.processExporter.setPid(server.process.pid);
    if (run.side.cpuQuota !== undefined) {
      if (server.process.pid === undefined) throw new Error(`${ctx.server.displayName} has no pid, so its CPU quota cannot be set`);
      this.quota = await limitCpu(server.process.pid, this.share, bench.targetCpus, run.side.role, ctx.progress);
    }
    return server;
  }

  /** Aborts the run when the target, k6 or a bench component dies, naming it and its log. */
  private watch(abort: (reason: Error) => void): void {
    const procs = (): Array<ManagedProcess | undefined> => [this.server?.process, this.k6?.process];
    this.watcher = setInterval(() => {
      const dead = procs().find((p) => p && !p.running) ?? this.ctx.bench.crashed();
      if (dead) abort(new Error(dead.describeExit()));
    }, 1000);
  }

  alive(): boolean {
    return !this.ctx.bench.crashed() && (this.server?.process.running ?? false);
  }

  testStarted(): void {
    // A duet needs no probe: the machine's speed moves both sides alike.
    if (!this.duet && this.install)
      this.probe = startSpeedProbe({ python: this.install.python ?? process.env.LOADGATE_PYTHON ?? 'python3', cpus: this.ctx.bench.targetCpus });
    const pid = this.server?.process.pid;
    if (this.ctx.profiler && pid !== undefined) {
      const dir = join(this.ctx.bench.dataRoot, 'runs', this.id, 'profile');
      this.profiler = this.ctx.profiler.attach({ process: { pid, cpus: this.ctx.bench.targetCpus }, ...(this.duet ? { slot: this.duet.slot } : {}), dir });
    }
  }

  async stop(): Promise<{ problems: string[]; crash?: string }> {
    // Stop probing now, but wait for a probe in flight only after the load is down.
    const probeStopped = this.probe?.stop();
    clearInterval(this.watcher);
    await this.profiler?.stop();
    await this.exporter?.close().catch(() => {});
    await this.k6?.stop().catch(() => {});
    let crash: string | undefined;
    if (this.server) {
      if (!this.server.process.running) crash = this.server.process.describeExit();
      await this.server.stop().catch(() => {});
    }
    await this.quota?.release();
    if (probeStopped) {
      const probed = await probeStopped;
      this.probeSamples = probed.samples;
      for (const failure of probed.failures) this.ctx.progress.info(`speed probe: ${failure}`);
    }
    this.ctx.bench.processExporter.setPid(undefined);
    return { problems: [], ...(crash ? { crash } : {}) };
  }

  collect(w: CollectWindow): ReturnType<RunAttempt['collect']> {
    const { bench } = this.ctx;
    const timing = localTiming(this.ctx.server.local);
    return this.ctx.server.collect(this.ctx.prometheus, w, {
      rateWindowSec: timing.rateWindowSec,
      stepSec: timing.scrapeIntervalSec,
      cpus: { target: bench.targetCpus, engine: bench.engineCpus, targetShare: this.share },
    });
  }

  async extras(o: { stable: { startSec: number; endSec: number }; window: CollectWindow; ran: boolean }): ReturnType<NonNullable<RunAttempt['extras']>> {
    // The machine's speed while the measured window ran (the probe started with the test).
    const speed = summarizeProbes(this.probeSamples, o.stable.endSec > o.stable.startSec ? o.stable : undefined);
    const outsideCpu = o.ran ? await this.outsideCpu(o.window) : undefined;
    const profile = await this.profiler?.profile({ startSec: o.window.stableStart, endSec: o.window.stableEnd });
    if (typeof profile === 'string') this.ctx.progress.info(`no profile of ${this.id}: ${profile}`);
    return { ...(speed ? { speedProbe: speed } : {}), ...(outsideCpu ? { outsideCpu } : {}), ...(profile && typeof profile !== 'string' ? { profile } : {}) };
  }

  /** Other work's CPU on the bench's cores over the measured window (outside-cpu.ts). */
  private outsideCpu(w: CollectWindow): Promise<OutsideCpu> {
    const { bench, config } = this.ctx;
    return measureOutsideCpu(this.ctx.prometheus, w, { target: bench.targetCpus, engine: bench.engineCpus }, config.bench.local.maxOutsideCpuPercent);
  }

  describe(): { note: string; bench: BenchFingerprint } {
    const { run, duet, ctx } = this;
    const overrides = run.side.sideOverrides.length ? `; ${run.side.role} config overrides: ${run.side.sideOverrides.map((o) => o.text).join(', ')}` : '';
    const { fingerprint } = ctx;
    return {
      note: `local bench run ${this.id}${duet ? ` (duet, slot ${duet.slot})` : ''}${overrides}`,
      bench: {
        ...fingerprint,
        versions: {
          ...fingerprint.versions,
          target: `${ctx.server.displayName} ${run.side.build ? run.side.label : (this.install?.version ?? run.side.version)}`,
        },
      },
    };
  }
}

/** k6 on the engine cores must not be the bottleneck; a duet's two generators share those cores. */
function localGeneratorRule(maxEngineCpuPercent: number, cpuShare: number | undefined, logFile: () => string): GeneratorRule {
  const duetShare = cpuShare !== undefined ? `, of which each side of a duet has ${Math.round(cpuShare * 100)} %` : '';
  return {
    limitPercent: maxEngineCpuPercent * (cpuShare ?? 1),
    words: {
      cpu: (max) =>
        `the load generator (k6) used up to ${max.toFixed(0)}% of its cores (limit bench.local.maxEngineCpuPercent = ${maxEngineCpuPercent}%${duetShare}): the bench, not the target, was the bottleneck`,
      dropped: (n) => `k6 dropped ${n} iterations: the load generator could not keep up`,
      scriptErrors: (n) => `the k6 scenario threw ${n} errors; see ${logFile()}`,
    },
  };
}
