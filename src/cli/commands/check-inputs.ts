import { existsSync } from 'node:fs';
import { z } from 'zod';
import { loadGateConfig } from '../../config/load.ts';
import { readActionsContext } from '../../github/actions-context.ts';
import { emitOutputs } from '../../github/outputs.ts';
import { validateConfigPath, validateGateInputs, DEFAULT_CONFIG_PATH, type RawGateInputs } from '../../inputs/validate.ts';
import { parseFlags } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

export const usage = `Usage: loadgate check-inputs [--candidate V] [--baseline V] [--tests LIST] [--repeats N]
                              [--bench local|aws] [--max-cost USD] [--config FILE]
                              [--check-name NAME] [--rc-pattern GLOBS]
                              [--runner-limit-minutes N] [--run-job-budget DURATION]
                              [--json] [--github-output]

Validates the gate's workflow inputs against strict patterns (and the gate config, when
it exists) before anything uses them, then prints them as key=value lines (or JSON).
Each value can also come from the environment, which is how the workflow passes them:
INPUT_CANDIDATE, INPUT_BASELINE, INPUT_TESTS, INPUT_REPEATS, INPUT_BENCH, INPUT_MAX_COST,
INPUT_CONFIG, INPUT_CHECK_NAME, INPUT_RC_PATTERN (GitHub filter patterns, comma-separated,
as on.push.tags lists them), INPUT_RUNNER_LIMIT_MINUTES (whole minutes, 30 to 7200; empty:
360) and INPUT_RUN_JOB_BUDGET (a duration such as 4h30m, 90s or 90, above 0 and at most
the runner limit less 20 minutes; empty: that most); with no candidate, a pushed tag (the
Actions context: GITHUB_EVENT_NAME=push, GITHUB_REF=refs/tags/<tag>) is the candidate.
Flags win over the environment. An empty baseline means "pick it": run pick-baseline next.`;

const options = {
  candidate: { type: 'string' },
  baseline: { type: 'string' },
  tests: { type: 'string' },
  repeats: { type: 'string' },
  bench: { type: 'string' },
  'max-cost': { type: 'string' },
  config: { type: 'string' },
  'check-name': { type: 'string' },
  'rc-pattern': { type: 'string' },
  'runner-limit-minutes': { type: 'string' },
  'run-job-budget': { type: 'string' },
  json: { type: 'boolean' },
  'github-output': { type: 'boolean' },
} as const;

const flagsSchema = z.strictObject({
  candidate: z.string().optional(),
  baseline: z.string().optional(),
  tests: z.string().optional(),
  repeats: z.string().optional(),
  bench: z.string().optional(),
  'max-cost': z.string().optional(),
  config: z.string().optional(),
  'check-name': z.string().optional(),
  'rc-pattern': z.string().optional(),
  'runner-limit-minutes': z.string().optional(),
  'run-job-budget': z.string().optional(),
  json: z.boolean().default(false),
  'github-output': z.boolean().default(false),
  positionals: z.array(z.string()).max(0, 'check-inputs takes no positional arguments'),
});

const envSchema = z.object({
  INPUT_CANDIDATE: z.string().optional(),
  INPUT_BASELINE: z.string().optional(),
  INPUT_TESTS: z.string().optional(),
  INPUT_REPEATS: z.string().optional(),
  INPUT_BENCH: z.string().optional(),
  INPUT_MAX_COST: z.string().optional(),
  INPUT_CONFIG: z.string().optional(),
  INPUT_CHECK_NAME: z.string().optional(),
  INPUT_RC_PATTERN: z.string().optional(),
  INPUT_RUNNER_LIMIT_MINUTES: z.string().optional(),
  INPUT_RUN_JOB_BUDGET: z.string().optional(),
});

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = parseFlags(argv, options, flagsSchema, usage);
  const env = envSchema.parse(process.env);
  // Where the candidate came from: the event and the pushed ref.
  const context = await readActionsContext();
  const raw: RawGateInputs = {
    candidate: flags.candidate ?? env.INPUT_CANDIDATE,
    baseline: flags.baseline ?? env.INPUT_BASELINE,
    tests: flags.tests ?? env.INPUT_TESTS,
    repeats: flags.repeats ?? env.INPUT_REPEATS,
    bench: flags.bench ?? env.INPUT_BENCH,
    maxCost: flags['max-cost'] ?? env.INPUT_MAX_COST,
    config: flags.config ?? env.INPUT_CONFIG,
    checkName: flags['check-name'] ?? env.INPUT_CHECK_NAME,
    rcPattern: flags['rc-pattern'] ?? env.INPUT_RC_PATTERN,
    runnerLimitMinutes: flags['runner-limit-minutes'] ?? env.INPUT_RUNNER_LIMIT_MINUTES,
    runJobBudget: flags['run-job-budget'] ?? env.INPUT_RUN_JOB_BUDGET,
    eventName: context.eventName,
    refType: context.refType,
    refName: context.refName,
  };
  // The path is validated before it is opened; the config then refines the other inputs.
  const configPath = validateConfigPath(raw.config || DEFAULT_CONFIG_PATH);
  const config = existsSync(configPath) ? await loadGateConfig(configPath) : undefined;
  if (!config) io.err(`note: ${configPath} not found; tests and versions are checked against the strict patterns only`);
  const inputs = validateGateInputs({ ...raw, config: configPath }, config);
  const outputs = {
    candidate: inputs.candidate,
    baseline: inputs.baseline ?? '',
    'needs-baseline': inputs.baseline === null,
    tests: inputs.tests.join(','),
    'tests-json': JSON.stringify(inputs.tests),
    repeats: inputs.repeats,
    bench: inputs.bench,
    'max-cost': inputs.maxCost ?? '',
    config: inputs.config,
    'check-name': inputs.checkName,
  };
  const githubOutput = flags['github-output'] ? process.env.GITHUB_OUTPUT : undefined;
  if (flags.json) {
    io.out(JSON.stringify(outputs));
    if (githubOutput) emitOutputs(outputs, { out: () => {}, err: () => {} }, githubOutput);
  } else {
    emitOutputs(outputs, io, githubOutput);
  }
  return 0;
}
