import { randomBytes } from 'node:crypto';
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
import { SYNAPSE_PACKAGE } from '../../chat-servers/synapse/defaults.ts';
import { buildDataset, datasetKey, describeDataset, findDataset, type DatasetArtifacts } from '../../chat-servers/synapse/dataset.ts';
import { ensureSynapse, installedTree, installKey, type SynapseInstall } from '../../chat-servers/synapse/install.ts';
import { changedFunctions } from '../../chat-servers/synapse/changed-functions.ts';
import type { ChangedFunctionRecord } from '../../results/changed-code.ts';
import type { FunctionKey } from '../../results/profile.ts';
import { ensurePySpy, ptraceRefusal } from '../../chat-servers/synapse/py-spy.ts';
import type { GateBench } from '../gate-bench.ts';
import type { RunOptions, ScheduledRun, Side } from '../gate-plan.ts';
import { executeLocalRun, type RunContext } from './test-run.ts';
import { Barrier } from '../../util/barrier.ts';

/**
 * In a duet each side is measured against half the target cores: both sides together then
 * keep the same headroom under the CPU health threshold as one side alone does.
 */
const DUET_CPU_SHARE = 0.5;
const SLOTS = ['a', 'b'] as const;

/**
 * The local bench as the gate loop sees it:
 *   set-up (k6 and each Synapse version, cached) → bench (PostgreSQL, nginx, Prometheus,
 *   node_exporter) → dataset (cached dump, built with the older version) → runs.
 * Every process is stopped and every data dir removed (unless --keep) on success, on
 * failure and on SIGINT/SIGTERM; logs stay in <out>/logs.
 */
