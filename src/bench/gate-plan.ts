import type { GateConfig, TestSpec } from '../config/schema.ts';
import type { RunResult } from '../results/schema.ts';
import type { BuildRef } from '../chat-servers/build-source.ts';
import type { ChatServer, Override } from '../chat-servers/chat-server.ts';
import type { CapacityHints } from './capacity-hints.ts';

/**
 * What a gate was asked to run, as `loadgate run` parsed it (src/run/options.ts): the
 * options, the two sides and the scheduled runs. Declared here, in the bench layer, because
 * the benches are built from it and run what it schedules.
 */

export interface Side {
  role: 'baseline' | 'candidate';
  /** As given on the command line; the label in results and the report. */
  label: string;
  /** The PyPI version (Synapse), or the validated label (Mattermost). */
  version: string;
  /**
   * Synapse: target.settings, then this side's --*-set flags. Mattermost: this side's
   * flags only (target.settings is the bench's base config, applied at provisioning).
   */
  overrides: Override[];
  /** Only this side's flags, for the report. */
  sideOverrides: Override[];
  /** Mattermost: the release or build tarball this side installs. */
  releaseUrl?: string;
  /** The build this side runs, when not a released version (`label` is then the build's). */
  build?: BuildRef;
  /** Mattermost: this side's config.json patch (checked by config-patch.ts). */
  configPatch?: Record<string, unknown>;
  /** Local bench: the target's CPU quota as a fraction of the target cores. */
  cpuQuota?: number;
}

/** What a run of this side records as its target: the label, and a CPU quota when one slowed it. */
export function runTarget(system: RunResult['target']['system'], side: Pick<Side, 'label' | 'cpuQuota' | 'build'>): RunResult['target'] {
  return { system, version: side.label, ...(side.cpuQuota !== undefined ? { cpuQuota: side.cpuQuota } : {}), ...(side.build ? { build: side.build } : {}) };
}

/** What the AWS bench needs beyond the gate config. */
export interface AwsRunInputs {
  benchFile: string;
  usersFile: string;
  snapshots: 'local' | 'external' | 'off';
}

export interface RunOptions {
  configFile: string;
  config: GateConfig;
  /** The chat server of target.system, chosen once (chat-servers/registry.ts): the benches run it through its capabilities. */
  server: ChatServer;
  outDir: string;
  cacheDir: string;
  /** Minimum pairs. */
  repeats: number;
  /** Most pairs while the decision is undecided. */
  maxRepeats: number;
  /** Reuse completed results already in <out>/results. */
  resume: boolean;
  /** Write the pooled noise model over the config's noiseModel file too. */
  updateNoiseModel: boolean;
  /** calibrate: the model is measured afresh from these runs, not pooled into the config's. */
  calibrate?: boolean;
  /** Start no run that would end later than this many seconds after the gate started. */
  jobBudgetSec?: number;
  tests: TestSpec[];
  baseline: Side;
  candidate: Side;
  keep: boolean;
  /** The version that builds the dataset: the older one (schemas migrate forward only). */
  datasetVersion: string;
  /** Set when bench.kind is aws. */
  aws?: AwsRunInputs;
  /** Warm-start hints of this gate: its own runs, --expect-users, --history. */
  hints: CapacityHints;
  /** --history: the profile's earlier gates; its history/ folder is the gate history (src/history). */
  historyDir?: string;
}

/** One test run in the schedule. */
export interface ScheduledRun {
  side: Side;
  test: TestSpec;
  repeat: number;
}

/** A run's name in file names and logs: side, version, test, repeat. */
export function runId(run: ScheduledRun): string {
  return `${run.side.role}-${run.side.label}-${run.test.name}-${run.repeat}`.replace(/[^A-Za-z0-9._-]/g, '_');
}
