import type { GateConfig } from '../config/schema.ts';
import type { Collected, CollectWindow } from '../metrics/collected.ts';
import type { PrometheusClient } from '../metrics/prometheus.ts';
import type { BuildRef } from './build-source.ts';

/**
 * What the gate knows about a chat server, whatever bench runs it: how a side's version
 * label and `--<role>-set` flags become what that side runs, and how a run's numbers are
 * read from the bench's Prometheus. Each server's folder implements it once
 * (synapse/chat-server.ts, mattermost/chat-server.ts); the run options pick one by
 * target.system, and each bench collects through it. How a server is installed and started
 * stays with the bench that runs it: Synapse from PyPI on this machine, Mattermost
 * releases on the AWS nodes.
 */
export interface ChatServer {
  readonly system: GateConfig['target']['system'];
  /** The bench kind that runs it. */
  readonly bench: GateConfig['bench']['kind'];
  /** target.settings checked, as the overrides every side starts from; throws naming the setting. */
  baseOverrides(target: GateConfig['target']): Override[];
  /** One side from its version label or build (build-source.ts) and its --<role>-set flags; throws naming the flag. Paths resolve against `cwd`. */
  side(role: 'baseline' | 'candidate', label: string, sets: readonly string[], target: GateConfig['target'], base: readonly Override[], cwd?: string): ServerSide;
  /** The version whose data the runs start from: the older side's where the bench builds the dataset (schemas migrate forward only), else the baseline's. */
  datasetVersion(baseline: string, candidate: string): string;
  /** Where its source lives on GitHub, for the commits behind a profile's hot functions. */
  readonly source: SourceRepository;
  /** Reads one run's series, timings and totals; a missing measurement is a problem naming its source, never a zero. */
  collect(client: PrometheusClient, window: CollectWindow, context: CollectContext): Promise<ServerCollected>;
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
