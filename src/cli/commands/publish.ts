import { z } from 'zod';
import { EXIT_CODES } from '../../results/verdict-schema.ts';
import { loadGateConfig } from '../../config/load.ts';
import { readBaselineChoice } from '../../github/baseline-choice.ts';
import { readActionsContext } from '../../github/actions-context.ts';
import { readGitHubEnv } from '../../github/env.ts';
import { emitOutputs, writeJobSummary } from '../../github/outputs.ts';
import { planGate, planMarkdown } from '../../github/check-run-plan.ts';
import { publishAbort, publishFinish, publishStart, type PublishContext, type ReportsRepository } from '../../github/publish.ts';
import { loadGateConfigInput } from '../../inputs/gate-config.ts';
import { secretsFromEnv } from '../../github/secret-scan.ts';
import { COMMIT_SHA } from '../../inputs/patterns.ts';
import { validateCheckName, validateConfigPath, validateGateInputs, validateVersionLabel, DEFAULT_CHECK_NAME } from '../../inputs/validate.ts';
import { InputError } from '../../util/errors.ts';
import { runnerLimitSchema } from '../../aws/job-limits.ts';
import { defineCommand, flag } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

const publishCommand = defineCommand({
  command: 'publish',
  flags: {
    mode: flag.withDefault(
      'start|finish|abort',
      z.enum(['start', 'finish', 'abort']),
      'finish',
      'start: create the check run (in_progress) with the gate plan; needs --config.\nfinish: commit --report to perf-report/A-vs-B, open or update its pull request, and complete the check run with the verdict (pass: success, fail: failure, inconclusive or no verdict: action_required).\nabort: complete the check run of a gate that could not start, action_required, saying why: --problem, else what is wrong with --config',
    ),
    baseline: flag.optional('A', z.string(), 'Baseline version (start, finish)'),
    candidate: flag.required('B', z.string({ error: 'required: the candidate version' }), 'Candidate version'),
    report: flag.optional('DIR', z.string().min(1), 'Report directory from `loadgate compare|run --out` (finish)'),
    sha: flag.optional(
      'SHA',
      z.string().regex(COMMIT_SHA, 'expected a 40- or 64-character lower-case commit SHA'),
      'Commit of the candidate (default: resolved from the candidate tag)',
    ),
    'check-run-id': flag.optional(
      'ID',
      z
        .string()
        .regex(/^[0-9]{1,15}$/, 'expected a numeric check run id')
        .transform(Number),
      'Check run from `--mode start` (default: the open one of that name)',
    ),
    'check-name': flag.withDefault('NAME', z.string(), DEFAULT_CHECK_NAME, 'Check run name'),
    config: flag.optional('FILE', z.string(), 'Gate config: the plan (start) and annotations (finish)'),
    tests: flag.optional('LIST', z.string(), 'Test names for the plan, comma-separated (default: all)'),
    repeats: flag.optional('N', z.string(), "Runs per side for the plan (default: the config's)"),
    bench: flag.optional('local|aws', z.string(), "Bench for the plan (default: the config's)"),
    'max-cost': flag.optional('USD', z.string(), 'AWS bench budget, a cap on the worst-case cost, for the plan (default: bench.aws.maxCostUsd)'),
    'max-repeats': flag.optional('N', z.string(), "Most pairs for the plan (start; default: the config's maxRepeats)"),
    'continue-from': flag.optional(
      'RUN_ID',
      z.string(),
      'The earlier gate this one continues, for the plan (start): only the pairs beyond the ones it ran are planned',
    ),
    'earlier-pairs': flag.optional('N', z.string(), "With --continue-from: the pairs the earlier gate ran (check-inputs' earlier-pairs output), all reused"),
    'baseline-choice': flag.optional('F', z.string(), 'JSON written by `pick-baseline --write-choice`'),
    'gate-result': flag.optional(
      'R',
      z.enum(['success', 'failure', 'cancelled', 'skipped']),
      "The gate job's result (success|failure|cancelled|skipped), said when there is no verdict",
    ),
    'report-withheld': flag.toggle('The gate job refused to upload the report (it held a secret): say so'),
    'github-output': flag.toggle('Also append the outputs to $GITHUB_OUTPUT'),
    'fail-on-verdict': flag.toggle('Exit 1 on fail and 2 on inconclusive after publishing'),
    'reports-repository': flag.optional(
      'OWNER/NAME',
      z.string().regex(/^[A-Za-z0-9-]{1,39}\/[A-Za-z0-9._-]{1,100}$/, 'expected owner/name of a GitHub repository'),
      'Where the report pull request goes (finish; default: GITHUB_REPOSITORY), written with LOADGATE_REPORTS_TOKEN',
    ),
    problem: flag.optional(
      'TEXT',
      z.string().min(1).max(4000),
      'Why the gate could not start: when --config reads (abort), or a job before the bench failed on it (finish, e.g. the preflight)',
    ),
    'token-problem': flag.optional('TEXT', z.string().min(1).max(1000), 'Why the publish job has no GitHub App token (finish): said in the check run'),
    'reports-token-problem': flag.optional(
      'TEXT',
      z.string().min(1).max(1000),
      'Why there is no token for --reports-repository (finish): said in the check run',
    ),
    'runner-limit-minutes': flag.optional(
      'N',
      runnerLimitSchema,
      "The runners' job limit (finish): the continuation advised on AWS fits its run jobs (default: 360)",
    ),
  },
  notes: `The check run is always completed with the verdict, even when the report pull request
cannot be published; the command then prints why and exits 3 (or 2 for an unexpected
error), after writing the outputs.

Environment: GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL, GITHUB_SERVER_URL, GITHUB_RUN_ID;
LOADGATE_REPORTS_TOKEN, the token for --reports-repository.`,
});

