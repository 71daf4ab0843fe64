import { dirname, join } from 'node:path';
import { ProcessSupervisor } from '../../util/process.ts';
import type { Progress } from '../progress.ts';
import { InputError } from '../../util/errors.ts';
import { startLocalBench, type LocalBench } from './bench.ts';
import { hostFingerprint } from './fingerprint.ts';
import { ensureK6, k6Version } from '../../engine/k6/install.ts';
import { PrometheusClient } from '../../metrics/prometheus.ts';
import { expandQuery } from '../../metrics/target-cpus.ts';
import type { BenchFingerprint, RunResult } from '../../results/schema.ts';
import type { LocalDataset, LocalInstall } from '../../chat-servers/chat-server.ts';
import type { ChangedFunctionRecord } from '../../results/changed-code.ts';
import type { FunctionKey } from '../../results/profile.ts';
import type { GateBench } from '../gate-bench.ts';
import type { RunOptions, ScheduledRun, Side } from '../gate-plan.ts';
import { executeLocalRun, type LocalChatServer, type RunContext } from './test-run.ts';
import { duetParts } from '../run-stage.ts';
import { machineSpeedAtSetup, type SpeedProbeSummary } from './speed-probe.ts';

/**
 * In a duet each side is measured against half the target cores: both sides together then
 * keep the same headroom under the CPU health threshold as one side alone does.
 */
const DUET_CPU_SHARE = 0.5;
const SLOTS = ['a', 'b'] as const;

/**
 * The local bench as the gate loop sees it: a machine that runs any chat server with the
 * `local` capability. Set-up does at once whatever does not wait on something else: k6,
 * each side's install (cached), the profiler, and the bench processes (PostgreSQL, nginx,
 * Prometheus, node_exporter); the dataset (a cached dump, built with the older version)
 * as soon as that version's install and slot a's bench are up. Every process is stopped
 * and every data dir removed (unless --keep) on success, on failure and on
 * SIGINT/SIGTERM; logs stay in <out>/logs.
 */
export class LocalGateBench implements GateBench {
  /** The chat server it runs, chosen by the run options. */
  private readonly server: LocalChatServer;
  /** Dataset restore, server start and the settle period between runs: well under a minute here. */
  readonly runOverheadSec = 60;
  private readonly supervisor = new ProcessSupervisor({ watchdog: true });
  /** One bench per slot: one in sequential mode, two in a duet. */
  private benches: LocalBench[] = [];
  private contexts: RunContext[] = [];
  private current: BenchFingerprint = { kind: 'local', versions: {} };

  constructor(
    private readonly o: RunOptions,
    private readonly progress: Progress,
    private readonly logDir: string,
  ) {
    const { local } = o.server;
    if (!local)
      throw new InputError(
        `target.system: ${o.server.displayName} cannot be installed and run on this machine; use the bench its adapter runs on (bench.kind: ${o.server.bench})`,
      );
    this.server = { ...o.server, local };
  }

  get system(): string {
    return this.server.system;
  }

  private get duet(): boolean {
    return this.o.config.mode === 'duet';
  }

  /** The share of the target CPUs each side is measured against. */
  private get cpuShare(): number {
    return this.duet ? DUET_CPU_SHARE : 1;
  }

  expandHealthQuery(query: string): string {
    return expandQuery(query, this.o.config.bench.local.targetCpus, this.cpuShare);
  }

  handleSignals(onSignal: (signal: NodeJS.Signals) => void): void {
    this.supervisor.handleSignals((signal) => {
      onSignal(signal);
      this.progress.problem(`received ${signal}: stopping every bench process`);
    });
  }

  fingerprint(): BenchFingerprint {
    return this.current;
  }

