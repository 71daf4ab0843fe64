import { existsSync } from 'node:fs';
import { z } from 'zod';
import type { GateConfig } from '../../config/schema.ts';
import { readActionsContext } from '../../github/actions-context.ts';
import { callerWorkflowPath } from '../../github/env.ts';
import { emitOutputs } from '../../github/outputs.ts';
import { checkContinuation, readEarlierGate } from '../../inputs/continuation.ts';
import { loadGateConfigInput } from '../../inputs/gate-config.ts';
import { validateReportsRepository, type ReportsTarget } from '../../inputs/reports-repository.ts';
import { InputError } from '../../util/errors.ts';
import { validateConfigPath, validateGateInputs, DEFAULT_CONFIG_PATH, type GateInputs, type RawGateInputs } from '../../inputs/validate.ts';
import { defineCommand, flag, type FlagTable } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

/** The workflow passes each input as INPUT_<NAME>; the flag of the same name wins. */
const envName = (flagName: string) => `INPUT_${flagName.toUpperCase().replace(/-/g, '_')}`;

/** Workflow inputs: a string flag each, named in the usage with its variable. */
function fromEnv<F extends FlagTable>(flags: F): F {
  return Object.fromEntries(Object.entries(flags).map(([name, f]) => [name, { ...f, help: `${f.help} (or ${envName(name)})` }])) as F;
}

const INPUTS = fromEnv({
  candidate: flag.optional('V', z.string(), 'Candidate version; with none, the tag a push event pushed'),
  baseline: flag.optional('V', z.string(), 'Baseline version; empty means "pick it": run pick-baseline next'),
  tests: flag.optional('LIST', z.string(), 'Test names, comma-separated'),
  repeats: flag.optional('N', z.string(), 'Runs per side'),
  bench: flag.optional('local|aws', z.string(), 'Bench'),
  'max-cost': flag.optional('USD', z.string(), 'AWS bench budget: a cap on the worst-case cost'),
  config: flag.optional('FILE', z.string(), 'Gate config'),
  'check-name': flag.optional('NAME', z.string(), 'Check run name'),
  'rc-pattern': flag.optional('GLOBS', z.string(), 'Release tags: GitHub filter patterns, comma-separated, as on.push.tags lists them'),
  'max-repeats': flag.optional('N', z.string(), "Most pairs while undecided (1-20); empty: the config's maxRepeats"),
  'continue-from': flag.optional(
    'RUN_ID',
    z.string(),
    'Workflow run id of an earlier, inconclusive gate (or calibration) to continue (a gate needs max-repeats)',
  ),
  'earlier-report': flag.optional(
    'DIR',
    z.string(),
    "With continue-from: that run's loadgate-report artifact, downloaded; its verdict.json says the pairs it ran and what it compared",
  ),
  'reports-repository': flag.optional('OWNER/NAME', z.string(), 'The repository that gets the report pull request; empty: this one'),
  'have-reports-token': flag.optional('true|false', z.enum(['true', 'false', '']), 'Whether the reports-token secret is set (never its value)'),
  'have-app': flag.optional('true|false', z.enum(['true', 'false', '']), 'Whether a GitHub App is named (app-client-id)'),
  mode: flag.optional(
    'gate|calibrate',
    z.string(),
    'gate (empty): compare the candidate with a baseline; calibrate: run the candidate on both sides for repeats A/A pairs and measure the noise model',
  ),
  'config-at-tag': flag.optional(
    'true|false',
    z.enum(['true', 'false', '']),
    "true: the checkout is the candidate tag's commit (the reusable workflow checks it out), so a missing config is reported as missing at that tag, with the release-branch fix",
  ),
  'runner-limit-minutes': flag.optional('N', z.string(), 'Job limit of the runners in whole minutes, 30 to 7200; empty: 360'),
  'run-job-budget': flag.optional(
    'DURATION',
    z.string(),
    'Time each run job may spend starting runs: a duration such as 4h30m, 90s or 90, above 0 and at most the runner limit less 20 minutes; empty: that most',
  ),
});