export const usage = publishCommand.usage;

/** What a gate job result means when there is no verdict. */
const GATE_RESULT_PROBLEM: Record<'failure' | 'cancelled' | 'skipped', string> = {
  failure: 'the gate job ended with result "failure"',
  cancelled: 'the gate job ended with result "cancelled" (the run was cancelled, it timed out, or it was dropped from a full queue for the bench)',
  skipped: 'the gate job ended with result "skipped" (it never ran: an earlier job failed or the run was cancelled first)',
};

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = publishCommand.parse(argv);
  const env = readGitHubEnv(await readActionsContext());
  const checkName = validateCheckName(flags['check-name']);
  const configPath = flags.config === undefined ? undefined : validateConfigPath(flags.config);
  const ctx: PublishContext = { env, secrets: [{ name: 'GITHUB_TOKEN', value: env.token }, ...secretsFromEnv()], log: (l) => io.err(l) };
  const githubOutput = flags['github-output'] ? process.env.GITHUB_OUTPUT : undefined;
  if (flags.mode === 'abort') {
    const candidate = validateVersionLabel(flags.candidate, 'candidate');
    // check-inputs' own reason (its config-problem output) names the tag the config was read at.
    const problem =
      flags.problem ??
      (configPath ? await configProblem(configPath) : undefined) ??
      'the job that validates the inputs and starts the check run failed before the check run started (see its log)';
    const aborted = await publishAbort(ctx, { checkName, candidate, sha: flags.sha, problem: `the gate could not start: ${problem}` });
    emitOutputs(aborted.outputs, io, githubOutput);
    await writeJobSummary(aborted.summary);
    return 0;
  }
  const config = configPath ? await loadGateConfig(configPath) : undefined;
  if (flags.baseline === undefined) throw new InputError(`--baseline: required with --mode ${flags.mode}\n\n${usage}`);
  const baseline = validateVersionLabel(flags.baseline, 'baseline', config?.target.versionPattern);
  const candidate = validateVersionLabel(flags.candidate, 'candidate', config?.target.versionPattern);
  const choice = flags['baseline-choice'] ? await readBaselineChoice(flags['baseline-choice']) : undefined;

  if (flags.mode === 'start') {
    if (!config) throw new InputError(`--config: required with --mode start (the plan comes from the gate config)\n\n${usage}`);
    const inputs = validateGateInputs(
      {
        candidate,
        baseline,
        tests: flags.tests,
        repeats: flags.repeats,
        bench: flags.bench,
        maxCost: flags['max-cost'],
        maxRepeats: flags['max-repeats'],
        continueFrom: flags['continue-from'],
        earlierPairs: flags['earlier-pairs'],
        config: configPath,
        checkName,
      },
      config,
    );
    // The pairs this bench may run, as provisioning plans them (a continuation's new pairs only).
    const repeats = Math.min(inputs.repeats, inputs.newPairsAtMost);
    const planned = inputs.maxRepeats !== null ? { ...config, maxRepeats: inputs.newPairsAtMost } : config;
    const plan = planGate(planned, { ...inputs, repeats, baseline, baselineReason: choice?.reason });
    const started = await publishStart(ctx, { checkName, candidate, sha: flags.sha, plan });
    emitOutputs(started.outputs, io, githubOutput);
    await writeJobSummary(planMarkdown(plan));
    return 0;
  }

  if (!flags.report) throw new InputError(`--report: required with --mode finish\n\n${usage}`);
  const result = await publishFinish(ctx, {
    checkName,
    baseline,
    candidate,
    sha: flags.sha,
    checkRunId: flags['check-run-id'],
    reportDir: flags.report,
    baselineChoice: choice,
    // A gate stopped before its bench (the preflight): that reason alone, not the skipped job it left.
    ...(flags.problem ? { notStarted: true } : {}),
    gateProblem: flags.problem ? `the gate could not start: ${flags.problem}` : gateProblem(flags['report-withheld'], flags['gate-result']),
    configPath,
    config,
    reports: reportsRepository(flags['reports-repository'], flags['reports-token-problem']),
    runnerLimitMinutes: flags['runner-limit-minutes'],
    tokenProblem: flags['token-problem'],
  });
  emitOutputs(result.outputs, io, githubOutput);
  await writeJobSummary(result.summary);
  // The check run already carries the verdict and this failure; the step fails too.
  if (result.reportError) throw result.reportError;
  if (!flags['fail-on-verdict']) return 0;
  return result.verdict ? EXIT_CODES[result.verdict] : EXIT_CODES.inconclusive;
}

/** The reports repository and its token (LOADGATE_REPORTS_TOKEN), when one is named. */
function reportsRepository(name: string | undefined, tokenProblem: string | undefined): ReportsRepository | undefined {
  if (!name) return undefined;
  const [owner, repo] = name.split('/') as [string, string];
  return { owner, repo, token: process.env.LOADGATE_REPORTS_TOKEN || undefined, tokenProblem };
}

/** Why there may be no verdict, from the gate jobs' outputs. */
function gateProblem(withheld: boolean, result: keyof typeof GATE_RESULT_PROBLEM | 'success' | undefined): string | undefined {
  const parts = [
    withheld ? 'the gate job withheld the report because it held a secret (see its step "Refuse a report holding a secret")' : '',
    result && result !== 'success' ? GATE_RESULT_PROBLEM[result] : '',
  ];
  return parts.filter(Boolean).join('; ') || undefined;
}

/** What is wrong with the gate config, as check-inputs would say it; undefined when it reads. */
async function configProblem(path: string): Promise<string | undefined> {
  try {
    await loadGateConfigInput(path);
    return undefined;
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    return error.message;
  }
}