  async setUp(signal: AbortSignal): Promise<void> {
    const { o, progress, supervisor, logDir, server } = this;
    const profiling = o.config.profile === 'on' ? await this.profileCapability() : undefined;
    const host = await hostFingerprint();
    this.current = { kind: 'local', host, versions: {} };
    progress.begin(`set-up: k6, ${server.displayName}${profiling ? ', the profiler' : ''}, the bench and the dataset`);
    const k6 = heartbeat(progress, 'k6', ensureK6(o.config.engine.version, o.cacheDir, { onProgress: (l) => progress.info(l) }));
    const installs = this.installAll();
    const profiler = profiling ? heartbeat(progress, 'profiler', profiling.prepare({ cacheDir: o.cacheDir, onStep: (l) => progress.info(l) })) : undefined;
    const benches = this.startBenches();
    // The dataset waits for the older version's install and slot a's bench only.
    const dataset = Promise.all([
      installs.get(this.server.local.installKey(datasetSide(o))) as Promise<LocalInstall>,
      benches.then((b) => b[0] as LocalBench),
    ]).then(([install, bench]) => this.dataset(install, bench));
    const [k6Path, installed, prof, , ds] = await settledAll([k6, allOf(installs), profiler, benches, dataset] as const);
    progress.info(`k6 ${k6Path}; ${server.displayName} ${[...installed.keys()].join(', ')} in ${o.cacheDir}`);
    const bench = this.benches[0] as LocalBench;
    progress.info(ds.dataset.description);

    const [componentVersions, k6Label] = await Promise.all([bench.versions(), k6Version(k6Path).catch(() => o.config.engine.version)]);
    const setupProbe = await this.machineSpeed();
    this.current = {
      kind: 'local',
      host,
      versions: { ...componentVersions, engine: `k6 ${k6Label}` },
      dataset: ds.dataset.description,
      ...(setupProbe ? { setupProbe } : {}),
    };

    this.contexts = this.benches.map((slotBench) => ({
      server,
      supervisor,
      bench: slotBench,
      progress,
      config: o.config,
      configDir: dirname(o.configFile),
      k6Path,
      dataset: ds.dataset,
      installs: installed,
      fingerprint: this.current,
      logDir,
      prometheus: new PrometheusClient(slotBench.prometheus.url),
      signal,
      state: { lastLoadEndMs: ds.lastLoadEndMs },
      hints: o.hints,
      ...(prof ? { profiler: prof } : {}),
    }));
  }

  /**
   * The machine's speed before the first run, on the target's cores: it scales the profile's
   * calibrated capacity to this machine, so a first gate's search starts near its ceiling.
   * The probe is a Python workload whatever the server: the machine's speed, not the target's.
   */
  private async machineSpeed(): Promise<SpeedProbeSummary | undefined> {
    const python = process.env.LOADGATE_PYTHON ?? 'python3';
    const speed = await machineSpeedAtSetup({ python, cpus: this.o.config.bench.local.targetCpus });
    if (!speed) {
      this.progress.info('speed probe at set-up: no probe succeeded; a first run starts from initialUsers');
      return undefined;
    }
    this.progress.info(`machine speed at set-up: the speed probe took ${speed.cpuMsMedian} ms of CPU (median of ${speed.samples})`);
    this.o.hints.setMachineSpeed({ workload: speed.workload, cpuMs: speed.cpuMsMedian });
    return speed;
  }

  /** `profile: on`: the server's profile capability, refused up front (before any install) when it cannot work here. */
  private async profileCapability(): Promise<NonNullable<LocalChatServer['profile']>> {
    const { profile, displayName } = this.server;
    if (!profile) throw new InputError(`profile: on: loadgate cannot profile ${displayName} on this bench; set profile: off`);
    const refusal = await profile.refusal?.();
    if (refusal) throw new InputError(refusal);
    return profile;
  }

