import type { GateConfig } from '../config/schema.ts';
import type { Collected, CollectWindow } from '../metrics/collected.ts';
import type { PrometheusClient } from '../metrics/prometheus.ts';
import type { ChangedFunctionRecord } from '../results/changed-code.ts';
import type { FunctionKey, StoredProfile } from '../results/profile.ts';
import type { ManagedProcess, ProcessSupervisor } from '../util/process.ts';
import type { BuildRef } from './build-source.ts';

/**
 * What the gate knows about a chat server, whatever bench runs it. The core, which every
 * server has: how a side's version label and `--<role>-set` flags become what that side
 * runs, which version's data the runs start from, where its source lives, and how a run's
 * numbers are read from the bench's Prometheus. Then optional capabilities, each a bench
 * asks for when it needs it (k6's outputs are built the same way: a small interface and
 * optional extensions, output/types.go): running on this machine (`local`: install,
 * dataset, start, for the local bench), on provisioned nodes (`nodes`: the AWS bench),
 * a CPU profile of a running slot (`profile`) and the changed code behind a profile's hot
 * functions (`changedCode`). Each server's folder implements it once
 * (synapse/chat-server.ts, mattermost/chat-server.ts); registry.ts picks one by
 * target.system for the run options, and the benches run it through these alone.
 */
export interface ChatServer {
  /** Its target.system name (src/config/chat-servers.ts lists the shipped ones). */
  readonly system: string;
  /** As the report names it: "Synapse". */
  readonly displayName: string;
  /** The bench kind that runs it. */
  readonly bench: GateConfig['bench']['kind'];
  /** target.settings checked, as the overrides every side starts from; throws naming the setting. */
  baseOverrides(target: GateConfig['target']): Override[];
  /** One side from its version label or build (build-source.ts) and its --<role>-set flags; throws naming the flag. Paths resolve against `cwd`. */
  side(
    role: 'baseline' | 'candidate',
    label: string,
    sets: readonly string[],
    target: GateConfig['target'],
    base: readonly Override[],
    cwd?: string,
  ): ServerSide;
  /** The version whose data the runs start from: the older side's where the bench builds the dataset (schemas migrate forward only), else the baseline's. */
  datasetVersion(baseline: string, candidate: string): string;
  /** Where its source lives on GitHub, for the commits behind a profile's hot functions. */
  readonly source: SourceRepository;
  /** Reads one run's series, timings and totals; a missing measurement is a problem naming its source, never a zero. */
  collect(client: PrometheusClient, window: CollectWindow, context: CollectContext): Promise<ServerCollected>;
  /** Installs and runs on this machine (the local bench). */
  readonly local?: LocalServer;
  /** Runs on a provisioned bench's nodes, installed by their own helpers (the AWS bench). */
  readonly nodes?: NodesServer;
  /** A CPU profile of a running slot over a window (`profile: on`). */
  readonly profile?: ProfileCapability;
  /** Which of a profile's hot functions changed between the two sides' installed sources. */
  readonly changedCode?: ChangedCodeCapability;
}

/** What identifies a side to a server's capabilities (a subset of the bench's Side). */
export interface SideRef {
  label: string;
  version: string;
  build?: BuildRef | undefined;
}

/** The part of the local bench a server's install, dataset and start use: its database server, the server's ports, the entry point. */
export interface LocalHost {
  readonly postgres: {
    readonly host: string;
    readonly port: number;
    readonly user: string;
    readonly password: string;
    recreateDatabase(name: string): Promise<void>;
    dump(database: string, file: string): Promise<void>;
    restore(file: string, database: string): Promise<void>;
  };
  /** The ports the server listens on: its client API (behind nginx) and its metrics. */
  readonly ports: { readonly serverClient: number; readonly serverMetrics: number };
  /** Where clients reach it (nginx). */
  readonly nginx: { readonly url: string };
}

/** One side's install on this machine (cached across gates). */
export interface LocalInstall {
  /** Sides with the same key share the install. */
  key: string;
  /** The version it runs, as the server reports it. */
  version: string;
  /** Where it is installed. */
  dir: string;
  /** A Python interpreter beside it, when it has one: the speed probe runs its workload with the target's own. */
  python?: string;
}

/** The seeded data every run starts from, built once per key and cached. */
export interface LocalDataset {
  dir: string;
  /** The users the load engine logs in as (the scenario reads it). */
  usersFile: string;
  /** One line for the report. */
  description: string;
  /** Seconds the build took, when it was built by this gate. */
  buildSeconds?: number;
}

export interface LocalServer {
  /** The install key of a side: a release's version, or a build's content hash. */
  installKey(side: SideRef): string;
  /** Installs a side (cached; under a lock, so two gates never build one install); the bench installs both sides at once. */
  install(side: SideRef, o: { cacheDir: string; target: GateConfig['target']; onStep: (line: string) => void; logFile: string }): Promise<LocalInstall>;
  /** The cache key of the dataset `install` builds for `size` and the config's base overrides. */
  datasetKey(size: LocalDatasetSize, install: LocalInstall, overrides: readonly Override[]): string;
  /** The cached dataset of a key, or undefined when it was never (completely) built. */
  findDataset(cacheDir: string, key: string): Promise<LocalDataset | undefined>;
  /** Builds and caches the dataset with a server of `install` on the host, through the server's own API. */
  buildDataset(o: {
    supervisor: ProcessSupervisor;
    host: LocalHost;
    install: LocalInstall;
    cacheDir: string;
    size: LocalDatasetSize;
    overrides: readonly Override[];
    workDir: string;
    logFile: string;
    onProgress: (line: string) => void;
  }): Promise<LocalDataset>;
  /** Restores the dataset into a fresh database, then starts the side's server on the host's ports and waits until it answers. */
  start(o: {
    supervisor: ProcessSupervisor;
    host: LocalHost;
    install: LocalInstall;
    dataset: LocalDataset;
    dir: string;
    logFile: string;
    cpus: string;
    overrides: readonly Override[];
    onStep: (line: string) => void;
  }): Promise<RunningServer>;
  /** Its metrics listener: the path Prometheus scrapes, and the rate window the collected series use. */
  readonly metrics: { path: string; rateWindowSec: number };
  /** Environment for the load engine's scenario, from the dataset (e.g. the words its messages are made of). */
  engineEnv(dataset: LocalDataset): Record<string, string>;
  /** Report notes on what its figures mean. */
  readonly notes: readonly string[];
}

