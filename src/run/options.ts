import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { defineCommand, flag, parseFlags, section } from '../util/flags.ts';
import { loadGateConfig } from '../config/load.ts';
import { creepAnchorSchema, type GateConfig, type TestSpec } from '../config/schema.ts';
import { InputError } from '../util/errors.ts';
import { CapacityHints } from '../bench/capacity-hints.ts';
import type { RunOptions, ScheduledRun, Side } from '../bench/gate-plan.ts';
import { durationSchema } from '../util/duration.ts';
import { jobBudgetSec, runnerLimitSchema } from '../aws/job-limits.ts';
import { checkPairsFitRunJobs } from '../aws/run-jobs-fit.ts';
import { candidateFirst } from '../compare/sequential.ts';
import { BUILTIN_PREFIX, isBuiltinNoiseModel } from '../noise/model.ts';
import type { Override } from '../chat-servers/chat-server.ts';
import { chatServerOf } from '../chat-servers/registry.ts';

const wholeNumber = (range: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'expected a whole number')
    .transform(Number)
    .refine((n) => n >= min && n <= max, `expected ${range}`);

const cpuQuotaSchema = z
  .string()
  .regex(/^(0?\.\d+|1(\.0+)?)$/, 'expected a fraction of the target cores such as 0.88')
  .transform(Number)
  .refine((f) => f > 0 && f <= 1, 'expected a fraction above 0 and at most 1');

const path = z.string().min(1);

/**
 * `loadgate run` flags, checked in full before anything is installed or started:
 * config, version labels, overrides and test names. Every problem is an InputError
 * (exit 3) naming the flag and the fix.
 */