export class LocalGateBench implements GateBench {
  readonly system = 'synapse' as const;
  /** Dataset restore, Synapse start and the settle period between runs: well under a minute here. */
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
  ) {}

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
    const { o, progress, supervisor, logDir } = this;
    const host = await hostFingerprint();
    this.current = { kind: 'local', host, versions: {} };
    progress.begin('set-up: k6 and Synapse');
    const k6Path = await heartbeat(progress, 'k6', ensureK6(o.config.engine.version, o.cacheDir, { onProgress: (l) => progress.info(l) }));
    // Keyed by installKey: a build has its own venv even when it declares a released version.
    const installs = new Map<string, SynapseInstall>();
    const dsSide = datasetSide(o);
    for (const side of [o.baseline, o.candidate, dsSide]) {
      const key = installKey(side);
      if (installs.has(key)) continue;
      installs.set(
        key,
        await heartbeat(progress, `Synapse ${side.label}`, ensureSynapse({
          version: side.version,
          ...(side.build?.kind === 'wheel' || side.build?.kind === 'source' ? { build: side.build } : {}),
          cacheDir: o.cacheDir,
          packageName: o.config.target.package ?? SYNAPSE_PACKAGE,
          onStep: (l) => progress.info(l),
          logFile: join(logDir, `pip-${key}.log`),
        })),
      );
    }
    progress.info(`k6 ${k6Path}; Synapse ${[...installs.keys()].join(', ')} in ${o.cacheDir}`);
    const pySpy = o.config.profile === 'on' ? await heartbeat(progress, 'py-spy', setUpPySpy(o.cacheDir, progress)) : undefined;

    // A duet's two slots are two whole benches on the same cores: each side has its own
    // PostgreSQL, nginx, Prometheus and process exporter, so each side's CPU and series are
    // its own, and neither side's database shares buffers or locks with the other's.
    const slots = this.duet ? SLOTS : SLOTS.slice(0, 1);
    for (const slot of slots) {
      progress.begin(`bench${this.duet ? ` slot ${slot}` : ''}: PostgreSQL, nginx, Prometheus, node_exporter on 127.0.0.1`);
      const started = await startLocalBench({
        supervisor,
        logDir: this.duet ? join(logDir, `slot-${slot}`) : logDir,
        targetCpus: o.config.bench.local.targetCpus,
        engineCpus: o.config.bench.local.engineCpus,
        keep: o.keep,
        onStep: (l) => progress.info(`starting ${l}`),
      });
      this.benches.push(started);
      if (o.keep) progress.info(`bench data dirs (kept): ${started.dataRoot}`);
    }
    const bench = this.benches[0] as LocalBench;

    progress.begin('dataset');
    const size = o.config.bench.local.dataset;
    const dsInstall = installs.get(installKey(dsSide)) as SynapseInstall;
    const baseOverrides = o.baseline.overrides.slice(0, o.baseline.overrides.length - o.baseline.sideOverrides.length);
    const key = datasetKey(size, installKey(dsSide), baseOverrides);
    let lastLoadEndMs = 0;
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
      lastLoadEndMs = Date.now();
    }
    progress.info(describeDataset(dataset.meta));

    const [componentVersions, k6Label] = await Promise.all([bench.versions(), k6Version(k6Path).catch(() => o.config.engine.version)]);
    this.current = { kind: 'local', host, versions: { ...componentVersions, engine: `k6 ${k6Label}` }, dataset: describeDataset(dataset.meta) };

    this.contexts = this.benches.map((slotBench) => ({
      supervisor, bench: slotBench, progress, config: o.config, configDir: dirname(o.configFile), k6Path, dataset, installs, fingerprint: this.current, logDir,
      prometheus: new PrometheusClient(slotBench.prometheus.url),
      registrationSharedSecret: randomBytes(24).toString('hex'),
      signal,
      state: { lastLoadEndMs },
      hints: o.hints,
      ...(pySpy ? { pySpy } : {}),
    }));
  }

  execute(run: ScheduledRun): Promise<RunResult> {
    const ctx = this.contexts[0];
    if (!ctx) throw new Error('the local bench is not set up');
    return executeLocalRun(ctx, run);
  }

  async executeDuet(runs: readonly [ScheduledRun, ScheduledRun]): Promise<[RunResult, RunResult]> {
    if (this.contexts.length !== 2) throw new Error('the local bench is not set up for duets (mode: duet)');
    const start = new Barrier(2);
    const end = new Barrier(2);
    const [a, b] = await Promise.all(runs.map((run, i) => executeLocalRun(this.contexts[i] as RunContext, run, { slot: SLOTS[i] as 'a' | 'b', cpuShare: this.cpuShare, start, end })));
    return [a as RunResult, b as RunResult];
  }

  stopReason(): string | undefined {
    // A bench component (not the target) that died takes the bench with it.
    const dead = this.benches.map((b) => b.crashed()).find((p) => p);
    return dead ? `the bench stopped: ${dead.describeExit()}` : undefined;
  }

  /** Both Synapse versions stay installed in the cache after the runs: their sources are diffed there. */
  async changedFunctions(hot: readonly FunctionKey[]): Promise<ChangedFunctionRecord[] | undefined> {
    const [baseline, candidate] = await Promise.all([installedTree(this.o.cacheDir, this.o.baseline), installedTree(this.o.cacheDir, this.o.candidate)]);
    if (!baseline || !candidate) return undefined;
    return changedFunctions({ baseline, candidate }, hot);
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
    const notes = [
      `Local bench: Synapse behind nginx, PostgreSQL, Prometheus, node_exporter and k6 on 127.0.0.1; target (Synapse, PostgreSQL, nginx) on CPU ${o.config.bench.local.targetCpus}, load engine and monitoring on CPU ${o.config.bench.local.engineCpus}.`,
    ];
    if (this.duet) {
      notes.push(
        `Duet: each baseline run ran at the same time as the candidate run of the same test and repeat. Each side had its own Synapse, PostgreSQL, nginx, k6 and Prometheus; the two sides shared CPU ${o.config.bench.local.targetCpus} (target) and CPU ${o.config.bench.local.engineCpus} (load and monitoring), the machine's memory, disk and loopback network, and node_exporter's host metrics. Each side's CPU utilisation is measured against ${this.cpuShare * 100} % of the target CPUs, and its supported users are per side, so they do not compare with a sequential run's. The sides swap slots (ports, data directories, which starts first) between repeats in Thue-Morse order.`,
      );
    }
    if (fp.dataset) notes.push(`${fp.dataset}; restored into a fresh database before every run.`);
    for (const side of [o.baseline, o.candidate]) {
      if (side.sideOverrides.length) notes.push(`${side.role} ${side.label} ran with config overrides: ${side.sideOverrides.map((x) => `\`${x.text}\``).join(', ')}.`);
      if (side.cpuQuota !== undefined) {
        notes.push(
          `${side.role} ${side.label}'s Synapse was limited to ${side.cpuQuota} of the target cores by a cgroup CPU quota (--${side.role}-cpu-quota), and its CPU utilisation (health query and results) is measured against that share: a machine with ${side.cpuQuota} of the CPU.`,
        );
      }
    }
    notes.push('Store p99 is the p99 of single SQL statements (synapse_storage_query_time); per-method store p99 is the 99th percentile of the method\'s 15 s means, as Synapse exports no per-transaction histogram. "Heap in use" is the Synapse process\'s resident memory and "threads" its OS threads.');
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

/** py-spy for `profile: on`, refused up front when it could not attach to Synapse. */
async function setUpPySpy(cacheDir: string, progress: Progress): Promise<string> {
  const refusal = await ptraceRefusal();
  if (refusal) throw new InputError(refusal);
  return ensurePySpy({ cacheDir, onStep: (l) => progress.info(l) });
}

/** The side whose Synapse builds the dataset: the one of datasetVersion, a released version before a build of it. */
function datasetSide(o: Pick<RunOptions, 'baseline' | 'candidate' | 'datasetVersion'>): Side {
  const sides = [o.baseline, o.candidate].filter((s) => s.version === o.datasetVersion);
  return sides.find((s) => !s.build) ?? sides[0] ?? o.baseline;
}
