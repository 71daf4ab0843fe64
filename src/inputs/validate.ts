import { z } from 'zod';
import { CHAT_SERVER_BENCHES, serversOf } from '../config/chat-servers.ts';
import type { GateConfig } from '../config/schema.ts';
import { GITHUB_HOSTED_JOB_LIMIT_MINUTES, jobBudgetFix, jobBudgetSec, runnerLimitSchema } from '../aws/job-limits.ts';
import { checkPairsFitRunJobs } from '../aws/run-jobs-fit.ts';
import { InputError } from '../util/errors.ts';
import { durationSchema } from '../util/duration.ts';
import { matchesFilterPatterns, parseFilterPatterns } from './glob.ts';
import {
  BENCH_KINDS,
  CHECK_NAME,
  CONFIG_PATH,
  MAX_COST,
  MAX_REPEATS,
  MAX_TESTS,
  MAX_VERSION_LENGTH,
  REPEATS,
  RUNNER_LIMIT_MINUTES,
  TEST_NAME,
  VERSION_LABEL,
  quoteForMessage,
  type BenchKind,
} from './patterns.ts';

/**
 * Workflow inputs as they arrive: strings from `workflow_dispatch`, the pushed tag, or
 * flags. Empty strings mean "not given" (that is how Actions passes an unset input).
 */
export interface RawGateInputs {
  candidate?: string | undefined;
  baseline?: string | undefined;
  tests?: string | undefined;
  repeats?: string | undefined;
  bench?: string | undefined;
  config?: string | undefined;
  checkName?: string | undefined;
  rcPattern?: string | undefined;
  /** AWS bench budget in USD; empty: the config's bench.aws.maxCostUsd, if any. */
  maxCost?: string | undefined;
  /** The runners' job limit in whole minutes; empty: GitHub-hosted (360). */
  runnerLimitMinutes?: string | undefined;
  /** Time each AWS run job may spend starting runs (a duration); empty: the limit less the margin. */
  runJobBudget?: string | undefined;
  /** Most pairs while undecided; empty: the config's maxRepeats. */
  maxRepeats?: string | undefined;
  /** The workflow run id of an earlier, inconclusive gate (or calibration) whose pairs this one continues. */
  continueFrom?: string | undefined;
  /**
   * The pairs that earlier gate ran, from its report (src/inputs/continuation.ts): all of
   * them are reused, so the bench runs only the pairs above them.
   */
  earlierPairs?: string | undefined;
  /** gate (empty) or calibrate: the candidate on both sides, `repeats` A/A pairs, no verdict. */
  mode?: string | undefined;
  /** GITHUB_EVENT_NAME, GITHUB_REF_TYPE, GITHUB_REF_NAME: where the candidate came from. */
  eventName?: string | undefined;
  refType?: string | undefined;
  refName?: string | undefined;
}

export type WorkflowMode = 'gate' | 'calibrate';

export interface GateInputs {
  mode: WorkflowMode;
  candidate: string;
  /** null: pick the newest stable tag below the candidate. */
  baseline: string | null;
  /** Test names to run; every test of the config when the input was empty. */
  tests: string[];
  repeats: number;
  bench: BenchKind;
  config: string;
  checkName: string;
  rcPattern: string;
  /** null: no limit given here (the gate config's bench.aws.maxCostUsd still applies). */
  maxCost: number | null;
  runnerLimitMinutes: number;
  /** Seconds each AWS run job may spend starting runs (src/aws/job-limits.ts jobBudgetSec). */
  runJobBudgetSec: number;
  /** Most pairs while undecided; null: the config's maxRepeats. */
  maxRepeats: number | null;
  /** The earlier gate's workflow run id; null: a new gate. */
  continueFrom: string | null;
  /** The pairs a continuation reuses (the earlier gate's); 0 for a new gate. */
  earlierPairs: number;
  /**
   * Most pairs this gate may still run (the bench's plan and budget, its expiry and the
   * run jobs' fit): the cap less the pairs a continuation reuses.
   */
  newPairsAtMost: number;
}