const checkInputsCommand = defineCommand({
  command: 'check-inputs',
  about: `Validates the gate's workflow inputs against strict patterns and the gate config (with
its noise model, except in mode calibrate, which replaces it) before anything uses them, then prints them as key=value lines (or JSON).
A config that cannot be read exits 3 after the other inputs are printed. Each value can
also come from the environment, which is how the workflow passes them; flags win over the
environment.`,
  flags: {
    ...INPUTS,
    json: flag.toggle('Print the outputs as JSON'),
    'github-output': flag.toggle('Also append the outputs to $GITHUB_OUTPUT'),
  },
});

export const usage = checkInputsCommand.usage;

const envSchema = z.object(Object.fromEntries(Object.keys(INPUTS).map((name) => [envName(name), z.string().optional()])));

const camelCase = (flagName: string) => flagName.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** The candidate as a tag name, validated, or undefined when it is not one (validateGateInputs says why next). */
function candidateTag(raw: RawGateInputs): string | undefined {
  try {
    return validateGateInputs({ ...raw, config: undefined, continueFrom: undefined }).candidate;
  } catch {
    return undefined;
  }
}

/**
 * A dispatch for a tag whose commit lacks the caller workflow: it runs (the dispatch runs
 * the default branch's caller), but the rc tags pushed on that branch never trigger a
 * gate, and the ruleset then waits for a check run that never comes.
 */
function warnWithoutCaller(workflowPath: string | undefined, io: CliIO): void {
  if (!workflowPath || existsSync(workflowPath)) return;
  io.err(
    `::warning::${workflowPath} does not exist at the candidate tag's commit: release-candidate tags pushed on that branch will not start a gate, and a ruleset requiring the check will block the release tag. Add the caller workflow, the config and its model to that release branch (docs/github.md, "Release branches")`,
  );
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = checkInputsCommand.parse(argv);
  const env = envSchema.parse(process.env);
  // Where the candidate came from: the event and the pushed ref.
  const context = await readActionsContext();
  const {
    'config-at-tag': _atTag,
    'earlier-report': _earlier,
    'reports-repository': _reports,
    'have-reports-token': _token,
    'have-app': _app,
    ...gateInputs
  } = INPUTS;
  const raw: RawGateInputs = {
    ...Object.fromEntries(Object.keys(gateInputs).map((name) => [camelCase(name), flags[name as keyof typeof INPUTS] ?? env[envName(name)]])),
    eventName: context.eventName,
    refType: context.refType,
    refName: context.refName,
  };
  // The path is validated before it is opened; the config then refines the other inputs.
  // A config that cannot be read still lets the others be checked and written, so that
  // the workflow can complete the candidate's check run saying why (publish --mode abort).
  const configPath = validateConfigPath(raw.config || DEFAULT_CONFIG_PATH);
  const atTag = (flags['config-at-tag'] ?? env.INPUT_CONFIG_AT_TAG) === 'true' || context.refType === 'tag';
  let config: GateConfig | undefined;
  let configError: InputError | undefined;
  try {
    // The tag named in a missing config's message is checked first (candidateTag validates it).
    // A calibration replaces the config's noise model: it is neither read nor checked.
    const noiseModel = raw.mode !== 'calibrate';
    config = await loadGateConfigInput(configPath, atTag ? { tag: candidateTag(raw), noiseModel } : { noiseModel });
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    configError = error;
  }
  if (atTag) warnWithoutCaller(callerWorkflowPath(process.env.GITHUB_WORKFLOW_REF), io);
  const continued = await continuation(raw, config, flags['earlier-report'] ?? env.INPUT_EARLIER_REPORT);
  const inputs = continued.inputs;
  const baseline = continued.baseline;
  // A calibration's pull request goes to this repository, never to a reports repository.
  const reports = inputs.mode === 'calibrate' ? { target: null } : reportsTarget(flags, env, context.repository);
  const problem = configError ?? continued.error ?? reports.error;
  const outputs = {
    mode: inputs.mode,
    candidate: inputs.candidate,
    baseline: baseline ?? '',
    'needs-baseline': baseline === null,
    tests: inputs.tests.join(','),
    'tests-json': JSON.stringify(inputs.tests),
    repeats: inputs.repeats,
    bench: inputs.bench,
    'max-cost': inputs.maxCost ?? '',
    config: inputs.config,
    'check-name': inputs.checkName,
    'max-repeats': inputs.maxRepeats ?? '',
    'continue-from': inputs.continueFrom ?? '',
    'earlier-pairs': inputs.earlierPairs || '',
    'new-pairs-at-most': inputs.newPairsAtMost,
    // Validated here, before the bench: the publish job writes there with these.
    'reports-owner': reports.target?.owner ?? '',
    'reports-name': reports.target?.repo ?? '',
    'reports-app-token': reports.target?.mintAppToken ?? false,
    // Why the gate cannot start (the config cannot be read, the earlier gate cannot be
    // continued), for the check run that publish --mode abort completes.
    'config-problem': problem ? problem.message.replace(/[\r\n]+/g, ' ').slice(0, 3900) : '',
  };
  const githubOutput = flags['github-output'] ? process.env.GITHUB_OUTPUT : undefined;
  if (flags.json) {
    io.out(JSON.stringify(outputs));
    if (githubOutput) emitOutputs(outputs, { out: () => {}, err: () => {} }, githubOutput);
  } else {
    emitOutputs(outputs, io, githubOutput);
  }
  if (problem) throw problem;
  return 0;
}

