import { z } from 'zod';
import { EXIT_CODES } from '../../compare/verdict-schema.ts';
import { loadGateConfig } from '../../config/load.ts';
import { readBaselineChoice } from '../../github/baseline-choice.ts';
import { readGitHubEnv } from '../../github/env.ts';
import { emitOutputs, writeJobSummary } from '../../github/outputs.ts';
import { planGate, planMarkdown } from '../../github/plan.ts';
import { publishFinish, publishStart, type PublishContext } from '../../github/publish.ts';
import { secretValuesFromEnv } from '../../github/report-files.ts';
import { COMMIT_SHA } from '../../inputs/patterns.ts';
import { validateCheckName, validateConfigPath, validateGateInputs, validateVersionLabel, DEFAULT_CHECK_NAME } from '../../inputs/validate.ts';
import { InputError } from '../../util/errors.ts';
import { parseFlags } from '../args.ts';
import type { CliIO } from '../io.ts';

export const usage = `Usage: loadgate publish --mode start|finish --baseline A --candidate B [options]

  --mode start     Create the check run (in_progress) with the gate plan. Needs --config.
  --mode finish    Commit --report to perf-report/A-vs-B, open or update its pull request,
                   and complete the check run with the verdict (pass: success, fail: failure,
                   inconclusive or no verdict: action_required).

Options:
  --report DIR          Report directory from \`loadgate compare|run --out\` (finish)
  --sha SHA             Commit of the candidate (default: resolved from the candidate tag)
  --check-run-id ID     Check run from \`--mode start\` (default: the open one of that name)
  --check-name NAME     Check run name (default ${DEFAULT_CHECK_NAME})
  --config FILE         Gate config: the plan (start) and annotations (finish)
  --tests LIST          Test names for the plan, comma-separated (default: all)
  --repeats N           Runs per side for the plan (default: the config's)
  --bench local|aws     Bench for the plan (default: the config's)
  --baseline-choice F   JSON written by \`pick-baseline --write-choice\`
  --gate-result R       The gate job's result (success|failure|cancelled|skipped), said when there is no verdict
  --github-output       Also append the outputs to $GITHUB_OUTPUT
  --fail-on-verdict     Exit 1 on fail and 2 on inconclusive after publishing

Environment: GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL, GITHUB_SERVER_URL, GITHUB_RUN_ID.`;

const options = {
  mode: { type: 'string' },
  report: { type: 'string' },
  baseline: { type: 'string' },
  candidate: { type: 'string' },
  sha: { type: 'string' },
  'check-run-id': { type: 'string' },
  'check-name': { type: 'string' },
  config: { type: 'string' },
  tests: { type: 'string' },
  repeats: { type: 'string' },
  bench: { type: 'string' },
  'baseline-choice': { type: 'string' },
  'gate-result': { type: 'string' },
  'github-output': { type: 'boolean' },
  'fail-on-verdict': { type: 'boolean' },
} as const;

const flagsSchema = z.strictObject({
  mode: z.enum(['start', 'finish']).default('finish'),
  report: z.string().min(1).optional(),
  baseline: z.string({ error: 'required: the baseline version' }),
  candidate: z.string({ error: 'required: the candidate version' }),
  sha: z.string().regex(COMMIT_SHA, 'expected a 40- or 64-character lower-case commit SHA').optional(),
  'check-run-id': z.string().regex(/^[0-9]{1,15}$/, 'expected a numeric check run id').transform(Number).optional(),
  'check-name': z.string().optional(),
  config: z.string().optional(),
  tests: z.string().optional(),
  repeats: z.string().optional(),
  bench: z.string().optional(),
  'baseline-choice': z.string().optional(),
  'gate-result': z.enum(['success', 'failure', 'cancelled', 'skipped']).optional(),
  'github-output': z.boolean().default(false),
  'fail-on-verdict': z.boolean().default(false),
  positionals: z.array(z.string()).max(0, 'publish takes no positional arguments'),
});

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = parseFlags(argv, options, flagsSchema, usage);
  const env = readGitHubEnv();
  const checkName = validateCheckName(flags['check-name'] ?? DEFAULT_CHECK_NAME);
  const configPath = flags.config === undefined ? undefined : validateConfigPath(flags.config);
  const config = configPath ? await loadGateConfig(configPath) : undefined;
  const baseline = validateVersionLabel(flags.baseline, 'baseline', config?.target.versionPattern);
  const candidate = validateVersionLabel(flags.candidate, 'candidate', config?.target.versionPattern);
  const choice = flags['baseline-choice'] ? await readBaselineChoice(flags['baseline-choice']) : undefined;
  const ctx: PublishContext = { env, secrets: [env.token, ...secretValuesFromEnv()], log: (l) => io.err(l) };
  const githubOutput = flags['github-output'] ? process.env.GITHUB_OUTPUT : undefined;

  if (flags.mode === 'start') {
    if (!config) throw new InputError(`--config: required with --mode start (the plan comes from the gate config)\n\n${usage}`);
    const inputs = validateGateInputs({ candidate, baseline, tests: flags.tests, repeats: flags.repeats, bench: flags.bench, config: configPath, checkName }, config);
    const plan = planGate(config, { ...inputs, baseline, baselineReason: choice?.reason });
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
    gateProblem: flags['gate-result'] && flags['gate-result'] !== 'success' ? `the gate job ended with result "${flags['gate-result']}"` : undefined,
    configPath,
  });
  emitOutputs(result.outputs, io, githubOutput);
  await writeJobSummary(result.summary);
  if (!flags['fail-on-verdict']) return 0;
  return result.verdict ? EXIT_CODES[result.verdict] : EXIT_CODES.inconclusive;
}