export const DEFAULT_CONFIG_PATH = '.github/loadgate.yml';
export const DEFAULT_CHECK_NAME = 'loadgate';
const DEFAULT_RC_PATTERN = 'v*-rc*';

/** A version label: the strict base pattern first, then the gate's own `target.versionPattern`. */
export function validateVersionLabel(value: string, field: string, versionPattern?: string): string {
  if (value.length > MAX_VERSION_LENGTH) {
    throw new InputError(`${field}: ${quoteForMessage(value)} is longer than ${MAX_VERSION_LENGTH} characters; give a version such as v1.2.3 or v1.2.3-rc1`);
  }
  if (!VERSION_LABEL.test(value)) {
    throw new InputError(
      `${field}: ${quoteForMessage(value)} is not a version label; expected MAJOR.MINOR.PATCH with an optional leading "v" and "-rcN" (for example v1.2.3 or v1.2.3-rc1), ASCII only`,
    );
  }
  if (versionPattern !== undefined && !new RegExp(versionPattern).test(value)) {
    throw new InputError(
      `${field}: ${quoteForMessage(value)} does not match the gate's target.versionPattern ${quoteForMessage(versionPattern, 120)}; fix the tag or the pattern in the gate config`,
    );
  }
  return value;
}

const rawSchema = z.strictObject({
  candidate: z.string().optional(),
  baseline: z.string().optional(),
  tests: z.string().optional(),
  repeats: z.string().optional(),
  bench: z.string().optional(),
  config: z.string().optional(),
  checkName: z.string().optional(),
  rcPattern: z.string().optional(),
  maxCost: z.string().optional(),
  runnerLimitMinutes: z.string().optional(),
  runJobBudget: z.string().optional(),
  maxRepeats: z.string().optional(),
  continueFrom: z.string().optional(),
  earlierPairs: z.string().optional(),
  mode: z.string().optional(),
  eventName: z.string().optional(),
  refType: z.string().optional(),
  refName: z.string().optional(),
});