  /** Each side's install at once, keyed by install key: a build has its own even when it declares a released version. */
  private installAll(): Map<string, Promise<LocalInstall>> {
    const { o, progress, logDir, server } = this;
    const installs = new Map<string, Promise<LocalInstall>>();
    for (const side of [o.baseline, o.candidate, datasetSide(o)]) {
      const key = server.local.installKey(side);
      if (installs.has(key)) continue;
      const work = server.local.install(side, {
        cacheDir: o.cacheDir,
        target: o.config.target,
        onStep: (l) => progress.info(l),
        logFile: join(logDir, `install-${key}.log`),
      });
      installs.set(key, heartbeat(progress, `${server.displayName} ${side.label}`, work));
    }
    return installs;
  }

  /**
   * A duet's two slots are two whole benches on the same cores: each side has its own
   * PostgreSQL, nginx, Prometheus and process exporter, so each side's CPU and series are
   * its own, and neither side's database shares buffers or locks with the other's.
   */
  private async startBenches(): Promise<LocalBench[]> {
    const { o, progress, supervisor, logDir, server } = this;
    for (const slot of this.duet ? SLOTS : SLOTS.slice(0, 1)) {
      const name = this.duet ? `bench slot ${slot}` : 'bench';
      progress.info(`${name}: PostgreSQL, nginx, Prometheus, node_exporter on 127.0.0.1`);
      const started = await startLocalBench({
        supervisor,
        server: { job: server.system, metricsPath: server.local.metrics.path },
        logDir: this.duet ? join(logDir, `slot-${slot}`) : logDir,
        targetCpus: o.config.bench.local.targetCpus,
        engineCpus: o.config.bench.local.engineCpus,
        keep: o.keep,
        onStep: (l) => progress.info(`${name}: starting ${l}`),
      });
      this.benches.push(started);
      if (o.keep) progress.info(`${name} data dirs (kept): ${started.dataRoot}`);
    }
    return this.benches;
  }

  /** The cached dataset, or one built now with the older version on slot a's bench. */
  private async dataset(install: LocalInstall, bench: LocalBench): Promise<{ dataset: LocalDataset; lastLoadEndMs: number }> {
    const { o, progress, supervisor, logDir, server } = this;
    const size = o.config.bench.local.dataset;
    const baseOverrides = o.baseline.overrides.slice(0, o.baseline.overrides.length - o.baseline.sideOverrides.length);
    const key = server.local.datasetKey(size, install, baseOverrides);
    const cached = await server.local.findDataset(o.cacheDir, key);
    if (cached) {
      progress.info(`cached dataset ${cached.dir}`);
      return { dataset: cached, lastLoadEndMs: 0 };
    }
    progress.info(`building the dataset with ${server.displayName} ${o.datasetVersion}, the older version (schemas migrate forward only); cached afterwards`);
    const dataset = await server.local.buildDataset({
      supervisor,
      host: bench,
      install,
      cacheDir: o.cacheDir,
      size,
      overrides: baseOverrides,
      workDir: join(bench.dataRoot, 'seed'),
      logFile: join(logDir, `dataset-${server.system}.log`),
      onProgress: (l) => progress.info(l),
    });
    progress.info(`dataset built in ${dataset.buildSeconds ?? '?'}s: ${dataset.dir}`);
    return { dataset, lastLoadEndMs: Date.now() };
  }

  execute(run: ScheduledRun): Promise<RunResult> {
    const ctx = this.contexts[0];
    if (!ctx) throw new Error('the local bench is not set up');
    return executeLocalRun(ctx, run);
  }

  async executeDuet(runs: readonly [ScheduledRun, ScheduledRun]): Promise<[RunResult, RunResult]> {
    if (this.contexts.length !== 2) throw new Error('the local bench is not set up for duets (mode: duet)');
    const parts = duetParts(this.cpuShare);
    const [a, b] = await Promise.all(runs.map((run, i) => executeLocalRun(this.contexts[i] as RunContext, run, parts[i])));
    return [a as RunResult, b as RunResult];
  }

  stopReason(): string | undefined {
    // A bench component (not the target) that died takes the bench with it.
    const dead = this.benches.map((b) => b.crashed()).find((p) => p);
    return dead ? `the bench stopped: ${dead.describeExit()}` : undefined;
  }