export const runCommand = defineCommand({
  command: 'run',
  about: `Runs baseline/candidate pairs of every test in a counterbalanced order (AB, BA, BA,
AB, BA, AB, AB, BA…, so a steady drift of the machine cancels), at least the config's
repeats and, while the sequential decision is undecided, up to its maxRepeats; then writes
<out>/verdict.json, <out>/README.md, graphs and per-run results, and exits with the verdict.
  bench.kind: local   installs what is missing and starts PostgreSQL, nginx, Prometheus
                      and node_exporter on 127.0.0.1 (Synapse, k6).
  bench.kind: aws     drives a provisioned bench (Mattermost; k6 or load-test-ng agents)
                      through SSM, the agents' APIs and the metrics node's Prometheus;
                      needs --bench-file and --users-file.`,
  flags: {
    config: flag.required('<file>', z.string({ error: 'required: the gate config file' }).min(1), 'Gate config (e.g. examples/local-synapse.yml)'),
    baseline: flag.required(
      '<version|build>',
      z.string({ error: 'required: the baseline version' }).min(1),
      'Baseline version (e.g. 1.162.0), or a build: a Synapse wheel or source directory (./path, /path or file:path), a Mattermost build tarball URL (https://…tar.gz)',
    ),
    candidate: flag.required(
      '<version|build>',
      z.string({ error: 'required: the candidate version' }).min(1),
      'Candidate version or build, the same forms (e.g. 1.163.2); may equal the baseline (A/A)',
    ),
    out: flag.required(
      '<dir>',
      z.string({ error: 'required: the report directory' }).min(1),
      'Report directory: new, empty or written by loadgate before (it holds .loadgate-output.json); logs are kept in <out>/logs',
    ),
    repeats: flag.optional('<n>', wholeNumber('1 to 20', 1, 20), "Minimum pairs (default: the config's repeats)"),
    'max-repeats': flag.optional('<n>', wholeNumber('1 to 20', 1, 20), "Most pairs while undecided (default: the config's maxRepeats)"),
    resume: flag.toggle('Reuse the completed, valid results already in <out>/results for the runs scheduled (crashed or not-run ones are re-run)'),
    'update-noise-model': flag.toggle(
      "Also write the noise model pooled with this gate's spread over the config's noiseModel file (always: <out>/noise-model.json)",
    ),
    'job-budget': flag.optional(
      '<duration>',
      durationSchema.refine((s) => s > 0, 'expected a duration above 0, e.g. 5h30m'),
      'Start no run that would end after this long (e.g. 5h30m, 90s or 90 seconds); the gate then stops with next "repeat" (exit 2) for a resume',
    ),
    'runner-limit': flag.optional(
      '<minutes>',
      runnerLimitSchema,
      'One job of a multi-job gate on runners with this job limit (whole minutes, 30 to 7200): the job budget is the limit less 20 minutes for set-up, or a lower --job-budget (a higher one is refused)',
    ),
    'expect-users': flag.optional(
      '<n>',
      z
        .string()
        .regex(/^\d+$/, 'expected a whole number of users, e.g. 150')
        .transform(Number)
        .refine((n) => n >= 1, 'expected at least 1 user'),
      'Warm-start hint for unbounded tests with warmStart: the capacity expected for the baseline (starts below it, climbs)',
    ),
    history: flag.optional(
      '<dir>',
      path,
      "The profile's earlier gates (e.g. runs/local/<profile>): warm-start hints from the run results in this folder (any depth: the newest converged run of the same version and test on this bench kind, never one under a CPU quota), and the gate history in its history/ folder, which the creep check chains, the report draws and this gate's record is appended to. Without it, hints come only from this gate's own runs (a resumed one's too) and --expect-users, and no history is kept",
    ),
    tests: flag.optional('<a,b>', z.string(), 'Only these tests (by name)'),
    'creep-anchor': flag.optional(
      '<release|pattern>',
      creepAnchorSchema,
      "The creep check's anchor, over the config's creep.anchor: the change since this release (or the last one matching the pattern) is judged too",
    ),
    'baseline-set': flag.list(
      '<k=v>',
      z.array(z.string()),
      'Patch the target config for the baseline only: dotted key, YAML scalar value, e.g. --baseline-set caches.global_factor=0.05 (Synapse) or --baseline-set ServiceSettings.EnableLinkPreviews=false (Mattermost)',
    ),
    'candidate-set': flag.list('<k=v>', z.array(z.string()), 'The same for the candidate only'),
    'baseline-cpu-quota': flag.optional(
      '<f>',
      cpuQuotaSchema,
      "Local bench: limit the baseline's target (Synapse) to this fraction of the target cores with a cgroup CPU quota (v1 or v2; needs root); its CPU utilisation is then measured against that share, so 0.88 is a known 12 % capacity loss where the ceiling is CPU-bound",
    ),
    'candidate-cpu-quota': flag.optional('<f>', cpuQuotaSchema, 'The same for the candidate'),
    keep: flag.toggle('Keep the bench data dirs (databases, Prometheus TSDB)'),
    'cache-dir': flag.optional('<dir>', path, 'Cache for Synapse venvs, k6 and datasets (default: $LOADGATE_CACHE_DIR, else ~/.cache/loadgate)'),
    ...section('AWS bench', {
      'bench-file': flag.optional('<file>', path, 'Bench description written by provision (loadgate tf-outputs)'),
      'users-file': flag.optional('<file>', path, 'The dataset\'s users, "login password" per line, uploaded to the agents'),
      snapshots: flag.withDefault('<mode>', z.enum(['local', 'external', 'off']), 'local', 'Grafana snapshot per run: local, external or off'),
    }),
  },
  notes: 'Exit codes: 0 pass, 1 fail, 2 inconclusive, 3 bad input.',
});

export const usage = runCommand.usage;

