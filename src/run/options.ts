import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { parseFlags } from '../cli/args.ts';
import { loadGateConfig } from '../config/load.ts';
import type { GateConfig, TestSpec } from '../config/schema.ts';
import { InputError } from '../util/errors.ts';
import { parseOverride, settingsToOverrides, type Override } from '../target/synapse/overrides.ts';
import { compareVersions, toPipVersion } from '../target/synapse/version.ts';
import { overridesToPatch, parseMattermostOverride } from '../target/mattermost/overrides.ts';
import { resolveReleaseUrl } from '../target/mattermost/release.ts';
import { checkedOverrides } from '../target/mattermost/config-patch.ts';
import { validateVersionLabel } from '../target/mattermost/version.ts';

/**
 * `loadgate run` flags, checked in full before anything is installed or started:
 * config, version labels, overrides and test names. Every problem is an InputError
 * (exit 3) naming the flag and the fix.
 */
export const usage = `Usage: loadgate run --config <gate.yml> --baseline <version> --candidate <version> --out <dir> [options]

Runs every test for both versions (interleaved: baseline, candidate, baseline,
candidate…), then writes <out>/verdict.json, <out>/README.md, graphs and per-run
results, and exits with the verdict.
  bench.kind: local   installs what is missing and starts PostgreSQL, nginx, Prometheus
                      and node_exporter on 127.0.0.1 (Synapse, k6).
  bench.kind: aws     drives a provisioned bench (Mattermost; k6 or load-test-ng agents)
                      through SSM, the agents' APIs and the metrics node's Prometheus;
                      needs --bench-file and --users-file.

Options:
  --config <file>          Gate config (e.g. examples/local-synapse.yml)
  --baseline <version>     Baseline version (e.g. 1.162.0)
  --candidate <version>    Candidate version (e.g. 1.163.2); may equal the baseline (A/A)
  --out <dir>              Report directory; logs are kept in <out>/logs
  --repeats <n>            Runs per side (default: the config's repeats)
  --tests <a,b>            Only these tests (by name)
  --baseline-set <k=v>     Patch the target config for the baseline only (repeatable),
  --candidate-set <k=v>    or the candidate only: dotted key, YAML scalar value,
                           e.g. --candidate-set caches.global_factor=0.05 (Synapse) or
                           --candidate-set ServiceSettings.EnableLinkPreviews=false (Mattermost)
  --keep                   Keep the bench data dirs (databases, Prometheus TSDB)
  --cache-dir <dir>        Cache for Synapse venvs, k6 and datasets
                           (default: $LOADGATE_CACHE_DIR, else ~/.cache/loadgate)

AWS bench:
  --bench-file <file>      Bench description written by provision (loadgate tf-outputs)
  --users-file <file>      The dataset's users, "login password" per line, uploaded to the agents
  --snapshots <mode>       Grafana snapshot per run: local (default), external or off

Exit codes: 0 pass, 1 fail, 2 inconclusive, 3 bad input.`;

const FLAG_OPTIONS = {
  config: { type: 'string' },
  baseline: { type: 'string' },
  candidate: { type: 'string' },
  out: { type: 'string' },
  repeats: { type: 'string' },
  tests: { type: 'string' },
  'baseline-set': { type: 'string', multiple: true },
  'candidate-set': { type: 'string', multiple: true },
  keep: { type: 'boolean' },
  'cache-dir': { type: 'string' },
  'bench-file': { type: 'string' },
  'users-file': { type: 'string' },
  snapshots: { type: 'string' },
} as const;