  /** Both sides stay installed in the cache after the runs: the server's capability diffs their sources there. */
  async changedFunctions(hot: readonly FunctionKey[]): Promise<ChangedFunctionRecord[] | undefined> {
    return this.server.changedCode?.changedFunctions(this.o.cacheDir, { baseline: this.o.baseline, candidate: this.o.candidate }, hot);
  }

  async tearDown(): Promise<string[]> {
    const problems = await this.supervisor.stopAll();
    this.supervisor.dispose();
    return problems;
  }

  tornDownMessage(): string {
    return `every bench process stopped${this.o.keep ? '' : ', data dirs removed'}; logs in ${this.logDir}`;
  }

  notes(fatal: readonly string[], ranOn?: BenchFingerprint): string[] {
    const { o } = this;
    const fp = ranOn ?? this.current;
    const name = this.server.displayName;
    const notes = [
      `Local bench: ${name} behind nginx, PostgreSQL, Prometheus, node_exporter and k6 on 127.0.0.1; target (${name}, PostgreSQL, nginx) on CPU ${o.config.bench.local.targetCpus}, load engine and monitoring on CPU ${o.config.bench.local.engineCpus}.`,
    ];
    if (this.duet) {
      notes.push(
        `Duet: each baseline run ran at the same time as the candidate run of the same test and repeat. Each side had its own ${name}, PostgreSQL, nginx, k6 and Prometheus; the two sides shared CPU ${o.config.bench.local.targetCpus} (target) and CPU ${o.config.bench.local.engineCpus} (load and monitoring), the machine's memory, disk and loopback network, and node_exporter's host metrics. Each side's CPU utilisation is measured against ${this.cpuShare * 100} % of the target CPUs, and its supported users are per side, so they do not compare with a sequential run's. The sides swap slots (ports, data directories, which starts first) between repeats in Thue-Morse order.`,
      );
    }
    if (fp.dataset) notes.push(`${fp.dataset}; restored into a fresh database before every run.`);
    for (const side of [o.baseline, o.candidate]) {
      if (side.sideOverrides.length)
        notes.push(`${side.role} ${side.label} ran with config overrides: ${side.sideOverrides.map((x) => `\`${x.text}\``).join(', ')}.`);
      if (side.cpuQuota !== undefined) {
        notes.push(
          `${side.role} ${side.label}'s ${name} was limited to ${side.cpuQuota} of the target cores by a cgroup CPU quota (--${side.role}-cpu-quota), and its CPU utilisation (health query and results) is measured against that share: a machine with ${side.cpuQuota} of the CPU.`,
        );
      }
    }
    notes.push(...this.server.local.notes);
    for (const f of fatal) notes.push(`The gate stopped early: ${f}`);
    return notes;
  }
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

/** Every install, once all are done. */
async function allOf(installs: ReadonlyMap<string, Promise<LocalInstall>>): Promise<Map<string, LocalInstall>> {
  const keys = [...installs.keys()];
  const done = await Promise.all(keys.map((k) => installs.get(k) as Promise<LocalInstall>));
  return new Map(keys.map((k, i) => [k, done[i] as LocalInstall]));
}

/**
 * Waits for every step, so none is left running when set-up fails (a pip install would
 * outlive the gate), then throws the first failure.
 */
async function settledAll<T extends readonly unknown[]>(work: T): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as { -readonly [K in keyof T]: Awaited<T[K]> };
}

/** The side whose server builds the dataset: the one of datasetVersion, a released version before a build of it. */
function datasetSide(o: Pick<RunOptions, 'baseline' | 'candidate' | 'datasetVersion'>): Side {
  const sides = [o.baseline, o.candidate].filter((s) => s.version === o.datasetVersion);
  return sides.find((s) => !s.build) ?? sides[0] ?? o.baseline;
}