function given(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function parseTests(value: string | undefined, config: GateConfig | undefined): string[] {
  const all = config?.tests.map((t) => t.name) ?? [];
  if (value === undefined) return all;
  if (value.length > MAX_TESTS * 64) throw new InputError(`tests: the list is ${value.length} characters long; name at most ${MAX_TESTS} tests`);
  // Commas or single spaces separate names; anything else (tabs, newlines, ;) is refused below.
  const names = value.split(/,| /).filter((n) => n !== '');
  if (!names.length) return all;
  if (names.length > MAX_TESTS) throw new InputError(`tests: ${names.length} tests named; at most ${MAX_TESTS}`);
  const seen = new Set<string>();
  for (const name of names) {
    if (!TEST_NAME.test(name)) {
      throw new InputError(
        `tests: ${quoteForMessage(name)} is not a test name; use the lower-case names from the gate config (letters, digits, dashes), separated by commas`,
      );
    }
    if (seen.has(name)) throw new InputError(`tests: "${name}" is listed twice`);
    seen.add(name);
    if (config && !all.includes(name)) {
      throw new InputError(`tests: "${name}" is not a test in the gate config; its tests are: ${all.join(', ')}`);
    }
  }
  return names;
}

function parseRepeats(value: string | undefined, config: GateConfig | undefined): number {
  if (value === undefined) return config?.repeats ?? 1;
  const n = Number(value);
  if (!REPEATS.test(value) || n < 1 || n > MAX_REPEATS) {
    throw new InputError(`repeats: ${quoteForMessage(value)} is not a number of runs; give a whole number from 1 to ${MAX_REPEATS}`);
  }
  return n;
}

function parseMaxRepeats(value: string | undefined, repeats: number): number | null {
  if (value === undefined) return null;
  const n = Number(value);
  if (!REPEATS.test(value) || n < 1 || n > MAX_REPEATS) {
    throw new InputError(`max-repeats: ${quoteForMessage(value)} is not a number of pairs; give a whole number from 1 to ${MAX_REPEATS}`);
  }
  if (n < repeats) throw new InputError(`max-repeats: ${n} is below the ${repeats} pairs every gate runs (repeats); give at least ${repeats}`);
  return n;
}

/** A workflow run id, as in the run's address (…/actions/runs/<id>). */
function parseContinueFrom(value: string | undefined, maxRepeats: number | null): string | null {
  if (value === undefined) return null;
  if (!/^[0-9]{1,20}$/.test(value)) {
    throw new InputError(
      `continue-from: ${quoteForMessage(value)} is not a workflow run id; give the number at the end of the earlier gate's run address (…/actions/runs/<id>)`,
    );
  }
  if (maxRepeats === null) {
    throw new InputError(
      'continue-from: give max-repeats too, the new cap on the pairs (above the pairs the earlier gate ran): without it the continued gate stops where the earlier one did',
    );
  }
  return value;
}

/**
 * The pairs a continuation reuses: every pair the earlier gate ran, as its report says
 * (check-inputs reads it), below the new cap; a cap at or under them adds nothing.
 */
function parseEarlierPairs(value: string | undefined, continueFrom: string | null, cap: number, capName: string): number {
  if (continueFrom === null) return 0;
  const n = Number(value);
  if (value === undefined || !REPEATS.test(value) || n < 1 || n > MAX_REPEATS) {
    throw new InputError(
      `continue-from: how many pairs run ${continueFrom} ran is unknown (its report's verdict.json is read for it); got ${value === undefined ? 'none' : quoteForMessage(value)}`,
    );
  }
  if (cap <= n) {
    throw new InputError(
      `${capName}: ${cap} is not above the ${n} pairs run ${continueFrom} already ran, so a continuation would add none; give at least ${n + 1} (at most ${MAX_REPEATS})`,
    );
  }
  return n;
}

function parseMaxCost(value: string | undefined): number | null {
  if (value === undefined) return null;
  const n = Number(value);
  if (!MAX_COST.test(value) || !(n > 0)) {
    throw new InputError(
      `max-cost: ${quoteForMessage(value)} is not an amount of US dollars; give digits with an optional dot and up to two decimals, above 0 (for example 80 or 79.50)`,
    );
  }
  return n;
}

function parseRunnerLimit(value: string | undefined): number {
  if (value === undefined) return GITHUB_HOSTED_JOB_LIMIT_MINUTES;
  const parsed = runnerLimitSchema.safeParse(value);
  if (!RUNNER_LIMIT_MINUTES.test(value) || !parsed.success) {
    throw new InputError(
      `runner-limit-minutes: ${quoteForMessage(value)} is not a job limit; give whole minutes from 30 to 7200 (GitHub-hosted runners: ${GITHUB_HOSTED_JOB_LIMIT_MINUTES})`,
    );
  }
  return parsed.data;
}

/** The AWS run jobs' budget, checked here so a bad one stops the gate before anything is provisioned. */
function parseRunJobBudget(value: string | undefined, limitMinutes: number): number {
  const names = { limit: 'runner-limit-minutes', budget: 'run-job-budget' };
  if (value === undefined) return jobBudgetSec(limitMinutes, undefined, names);
  const parsed = durationSchema.safeParse(value);
  if (!parsed.success) throw new InputError(`run-job-budget: ${quoteForMessage(value)} is not a duration; ${jobBudgetFix(limitMinutes, names)}`);
  return jobBudgetSec(limitMinutes, parsed.data, names);
}

function parseBench(value: string | undefined, config: GateConfig | undefined): BenchKind {
  if (value === undefined) return config?.bench.kind ?? 'local';
  if (!(BENCH_KINDS as readonly string[]).includes(value)) {
    throw new InputError(`bench: ${quoteForMessage(value)} is not a bench; use one of: ${BENCH_KINDS.join(', ')}`);
  }
  return value as BenchKind;
}

export function validateConfigPath(value: string): string {
  if (!CONFIG_PATH.test(value) || value.split('/').some((segment) => segment === '..' || segment === '.' || segment === '')) {
    throw new InputError(
      `config: ${quoteForMessage(value)} is not an accepted gate config path; give a path inside the repository such as ${DEFAULT_CONFIG_PATH} (no "..", no leading "/")`,
    );
  }
  return value;
}

export function validateCheckName(value: string): string {
  if (!CHECK_NAME.test(value)) {
    throw new InputError(`check-name: ${quoteForMessage(value)} is not an accepted check name; use up to 64 letters, digits, spaces, ".", "_" or "-"`);
  }
  return value;
}

/** Where the candidate comes from: the input, else the pushed tag. */
function candidateOf(raw: z.output<typeof rawSchema>, rcPattern: string): string {
  const input = given(raw.candidate);
  if (input !== undefined) return input;
  if (raw.eventName === 'push' && raw.refType === 'tag' && given(raw.refName) !== undefined) {
    const tag = raw.refName as string;
    if (!matchesFilterPatterns(tag, parseFilterPatterns(rcPattern))) {
      throw new InputError(
        `candidate: the pushed tag ${quoteForMessage(tag)} does not match the release-candidate pattern ${quoteForMessage(rcPattern)}; keep the rc-pattern input and the workflow's on.push.tags filter the same`,
      );
    }
    return tag;
  }
  throw new InputError('candidate: no candidate version; give the candidate input (for example v1.2.3-rc1) or run on a pushed release-candidate tag');
}

function parseMode(value: string | undefined): WorkflowMode {
  if (value === undefined || value === 'gate' || value === 'calibrate') return value ?? 'gate';
  throw new InputError(
    `mode: ${quoteForMessage(value)} is not a mode; use gate (compare a candidate with a baseline) or calibrate (measure the bench's noise)`,
  );
}

/**
 * A calibration runs the candidate input on both sides for exactly `repeats` A/A pairs, as
 * `loadgate calibrate --version --runs` does: the gate-only inputs would be ignored, so
 * they are refused rather than silently dropped.
 */
function checkCalibrationInputs(raw: z.output<typeof rawSchema>): void {
  if (given(raw.candidate) === undefined) {
    throw new InputError(
      'candidate: a calibration needs the version to run on both sides; give the candidate input (for example v10.11.0, a released version)',
    );
  }
  for (const [value, name, why] of [
    [raw.baseline, 'baseline', 'it runs the candidate on both sides'],
    [raw.maxRepeats, 'max-repeats', 'repeats is the number of A/A pairs it ends with'],
  ] as const) {
    if (given(value) !== undefined) throw new InputError(`${name}: not used by a calibration (${why}); leave it empty with mode calibrate`);
  }
  const repeats = given(raw.repeats);
  const n = Number(repeats);
  if (repeats === undefined || !REPEATS.test(repeats) || n < 2 || n > MAX_REPEATS) {
    throw new InputError(
      `repeats: a calibration needs the number of A/A pairs, 2 to ${MAX_REPEATS} (with n pairs each metric gets 2n − 1 degrees of freedom, n − 1 in duet mode; use at least 3), got ${repeats === undefined ? 'none' : quoteForMessage(repeats)}`,
    );
  }
}

/**
 * Validates every gate input before anything uses it. With the gate config, tests are
 * checked against its test names and versions against its `target.versionPattern`;
 * unset inputs take the config's values.
 */
export function validateGateInputs(input: RawGateInputs, config?: GateConfig): GateInputs {
  const parsed = rawSchema.safeParse(input);
  if (!parsed.success) throw new InputError(`inputs: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  const raw = parsed.data;
  const mode = parseMode(given(raw.mode));
  if (mode === 'calibrate') checkCalibrationInputs(raw);
  const rcPattern = given(raw.rcPattern) ?? DEFAULT_RC_PATTERN;
  parseFilterPatterns(rcPattern);
  const versionPattern = config?.target.versionPattern;
  const candidate = validateVersionLabel(candidateOf(raw, rcPattern), 'candidate', versionPattern);
  const baselineInput = given(raw.baseline);
  const baseline = baselineInput === undefined ? null : validateVersionLabel(baselineInput, 'baseline', versionPattern);
  if (baseline === candidate) throw new InputError(`baseline: equals the candidate (${candidate}); compare two different versions`);
  const bench = parseBench(given(raw.bench), config);
  if (config && bench !== CHAT_SERVER_BENCHES[config.target.system]) {
    throw new InputError(
      `bench: target.system "${config.target.system}" runs on the ${CHAT_SERVER_BENCHES[config.target.system]} bench, not ${bench}; use bench ${CHAT_SERVER_BENCHES[config.target.system]} or a gate config for ${serversOf(bench).join(', ')}`,
    );
  }
  const runnerLimitMinutes = parseRunnerLimit(given(raw.runnerLimitMinutes));
  const tests = parseTests(given(raw.tests), config);
  const repeats = parseRepeats(given(raw.repeats), config);
  // A duet's noise is its ratio: n duets measure n − 1 degrees of freedom, and a metric needs 2.
  if (mode === 'calibrate' && config?.mode === 'duet' && repeats < 3) {
    throw new InputError(
      `repeats: a calibration in duet mode (the config's mode: duet) needs at least 3 A/A duets, got ${repeats}: n duets measure each metric with n − 1 degrees of freedom, and fewer than 2 measure nothing`,
    );
  }
  const configPath = validateConfigPath(given(raw.config) ?? DEFAULT_CONFIG_PATH);
  // A calibration ends with exactly its repeats pairs: its cap is the same number.
  const maxRepeats = mode === 'calibrate' ? repeats : parseMaxRepeats(given(raw.maxRepeats), repeats);
  const continueFrom = parseContinueFrom(given(raw.continueFrom), maxRepeats);
  const cap = Math.max(maxRepeats ?? config?.maxRepeats ?? repeats, repeats);
  const earlierPairs = parseEarlierPairs(given(raw.earlierPairs), continueFrom, cap, mode === 'calibrate' ? 'repeats' : 'max-repeats');
  // --resume reuses every pair the earlier gate ran: the bench runs only those above them.
  const newPairsAtMost = cap - earlierPairs;
  if (config && bench === 'aws') {
    const selected = { ...config, tests: config.tests.filter((t) => tests.includes(t.name)) };
    // The setting that sets the cap is the one to lower: repeats above the cap raise it.
    const capName =
      mode === 'calibrate'
        ? 'repeats (the A/A pairs of a calibration)'
        : maxRepeats !== null
          ? 'max-repeats'
          : repeats > (config.maxRepeats ?? 0)
            ? 'repeats'
            : `maxRepeats (${configPath})`;
    checkPairsFitRunJobs(
      selected,
      { repeats: Math.min(repeats, newPairsAtMost), maxRepeats: newPairsAtMost },
      runnerLimitMinutes,
      { repeats: 'repeats', maxRepeats: capName, limit: 'runner-limit-minutes' },
      earlierPairs,
    );
  }
  return {
    mode,
    candidate,
    // A calibration's two sides are the one version.
    baseline: mode === 'calibrate' ? candidate : baseline,
    tests,
    repeats,
    bench,
    config: configPath,
    checkName: validateCheckName(given(raw.checkName) ?? DEFAULT_CHECK_NAME),
    rcPattern,
    maxCost: parseMaxCost(given(raw.maxCost)),
    runnerLimitMinutes,
    runJobBudgetSec: parseRunJobBudget(given(raw.runJobBudget), runnerLimitMinutes),
    maxRepeats,
    continueFrom,
    earlierPairs,
    newPairsAtMost,
  };
}