const flagsSchema = z.strictObject({
  config: z.string({ error: 'required: the gate config file' }).min(1),
  baseline: z.string({ error: 'required: the baseline version' }).min(1),
  candidate: z.string({ error: 'required: the candidate version' }).min(1),
  out: z.string({ error: 'required: the report directory' }).min(1),
  repeats: z
    .string()
    .regex(/^\d+$/, 'expected a whole number')
    .transform(Number)
    .refine((n) => n >= 1 && n <= 20, 'expected 1 to 20')
    .optional(),
  tests: z.string().optional(),
  'baseline-set': z.array(z.string()).default([]),
  'candidate-set': z.array(z.string()).default([]),
  keep: z.boolean().default(false),
  'cache-dir': z.string().min(1).optional(),
  'bench-file': z.string().min(1).optional(),
  'users-file': z.string().min(1).optional(),
  snapshots: z.enum(['local', 'external', 'off']).default('local'),
  positionals: z.array(z.string()).max(0, 'unexpected argument; every option needs its --name'),
});

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
  /** Mattermost: the release tarball of this version. */
  releaseUrl?: string;
  /** Mattermost: this side's config.json patch (checked by config-patch.ts). */
  configPatch?: Record<string, unknown>;
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
  outDir: string;
  cacheDir: string;
  repeats: number;
  tests: TestSpec[];
  baseline: Side;
  candidate: Side;
  keep: boolean;
  /** The version that builds the dataset: the older one (schemas migrate forward only). */
  datasetVersion: string;
  /** Set when bench.kind is aws. */
  aws?: AwsRunInputs;
  /** --expect-users: a warm-start hint for unbounded tests with warmStart (issue 13). */
  expectUsers?: number;
}

export async function parseRunOptions(argv: string[], cwd = process.cwd()): Promise<RunOptions> {
  const flags = parseFlags(argv, FLAG_OPTIONS, flagsSchema, usage);
  const config = await loadGateConfig(flags.config);
  if (config.bench.kind === 'aws') return parseAwsRunOptions(flags, config, cwd);
  if (config.target.system !== 'synapse') {
    throw new InputError(`${flags.config}: target.system is "${config.target.system}"; the local bench runs Synapse (target.system: synapse)`);
  }
  if (config.engine.kind !== 'k6') {
    throw new InputError(`${flags.config}: engine.kind is "${config.engine.kind}"; the local bench drives Synapse with k6 (engine.kind: k6)`);
  }
  if (flags['bench-file']) await checkLocalBenchFile(resolve(cwd, flags['bench-file']));
  let base: Override[];
  try {
    base = settingsToOverrides(config.target.settings);
  } catch (error) {
    throw new InputError(`${flags.config}: ${(error as Error).message}`);
  }
  const side = (role: 'baseline' | 'candidate', label: string, sets: string[]): Side => {
    const version = toPipVersion(label, config.target.versionPattern, `--${role}`);
    const sideOverrides = sets.map((s) => parseOverride(s, `--${role}-set`));
    return { role, label, version, overrides: [...base, ...sideOverrides], sideOverrides };
  };
  const baseline = side('baseline', flags.baseline, flags['baseline-set']);
  const candidate = side('candidate', flags.candidate, flags['candidate-set']);
  return {
    ...sharedOptions(flags, config, cwd, baseline, candidate),
    datasetVersion: compareVersions(baseline.version, candidate.version) <= 0 ? baseline.version : candidate.version,
  };
}

type Flags = z.output<typeof flagsSchema>;

