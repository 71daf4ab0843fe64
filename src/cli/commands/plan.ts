import { writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { loadGateConfig } from '../../config/load.ts';
import type { GateConfig } from '../../config/schema.ts';
import { InputError } from '../../util/errors.ts';
import { buildPlan, planJson, renderPlanText, requireDataset, type ModeEstimate, type Plan, type RatesEstimate } from '../../aws/bench-plan.ts';
import { estimateCost, type DbSource } from '../../aws/cost.ts';
import { expectedDuration } from '../../aws/expected.ts';
import { atDefaultRates, noChangeOutcome, type NoChangeOutcome } from '../../compare/simulate.ts';
import { assumedModel, loadNoiseModel, noiseModelPath } from '../../noise/model.ts';
import { GITHUB_HOSTED_JOB_LIMIT_MINUTES, planJobs, renderJobPlan, runnerLimitSchema } from '../../aws/job-limits.ts';
import { readRunInfo, type RunContext } from '../../aws/run-info.ts';
import { readActionsContext } from '../../github/actions-context.ts';
import { benchInputsSchema, buildTfvars, type BenchInputs } from '../../aws/tfvars.ts';
import { requireLicenceSecret } from '../../chat-servers/mattermost/licence.ts';
import { defineCommand, flag, section } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

const planCommand = defineCommand({
  command: 'plan',
  about: `Prints what the AWS bench of a gate creates (preset resolved, every resource),
its estimated duration (unbounded tests at their maxDuration) and cost (on-demand
prices from src/aws/prices.ts, with their date). Exits 1 without output other
than the refusal when the worst-case cost exceeds --max-cost or bench.aws.maxCostUsd.`,
  flags: {
    config: flag.required('FILE', z.string({ error: 'name the gate config with --config' }).min(1), 'gate config (bench.kind: aws)'),
    'max-cost': flag.optional(
      'USD',
      z.coerce.number({ error: 'expected a number of US dollars' }).positive('must be above 0'),
      'refuse a gate whose worst-case cost exceeds this (wins over bench.aws.maxCostUsd)',
    ),
    format: flag.withDefault('FORMAT', z.enum(['text', 'json', 'tfvars']), 'text', 'text, json, or tfvars: terraform.tfvars.json for infra/aws'),
    out: flag.optional('FILE', z.string().min(1), 'write the output to FILE instead of stdout'),
    'runner-limit': flag.withDefault(
      'MINUTES',
      runnerLimitSchema,
      String(GITHUB_HOSTED_JOB_LIMIT_MINUTES),
      "job time limit of the runners (the default is GitHub-hosted runners'); exit 3 when one run, provisioning or teardown cannot fit in a job",
    ),
    'max-repeats': flag.optional(
      'N',
      z.coerce.number().int().min(1).max(20),
      "most pairs this bench runs (default: the config's maxRepeats; below repeats, a continuation's new pairs, it caps repeats too): the worst case, the budget check and the bench's expiry count them",
    ),
    calibrate: flag.toggle(
      "a calibration's bench (every pair runs): the config's noiseModel, which the calibration replaces, is neither read nor checked, and only the worst case is given",
    ),
    'db-snapshot': flag.optional('ID', z.string(), 'Aurora cluster snapshot with the dataset (restore)'),
    'db-dump-url': flag.optional('URL', z.string(), 'PostgreSQL dump the first app node loads (https, .sql or .sql.gz)'),
    'db-name': flag.optional('NAME', z.string(), 'database Mattermost uses (the seed dumps use ltdb)'),
    ...section('tfvars only', {
      version: flag.optional('VERSION', z.string(), 'Mattermost version installed first (must match target.versionPattern)'),
      'license-secret-arn': flag.optional('ARN', z.string(), 'Secrets Manager secret holding the Mattermost licence'),
      'controller-cidr': flag.list('CIDR', z.array(z.string()), 'where the controller connects from, e.g. 203.0.113.7/32'),
      repository: flag.optional('OWNER/NAME', z.string(), 'default: GITHUB_REPOSITORY'),
      'run-id': flag.optional('ID', z.string(), 'default: GITHUB_RUN_ID'),
      'run-attempt': flag.optional('N', z.string(), 'default: GITHUB_RUN_ATTEMPT, else 1'),
      commit: flag.optional('SHA', z.string(), 'default: GITHUB_SHA'),
      now: flag.optional('TIME', z.iso.datetime({ offset: true }), 'ISO time the expiry is counted from (default: now)'),
      'destroy-only': flag.toggle('tfvars rebuilt for terraform destroy: the licence is not required'),
    }),
  },
  positionals: z.array(z.string()).max(0, 'plan takes no positional arguments; name the config with --config'),
});

export const usage = planCommand.usage;

export async function run(argv: string[], io: CliIO, readContext: () => Promise<Partial<RunContext>> = readActionsContext): Promise<number> {
  const flags = planCommand.parse(argv);
  const loaded = await loadGateConfig(flags.config);
  // The pairs this bench runs at most (a continued gate's new pairs, a calibration's pairs)
  // replace the config's cap for the worst case; a continuation's may be fewer than repeats.
  const most = flags['max-repeats'];
  const config = most !== undefined ? { ...loaded, maxRepeats: most, repeats: Math.min(loaded.repeats, most) } : loaded;
  if (config.bench.kind !== 'aws') {
    throw new InputError(`${flags.config}: bench.kind is "${config.bench.kind}"; plan estimates the AWS bench (bench.kind: aws)`);
  }
  const inputs = benchInputsOf(flags, config);
  const dbSource = inputs.dbSnapshot ? 'snapshot' : inputs.dbDumpUrl ? 'dump' : 'empty';
  // Teardown only needs the bench's identity, not a dataset.
  const noDataset = flags['destroy-only'] ? undefined : requireDataset(config, dbSource);
  if (noDataset) io.err(noDataset);
  // A calibration runs every pair and replaces the config's model: only the worst case applies.
  const plan = flags.calibrate
    ? buildPlan(config, { dbSource, ...(flags['max-cost'] !== undefined ? { maxCostUsd: flags['max-cost'] } : {}) })
    : await planWithExpected(config, flags, dbSource);
  const creep = flags.calibrate ? undefined : await creepCost(config, flags, plan);
  // Refuses (exit 3) a gate whose longest piece cannot fit in one job.
  const jobs = planJobs(config, plan.duration, flags['runner-limit']);
  if (!flags.calibrate) plan.modes = await modeEstimates(config, plan, dbSource, flags['runner-limit']);

  // The plan always reaches the log; a refusal also goes to stderr.
  if (!plan.withinBudget) {
    io.err(renderPlanText(plan));
    return 1;
  }
  let output: string;
  if (flags.format === 'text') output = `${renderPlanText(plan)}${creep ? `\n\n${creep.text}` : ''}\n\n${renderJobPlan(jobs)}`;
  else if (flags.format === 'json') output = JSON.stringify({ ...planJson(plan), jobs, ...(creep ? { creep: creep.json } : {}) }, null, 2);
  else output = await tfvarsOutput(config, plan, inputs, flags, io, readContext);
  if (flags.out) {
    await writeFile(flags.out, `${output}\n`);
    io.out(`wrote ${flags.out}`);
  } else {
    io.out(output);
  }
  return 0;
}

type Flags = z.output<typeof planCommand.schema>;

/** The dataset and licence flags, each falling back to the config, checked as the bench's inputs. */
function benchInputsOf(flags: Flags, config: GateConfig): BenchInputs {
  const inputs = benchInputsSchema.safeParse({
    version: flags.version ?? 'unset',
    controllerCidrs: flags['controller-cidr'],
    dbSnapshot: flags['db-snapshot'] ?? (flags['db-dump-url'] ? undefined : config.bench.aws.database?.snapshotIdentifier),
    dbDumpUrl: flags['db-dump-url'] ?? (flags['db-snapshot'] ? undefined : config.bench.aws.database?.dumpUrl),
    dbName: flags['db-name'] ?? config.bench.aws.database?.name,
    licenseSecretArn: flags['license-secret-arn'],
  });
  if (!inputs.success) {
    const flagNames: Record<string, string> = {
      controllerCidrs: '--controller-cidr',
      dbSnapshot: '--db-snapshot',
      dbDumpUrl: '--db-dump-url',
      dbName: '--db-name',
      licenseSecretArn: '--license-secret-arn',
    };
    const lines = inputs.error.issues.map((i) => `${flagNames[String(i.path[0])] ?? String(i.path[0])}: ${i.message}`);
    throw new InputError(`${lines.join('\n')}\n\n${usage}`, lines);
  }
  if (inputs.data.dbSnapshot && inputs.data.dbDumpUrl) throw new InputError('give at most one of --db-snapshot and --db-dump-url');
  return inputs.data;
}

/** The plan with its expected duration and cost: the runs per side an unchanged release is expected to need under the sequential rule. */
async function planWithExpected(config: GateConfig, flags: Flags, dbSource: DbSource): Promise<Plan> {
  const plan = buildPlan(config, { dbSource, ...(flags['max-cost'] !== undefined ? { maxCostUsd: flags['max-cost'] } : {}) });
  const modelPath = noiseModelPath(config, flags.config);
  const model = modelPath ? await loadNoiseModel(modelPath, config) : assumedModel();
  const outcome = noChangeOutcome(config, model);
  const expected = await expectedDuration(config, plan.duration, { runsPerSide: Math.max(1, outcome.meanPairs) });
  plan.expected = { duration: expected, cost: estimateCost(plan.bench, expected.totalSec) };
  plan.rates = [rateEstimate(config, outcome, expected.totalSec, plan)];
  const defaults = atDefaultRates(config);
  if (defaults) {
    const atDefaults = noChangeOutcome(defaults, model);
    const duration = await expectedDuration(defaults, plan.duration, { runsPerSide: Math.max(1, atDefaults.meanPairs) });
    plan.rates.push(rateEstimate(defaults, atDefaults, duration.totalSec, plan));
  }
  return plan;
}

/**
 * The creep check's cost (creep.anchor): when the chain through the recorded steps cannot
 * decide, one more gate on the same bench, the anchor against the candidate at half of
 * each error rate, usually one duet: its expected runs and their cost, and its worst case.
 */
async function creepCost(config: GateConfig, flags: Flags, plan: Plan): Promise<{ text: string; json: Record<string, number | string> } | undefined> {
  if (!config.creep) return undefined;
  const half: GateConfig = { ...config, errorRates: { falseFailPct: config.errorRates.falseFailPct / 2, falsePassPct: config.errorRates.falsePassPct / 2 } };
  const modelPath = noiseModelPath(config, flags.config);
  const model = modelPath ? await loadNoiseModel(modelPath, half) : assumedModel();
  const pairs = noChangeOutcome(half, model).meanPairs;
  const expected = await expectedDuration(half, plan.duration, { runsPerSide: Math.max(1, pairs) });
  const worst = await expectedDuration(half, plan.duration, { runsPerSide: config.maxRepeats });
  const cost = (sec: number) => estimateCost(plan.bench, sec).totalUsd;
  const unit = config.mode === 'duet' ? 'duets' : 'pairs';
  const minutes = (sec: number) => `${Math.round(sec / 60)} min`;
  const text = [
    `Creep check since ${config.creep.anchor}: chained through the recorded steps at no cost; when the chain cannot decide, the anchor against the candidate on the same bench,`,
    `  about ${pairs.toFixed(2)} ${unit} (${minutes(expected.testsSec)}, $${cost(expected.testsSec).toFixed(2)}) for an unchanged release, at most ${config.maxRepeats} (${minutes(worst.testsSec)}, $${cost(worst.testsSec).toFixed(2)}).`,
  ].join('\n');
  return {
    text,
    json: {
      anchor: config.creep.anchor,
      expectedPairs: pairs,
      expectedSec: expected.testsSec,
      expectedUsd: cost(expected.testsSec),
      worstSec: worst.testsSec,
      worstUsd: cost(worst.testsSec),
    },
  };
}

function rateEstimate(config: GateConfig, outcome: NoChangeOutcome, totalSec: number, plan: Plan): RatesEstimate {
  return {
    falseFailPct: config.errorRates.falseFailPct,
    falsePassPct: config.errorRates.falsePassPct,
    pairs: outcome.meanPairs,
    inconclusivePct: outcome.inconclusivePct,
    totalSec,
    costUsd: estimateCost(plan.bench, totalSec).totalUsd,
  };
}

/**
 * The gate in both modes, this config's first, each on its own bench shape. Both expect as
 * many pairs as this config's noise model gives.
 */
async function modeEstimates(config: GateConfig, plan: Plan, dbSource: DbSource, runnerLimit: number): Promise<ModeEstimate[]> {
  const runsPerSide = plan.expected?.duration.runsPerSide ?? 1;
  const order: GateConfig['mode'][] = config.mode === 'duet' ? ['duet', 'sequential'] : ['sequential', 'duet'];
  const out: ModeEstimate[] = [];
  for (const mode of order) {
    const inMode: GateConfig = { ...config, mode };
    // Each mode on its own bench shape: a duet has one agent group per side.
    const modePlan = mode === config.mode ? plan : buildPlan(inMode, { dbSource });
    const worst = modePlan.duration;
    const expected = mode === config.mode && plan.expected ? plan.expected.duration : await expectedDuration(inMode, worst, { runsPerSide });
    let runJobs: number | string;
    try {
      runJobs = planJobs(inMode, worst, runnerLimit).runJobs;
    } catch (error) {
      runJobs = `does not fit: ${(error as Error).message}`;
    }
    out.push({
      mode,
      agents: modePlan.bench.agentCount,
      worst: { totalSec: worst.totalSec, costUsd: estimateCost(modePlan.bench, worst.totalSec).totalUsd },
      expected: {
        totalSec: expected.totalSec,
        costUsd: estimateCost(modePlan.bench, expected.totalSec).totalUsd,
        runsPerSide: expected.runsPerSide,
        longestRunSec: expected.longestRunSec,
      },
      runJobs,
    });
  }
  return out;
}

/** terraform.tfvars.json for infra/aws; the plan goes to stderr so stdout stays a clean tfvars file. */
async function tfvarsOutput(
  config: GateConfig,
  plan: Plan,
  inputs: BenchInputs,
  flags: Flags,
  io: CliIO,
  readContext: () => Promise<Partial<RunContext>>,
): Promise<string> {
  if (!flags.version) throw new InputError(`--version: name the Mattermost version the bench installs first\n\n${usage}`);
  const flagged = { repository: flags.repository, runId: flags['run-id'], runAttempt: flags['run-attempt'], commit: flags.commit };
  // Outside Actions (all four flags given) the context is not read at all.
  const complete = Object.values(flagged).every((v) => v !== undefined);
  const runInfo = readRunInfo(flagged, complete ? {} : await readContext());
  const now = flags.now ? new Date(flags.now) : new Date();
  const tfvars = buildTfvars(config, plan.bench, runInfo, { ...inputs, version: flags.version }, plan.duration, now);
  if (!flags['destroy-only']) requireLicenceSecret(config.target.system, inputs.licenseSecretArn, '--license-secret-arn');
  const output = JSON.stringify(tfvars, null, 2);
  io.err(renderPlanText(plan));
  return output;
}