export type LocalDatasetSize = GateConfig['bench']['local']['dataset'];

export interface RunningServer {
  readonly process: ManagedProcess;
  stop(): Promise<void>;
}

/**
 * A server the AWS bench's nodes run: what the bench checks of it after a start and
 * watches for during a run.
 */
export interface NodesServer {
  /** Its metrics job in the bench's Prometheus: an app node with up == 0 has dropped out. */
  readonly job: string;
  /** The version every node must report after installing `version` (the prefix of its version id). */
  expectedVersion(version: string): string;
  /** Checks node 0's answer to the question `nodes` asks after a start (a licence); throws naming the fix. */
  checkStarted(answer: unknown, where: string): void;
  /** A watch over a run: asked every few seconds with the seconds since the load began, it returns a reason to stop the run once, or undefined. */
  runWatch(query: (promql: string) => Promise<number | undefined>): { check(elapsedSec: number): Promise<string | undefined> };
}

/**
 * `profile: on`: a CPU profile of each side over its measured window. `prepare` readies the
 * profiler on the bench once (an install, a check that it may attach); `attach` starts on one
 * slot when its test starts; `profile(window)` gives that slot's merged CPU profile over the
 * window as the run result stores it. A profiler that samples all the time (a bench's
 * Pyroscope) attaches to nothing and only reads the window.
 */
export interface ProfileCapability {
  /** Why profiling cannot work here, with the fix; asked before anything is installed. */
  refusal?(): Promise<string | undefined>;
  /** `signal` is the gate's: a profiler's waits end when it stops. */
  prepare(o: { cacheDir: string; onStep: (line: string) => void; signal?: AbortSignal }): Promise<Profiler>;
}

export interface Profiler {
  attach(target: ProfileTarget): SlotProfile;
}

/** What a bench knows of the slot it wants profiled. */
export interface ProfileTarget {
  /** Its server process on this machine (the local bench), and the cores it runs on. */
  process?: { pid: number; cpus?: string };
  /** Its slot in a duet. */
  slot?: 'a' | 'b';
  /**
   * The bench's continuous profiler, where it has one (the AWS bench's Pyroscope): its base
   * URL, and how often it takes a profile of the process (each lasts up to that long).
   */
  continuous?: { url: string; scrapeIntervalSec: number };
  /** Scratch space for the profiler's files. */
  dir: string;
}

export interface SlotProfile {
  /** Stops sampling (the run is over). */
  stop(): Promise<void>;
  /** The slot's CPU profile over the window (seconds since the epoch), or why there is none. */
  profile(window: { startSec: number; endSec: number }): Promise<StoredProfile | string>;
}

/** The changed code behind a profile's hot functions, where both sides are installed on this machine. */
export interface ChangedCodeCapability {
  /** Which hot functions changed between the two sides' installs in `cacheDir`; undefined when either is not there. */
  changedFunctions(
    cacheDir: string,
    sides: { baseline: SideRef; candidate: SideRef },
    hot: readonly FunctionKey[],
  ): Promise<ChangedFunctionRecord[] | undefined>;
}

export interface SourceRepository {
  owner: string;
  repo: string;
  /** A profile's file as a path in the repository, or undefined when the file is not the server's own. */
  path(file: string): string | undefined;
  /** The repository's tag of a side's version (ServerSide.version). */
  tag(version: string): string;
}

/** One config setting changed for a side (`--candidate-set key=value`). */
export interface Override {
  path: string[];
  value: Scalar;
  /** As written, for messages and the report. */
  text: string;
}

export type Scalar = string | number | boolean | null;

/** A side's fields that depend on the server. */
export interface ServerSide {
  /** A build's label (build-source.ts buildLabel), replacing the value given on the command line. */
  label?: string;
  /** The build this side runs, when it is not a released version. */
  build?: BuildRef;
  /** The version the bench installs: a PyPI version (Synapse) or the validated label (Mattermost). */
  version: string;
  /** Everything the side runs with: the base overrides where the bench applies them per run, then the side's own. */
  overrides: Override[];
  /** Only this side's flags, for the report. */
  sideOverrides: Override[];
  /** Mattermost: the release or build tarball this side installs. */
  releaseUrl?: string;
  /** Mattermost: this side's config.json patch. */
  configPatch?: Record<string, unknown>;
}

/** How the bench's Prometheus is read: its series' rate window and step, and where the target and the load engine ran. */
export interface CollectContext {
  rateWindowSec: number;
  stepSec: number;
  /** The local bench: the CPU lists of the target and the engine, and the share of the target CPUs this side may use (a quota, or half in a duet). */
  cpus?: { target: string; engine: string; targetShare: number };
}

export type ServerCollected = Collected & {
  /** Iterations the load engine dropped over the window, where it reports them through Prometheus. */
  droppedIterations?: number;
};
