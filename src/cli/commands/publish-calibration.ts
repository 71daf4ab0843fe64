import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { loadGateConfig } from '../../config/load.ts';
import { readActionsContext } from '../../github/actions-context.ts';
import { calibrationModelDestination, calibrationPlanMarkdown, publishCalibrationPr } from '../../github/calibration.ts';
import { planGate } from '../../github/check-run-plan.ts';
import { readGitHubEnv, runUrl } from '../../github/env.ts';
import { emitOutputs, writeJobSummary } from '../../github/outputs.ts';
import { repoApi } from '../../github/publish.ts';
import { readReportDir } from '../../github/report-files.ts';
import { secretsFromEnv } from '../../github/secret-scan.ts';
import { validateConfigPath, validateGateInputs } from '../../inputs/validate.ts';
import { noiseModelFileSchema } from '../../noise/schema.ts';
import { verdictFileSchema } from '../../results/verdict-schema.ts';
import { InputError } from '../../util/errors.ts';
import { defineCommand, flag } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

const publishCalibrationCommand = defineCommand({
  command: 'publish-calibration',
  about: `The reusable workflow's calibration (mode calibrate): no check run, since a calibration
is not a verdict. plan: writes the calibration's plan and worst-case cost to the job
summary before anything is provisioned. finish: commits <report>/noise-model.json where the
config's noiseModel reads it (${'.github/loadgate-noise.json'} when the config names a
shipped builtin: model or none, saying in the PR to set noiseModel: to it) and the report
beside it, on loadgate-calibration/<version>, and opens or updates its pull request.`,
  flags: {
    mode: flag.withDefault('plan|finish', z.enum(['plan', 'finish']), 'finish', 'plan: the job summary with the cost; finish: the pull request with the model'),
    config: flag.required('FILE', z.string({ error: 'required: the gate config' }), 'Gate config, repository-relative'),
    version: flag.required('V', z.string({ error: 'required: the version calibrated' }), 'The version run on both sides'),
    repeats: flag.required('N', z.string({ error: 'required: the number of A/A pairs' }), 'A/A pairs, 2 to 20'),
    tests: flag.optional('LIST', z.string(), 'Test names, comma-separated (default: all)'),
    bench: flag.optional('local|aws', z.string(), "Bench (default: the config's)"),
    'max-cost': flag.optional('USD', z.string(), 'AWS bench budget, a cap on the worst-case cost (default: bench.aws.maxCostUsd)'),
    'runner-limit-minutes': flag.optional(
      'N',
      z.string(),
      "The runners' job limit in whole minutes, which bounds the pairs the AWS run jobs hold (default: 360)",
    ),
    'continue-from': flag.optional(
      'RUN_ID',
      z.string(),
      'The earlier calibration this one continues (its pairs are reused): only the pairs above them are planned',
    ),
    'earlier-pairs': flag.optional('N', z.string(), "With --continue-from: the pairs the earlier calibration ran (check-inputs' earlier-pairs output)"),
    report: flag.optional('DIR', z.string().min(1), "The calibration's --out directory, holding noise-model.json (finish)"),
    'github-output': flag.toggle('Also append the outputs (pull-request-url, model-path) to $GITHUB_OUTPUT'),
  },
  notes: `Exit codes: 0 done, 2 the calibration measured no model (see its report), 3 bad input.

Environment (finish): GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL, GITHUB_SERVER_URL, GITHUB_RUN_ID.`,
});

export const usage = publishCalibrationCommand.usage;

/** The dispatch that continues this calibration to the pairs asked for. */
function continueCommand(env: ReturnType<typeof readGitHubEnv>, version: string, repeats: number): string {
  return `gh workflow run ${env.workflowFile ?? '<the loadgate workflow file>'} --repo ${env.owner}/${env.repo} -f mode=calibrate -f candidate=${version} -f repeats=${repeats} -f continue-from=${env.runId ?? '<this run id>'}`;
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = publishCalibrationCommand.parse(argv);
  const configPath = validateConfigPath(flags.config);
  const config = await loadGateConfig(configPath);
  const inputs = validateGateInputs(
    {
      mode: 'calibrate',
      candidate: flags.version,
      repeats: flags.repeats,
      tests: flags.tests,
      bench: flags.bench,
      maxCost: flags['max-cost'],
      runnerLimitMinutes: flags['runner-limit-minutes'],
      continueFrom: flags['continue-from'],
      earlierPairs: flags['earlier-pairs'],
      config: configPath,
    },
    config,
  );
  // Every new pair runs: the bench is planned and budgeted for exactly that many.
  const plan = planGate({ ...config, maxRepeats: inputs.newPairsAtMost }, { ...inputs, repeats: inputs.newPairsAtMost, baseline: inputs.candidate });
  if (flags.mode === 'plan') {
    await writeJobSummary(calibrationPlanMarkdown(plan));
    io.out(calibrationPlanMarkdown(plan));
    return 0;
  }
  if (!flags.report) throw new InputError(`--report: required with --mode finish (the calibration's --out directory)\n\n${usage}`);
  const modelFile = join(flags.report, 'noise-model.json');
  const modelText = await readFile(modelFile).catch(() => undefined);
  if (!modelText) {
    io.err(
      `publish-calibration: ${modelFile} does not exist: the calibration measured no model (too few completed runs, or it stopped before its last pair); see ${join(flags.report, 'README.md')}`,
    );
    return 2;
  }
  const model = noiseModelFileSchema.parse(JSON.parse(modelText.toString('utf8')));
  // The pairs behind the model: fewer than asked when the last run job stopped early.
  const verdict = await readFile(join(flags.report, 'verdict.json'), 'utf8').then(
    (t) => verdictFileSchema.parse(JSON.parse(t)),
    () => undefined,
  );
  const pairs = verdict?.decision.pairs ?? inputs.repeats;
  // The report's summary and runs, for review; graphs and logs stay in the workflow's artifact.
  const reportFiles = (await readReportDir(flags.report)).filter(
    (f) => ['README.md', 'verdict.json', 'noise-model.json'].includes(f.path) || /^results\/[^/]+\.json$/.test(f.path),
  );
  const context = await readActionsContext();
  const env = readGitHubEnv(context);
  const api = repoApi({ env, secrets: [{ name: 'GITHUB_TOKEN', value: env.token }, ...secretsFromEnv()], log: (l) => io.err(l) });
  const destination = calibrationModelDestination(config, configPath);
  const stoppedEarly = pairs < inputs.repeats ? { asked: inputs.repeats, continueCommand: continueCommand(env, inputs.candidate, inputs.repeats) } : undefined;
  // The branch it was dispatched on: its config is the one the model was measured for.
  const base = context.refType === 'branch' ? context.refName : undefined;
  const published = await publishCalibrationPr(api, {
    version: inputs.candidate,
    pairs,
    configPath,
    destination,
    model,
    modelText,
    reportFiles,
    plan,
    runUrl: runUrl(env),
    base,
    stoppedEarly,
  });
  const outputs = { 'pull-request-url': published.pull.html_url, 'model-path': destination.path };
  emitOutputs(outputs, io, flags['github-output'] ? process.env.GITHUB_OUTPUT : undefined);
  await writeJobSummary(
    `## loadgate: calibration\n\nThe measured noise model is in ${published.pull.html_url}, at \`${destination.path}\`${destination.setNoiseModel ? `; set \`noiseModel: ${destination.setNoiseModel}\` in \`${configPath}\`` : ''}.`,
  );
  return 0;
}