/** The flags, with --history resolved against `cwd` and checked: a mistyped folder must not silently mean "no hints". */
function flagsSchemaIn(cwd: string) {
  const history = z
    .string()
    .min(1)
    .transform((dir) => resolve(cwd, dir))
    .refine(isDirectory, { error: (issue) => `no folder ${String(issue.input)}: name a folder of earlier run results, e.g. an earlier gate's --out` });
  return runCommand.schema.extend({ history: history.optional() });
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export async function parseRunOptions(argv: string[], cwd = process.cwd()): Promise<RunOptions> {
  const flags = parseFlags(argv, runCommand.options, flagsSchemaIn(cwd), usage);
  const loaded = await loadGateConfig(flags.config);
  const anchor = flags['creep-anchor'];
  const config: GateConfig = anchor !== undefined ? { ...loaded, creep: { anchor } } : loaded;
  const server = chatServerOf(config.target.system);
  if (server.bench !== config.bench.kind) throw new InputError(benchMismatch(flags.config, config));
  const benchInputs = config.bench.kind === 'aws' ? awsBenchInputs(flags, cwd) : await localBenchInputs(flags, config, cwd);
  let base: Override[];
  try {
    base = server.baseOverrides(config.target);
  } catch (error) {
    throw new InputError(`${flags.config}: ${(error as Error).message}`);
  }
  const side = (role: 'baseline' | 'candidate', label: string, sets: string[]): Side => {
    const cpuQuota = flags[`${role}-cpu-quota`];
    return { role, label, ...server.side(role, label, sets, config.target, base, cwd), ...(cpuQuota !== undefined ? { cpuQuota } : {}) };
  };
  const baseline = side('baseline', flags.baseline, flags['baseline-set']);
  const candidate = side('candidate', flags.candidate, flags['candidate-set']);
  const shared = sharedOptions(flags, config, cwd, baseline, candidate);
  // One job of the workflow's multi-job AWS gate: the pairs asked for must fit in its run jobs.
  const limit = flags['runner-limit'];
  if (limit !== undefined) {
    // maxRepeats follows a larger --repeats (sharedOptions), so the setting to name is the one that set the most.
    const most =
      flags['max-repeats'] !== undefined
        ? '--max-repeats'
        : flags.repeats !== undefined && flags.repeats > config.maxRepeats
          ? '--repeats'
          : `maxRepeats (${flags.config})`;
    const names = { repeats: flags.repeats !== undefined ? '--repeats' : `repeats (${flags.config})`, maxRepeats: most, limit: '--runner-limit' };
    checkPairsFitRunJobs({ ...config, tests: shared.tests }, shared, limit, names);
  }
  return {
    ...shared,
    server,
    datasetVersion: server.datasetVersion(baseline.version, candidate.version),
    ...benchInputs,
  };
}

type Flags = z.output<typeof runCommand.schema>;

function benchMismatch(configFile: string, config: GateConfig): string {
  return config.bench.kind === 'aws'
    ? `${configFile}: bench.kind is "aws" but target.system is "${config.target.system}"; the AWS bench runs Mattermost (target.system: mattermost), Synapse runs on the local bench`
    : `${configFile}: target.system is "${config.target.system}"; the local bench runs Synapse (target.system: synapse)`;
}

/** The local bench drives Synapse with k6 on this machine; a --bench-file must describe a local bench. */
async function localBenchInputs(flags: Flags, config: GateConfig, cwd: string): Promise<Pick<RunOptions, 'aws'>> {
  if (config.engine.kind !== 'k6') {
    throw new InputError(`${flags.config}: engine.kind is "${config.engine.kind}"; the local bench drives Synapse with k6 (engine.kind: k6)`);
  }
  if (flags['bench-file']) await checkLocalBenchFile(resolve(cwd, flags['bench-file']));
  return {};
}

/** The AWS bench: the description provision wrote and the dataset's users; no CPU quota. */
function awsBenchInputs(flags: Flags, cwd: string): Pick<RunOptions, 'aws'> {
  for (const flag of ['baseline-cpu-quota', 'candidate-cpu-quota'] as const) {
    if (flags[flag] !== undefined)
      throw new InputError(
        `--${flag}: only the local bench can set a CPU quota (cgroups on this machine); on AWS, choose a smaller instance type for that side instead`,
      );
  }
  if (!flags['bench-file']) {
    throw new InputError(`--bench-file: required on the AWS bench: the description provision wrote (terraform output -json | loadgate tf-outputs -)`);
  }
  if (!flags['users-file']) {
    throw new InputError(`--users-file: required on the AWS bench: the dataset's users, one "login password" per line, for the agents to log in as`);
  }
  return { aws: { benchFile: resolve(cwd, flags['bench-file']), usersFile: resolve(cwd, flags['users-file']), snapshots: flags.snapshots } };
}

/** What every bench takes from the flags the same way; each adds its own dataset version. */
function sharedOptions(flags: Flags, config: GateConfig, cwd: string, baseline: Side, candidate: Side): Omit<RunOptions, 'datasetVersion' | 'aws' | 'server'> {
  const repeats = flags.repeats ?? config.repeats;
  // The config's maxRepeats follows a larger --repeats; an explicit --max-repeats must not be below it.
  const maxRepeats = flags['max-repeats'] ?? Math.max(config.maxRepeats, repeats);
  if (flags['update-noise-model'] && !config.noiseModel)
    throw new InputError(
      `--update-noise-model: ${flags.config} has no noiseModel to update; add noiseModel: <file> to it (the pooled model is always written to <out>/noise-model.json)`,
    );
  if (flags['update-noise-model'] && isBuiltinNoiseModel(config.noiseModel))
    throw new InputError(
      `--update-noise-model: ${flags.config} names ${config.noiseModel}, a model loadgate ships, which is not written over; copy noise/${config.noiseModel?.slice(BUILTIN_PREFIX.length)}.json from loadgate next to the config and name that file in noiseModel`,
    );
  if (maxRepeats < repeats) throw new InputError(`--max-repeats: ${maxRepeats} is below the minimum of ${repeats} pairs (--repeats or the config's repeats)`);
  return {
    configFile: flags.config,
    config,
    outDir: resolve(cwd, flags.out),
    cacheDir: resolve(cwd, flags['cache-dir'] ?? defaultCacheDir()),
    repeats,
    maxRepeats,
    resume: flags.resume,
    updateNoiseModel: flags['update-noise-model'],
    ...jobBudgetOption(flags),
    hints: gateHints(flags, config),
    ...(flags.history !== undefined ? { historyDir: flags.history } : {}),
    tests: selectTests(config, flags.tests, flags.config),
    baseline,
    candidate,
    keep: flags.keep,
  };
}

/** A fresh set per gate, so no gate starts from another's runs. */
function gateHints(flags: Flags, config: GateConfig): CapacityHints {
  const expectUsers = flags['expect-users'];
  return new CapacityHints({
    ...(expectUsers !== undefined ? { expectUsers } : {}),
    ...(flags.history !== undefined ? { historyDir: flags.history } : {}),
    benchKind: config.bench.kind,
  });
}

/** --job-budget alone, or with --runner-limit the limit less the set-up margin (a lower --job-budget wins). */
function jobBudgetOption(flags: Flags): Pick<RunOptions, 'jobBudgetSec'> {
  const limit = flags['runner-limit'];
  const asked = flags['job-budget'];
  if (limit !== undefined) return { jobBudgetSec: jobBudgetSec(limit, asked) };
  return asked !== undefined ? { jobBudgetSec: asked } : {};
}

function selectTests(config: GateConfig, list: string | undefined, file: string): TestSpec[] {
  if (!list) return config.tests;
  const wanted = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
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

/**
 * One pair of every test, in counterbalanced order: pair k runs the candidate first when
 * the Thue–Morse bit of k is 1 (AB, BA, BA, AB, BA, AB, AB, BA…). With the candidate always
 * second, a machine that slows down over the gate makes every candidate look worse; in
 * this order a linear drift cancels over each two pairs, a quadratic one over four.
 */
export function pairRuns(o: Pick<RunOptions, 'tests' | 'baseline' | 'candidate'>, repeat: number): ScheduledRun[] {
  const runs: ScheduledRun[] = [];
  for (const test of o.tests) {
    const a: ScheduledRun = { side: o.baseline, test, repeat };
    const b: ScheduledRun = { side: o.candidate, test, repeat };
    runs.push(...(candidateFirst(repeat) ? [b, a] : [a, b]));
  }
  return runs;
}

/**
 * The runs of the first `repeats` pairs (the minimum), in the order they run.
 * @internal The gate schedules pair by pair (pairRuns); the tests read the whole order.
 */
export function schedule(o: Pick<RunOptions, 'repeats' | 'tests' | 'baseline' | 'candidate'>): ScheduledRun[] {
  const runs: ScheduledRun[] = [];
  for (let repeat = 0; repeat < o.repeats; repeat++) runs.push(...pairRuns(o, repeat));
  return runs;
}

/** How long a run may take at most: a bounded test's duration, an unbounded test's maxDuration. */
export function plannedSeconds(run: ScheduledRun): number {
  return run.test.type === 'bounded' ? run.test.duration : run.test.maxDuration;
}

/**
 * Outside the work tree, so a fresh clone (CI) reuses the venvs, k6 build and datasets of
 * earlier runs on the same machine; GitHub Actions can cache this folder.
 */
export function defaultCacheDir(): string {
  return process.env.LOADGATE_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'loadgate');
}