/** The reports repository, or why it cannot be written (the gate then stops here, saying so in its check run). */
function reportsTarget(
  flags: { [K in keyof typeof INPUTS]?: string | undefined },
  env: Record<string, string | undefined>,
  repository: string | undefined,
): { target: ReportsTarget | null; error?: InputError } {
  const given = (name: 'reports-repository' | 'have-reports-token' | 'have-app') => flags[name] ?? env[envName(name)];
  try {
    return {
      target: validateReportsRepository(given('reports-repository'), {
        repository,
        reportsToken: given('have-reports-token') === 'true',
        app: given('have-app') === 'true',
      }),
    };
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    return { target: null, error };
  }
}

/**
 * The inputs of a continuation, from the earlier gate's report: how many pairs it ran (all
 * reused) and, when none is given, its baseline rather than a newly picked one. When it
 * cannot be continued, the inputs as a new gate's (so that the check run can still be
 * completed, saying why) and the reason.
 */
async function continuation(
  raw: RawGateInputs,
  config: GateConfig | undefined,
  reportDir: string | undefined,
): Promise<{ inputs: GateInputs; baseline: string | null; error?: InputError }> {
  const runId = raw.continueFrom;
  // A malformed id is validateGateInputs' to name.
  if (!runId || !/^[0-9]{1,20}$/.test(runId)) {
    const inputs = validateGateInputs({ ...raw, config: raw.config || DEFAULT_CONFIG_PATH }, config);
    return { inputs, baseline: inputs.baseline };
  }
  const configPath = raw.config || DEFAULT_CONFIG_PATH;
  try {
    const earlier = await readEarlierGate(reportDir || 'loadgate-earlier', runId);
    const inputs = validateGateInputs({ ...raw, config: configPath, earlierPairs: String(earlier.pairs) }, config);
    return { inputs, baseline: checkContinuation(earlier, inputs) };
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    const inputs = validateGateInputs({ ...raw, config: configPath, continueFrom: undefined, maxRepeats: undefined }, config);
    return { inputs, baseline: inputs.baseline, error };
  }
}