/** The AWS bench: Mattermost versions and per-side config patches, the bench and users files. */
async function parseAwsRunOptions(flags: Flags, config: GateConfig, cwd: string): Promise<RunOptions> {
  if (config.target.system !== 'mattermost') {
    throw new InputError(`${flags.config}: bench.kind is "aws" but target.system is "${config.target.system}"; the AWS bench runs Mattermost (target.system: mattermost), Synapse runs on the local bench`);
  }
  if (!flags['bench-file']) {
    throw new InputError(`--bench-file: required on the AWS bench: the description provision wrote (terraform output -json | loadgate tf-outputs -)`);
  }
  if (!flags['users-file']) {
    throw new InputError(`--users-file: required on the AWS bench: the dataset's users, one "login password" per line, for the agents to log in as`);
  }
  try {
    checkedOverrides(config.target.settings, 'target.settings');
  } catch (error) {
    throw new InputError(`${flags.config}: ${(error as Error).message}`);
  }
  const side = (role: 'baseline' | 'candidate', label: string, sets: string[]): Side => {
    const version = validateVersionLabel(label, config.target.versionPattern, `--${role}`);
    const sideOverrides = sets.map((s) => parseMattermostOverride(s, `--${role}-set`));
    return {
      role,
      label,
      version,
      overrides: sideOverrides,
      sideOverrides,
      releaseUrl: resolveReleaseUrl(config.target, label, `--${role}`),
      configPatch: overridesToPatch(sideOverrides),
    };
  };
  const baseline = side('baseline', flags.baseline, flags['baseline-set']);
  const candidate = side('candidate', flags.candidate, flags['candidate-set']);
  return {
    ...sharedOptions(flags, config, cwd, baseline, candidate),
    // The dataset is the bench's (a dump or snapshot restored before every run).
    datasetVersion: baseline.version,
    aws: { benchFile: resolve(cwd, flags['bench-file']), usersFile: resolve(cwd, flags['users-file']), snapshots: flags.snapshots },
  };
}

/** What every bench takes from the flags the same way; each adds its own dataset version. */
function sharedOptions(flags: Flags, config: GateConfig, cwd: string, baseline: Side, candidate: Side): Omit<RunOptions, 'datasetVersion' | 'aws'> {
  return {
    configFile: flags.config,
    config,
    outDir: resolve(cwd, flags.out),
    cacheDir: resolve(cwd, flags['cache-dir'] ?? defaultCacheDir()),
    repeats: flags.repeats ?? config.repeats,
    tests: selectTests(config, flags.tests, flags.config),
    baseline,
    candidate,
    keep: flags.keep,
  };
}

function selectTests(config: GateConfig, list: string | undefined, file: string): TestSpec[] {
  if (!list) return config.tests;
  const wanted = list.split(',').map((s) => s.trim()).filter(Boolean);
  const known = new Set(config.tests.map((t) => t.name));
  const unknown = wanted.filter((w) => !known.has(w));
  if (unknown.length) throw new InputError(`--tests: no test named ${unknown.map((u) => `"${u}"`).join(', ')} in ${file} (tests: ${[...known].join(', ')})`);
  return config.tests.filter((t) => wanted.includes(t.name));
}

/** provision writes {"kind":"local"} for the local bench; anything else is a wiring mistake. */
async function checkLocalBenchFile(file: string): Promise<void> {
  let kind: unknown;
  try {
    kind = (JSON.parse(await readFile(file, 'utf8')) as { kind?: unknown }).kind;
  } catch (error) {
    throw new InputError(`--bench-file: cannot read ${file} as JSON: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (kind !== 'local') throw new InputError(`--bench-file: ${file} describes a "${String(kind)}" bench, but the config's bench.kind is local`);
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

/**
 * Interleaved order: for each repeat and each test, baseline then candidate, so slow
 * drift of the machine (thermal, neighbours) hits both sides alike.
 */
export function schedule(o: Pick<RunOptions, 'repeats' | 'tests' | 'baseline' | 'candidate'>): ScheduledRun[] {
  const runs: ScheduledRun[] = [];
  for (let repeat = 0; repeat < o.repeats; repeat++) {
    for (const test of o.tests) {
      runs.push({ side: o.baseline, test, repeat }, { side: o.candidate, test, repeat });
    }
  }
  return runs;
}

/**
 * Outside the work tree, so a fresh clone (CI) reuses the venvs, k6 build and datasets of
 * earlier runs on the same machine; GitHub Actions can cache this folder.
 */
export function defaultCacheDir(): string {
  return process.env.LOADGATE_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'loadgate');
}
