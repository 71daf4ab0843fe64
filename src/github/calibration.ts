import { posix } from 'node:path';
import type { GateConfig } from '../config/schema.ts';
import type { NoiseModelFile } from '../noise/schema.ts';
import { isBuiltinNoiseModel } from '../noise/model.ts';
import { describeDuration } from '../util/duration.ts';
import type { GitHubRepoApi } from './api.ts';
import type { GatePlan } from './check-run-plan.ts';
import { escapeCell, escapeInline } from './markdown.ts';
import type { ReportFile } from './report-files.ts';
import { publishReportPr, type PublishedReport } from './report-pr.ts';

/**
 * A calibration run by the reusable workflow: its plan (the cost, shown before anything is
 * provisioned) and the pull request that brings its measured noise model back to the
 * repository, at the path the gate config reads it from. A calibration is not a verdict:
 * it posts no check run.
 */

/** Where a measured model goes when the config names none of its own (or a shipped one). */
const DEFAULT_CALIBRATION_MODEL_PATH = '.github/loadgate-noise.json';

export interface ModelDestination {
  /** Repository path of the model file. */
  path: string;
  /** When the config does not read that path yet: the `noiseModel:` value that makes it. */
  setNoiseModel?: string;
  /** Why the model does not go where the config names. */
  reason?: string;
}

/** The repository path the config's `noiseModel:` names (relative to the config file), or the default one and why. */
export function calibrationModelDestination(config: GateConfig, configPath: string): ModelDestination {
  const dir = posix.dirname(configPath);
  const fallback = (reason: string): ModelDestination => ({
    path: DEFAULT_CALIBRATION_MODEL_PATH,
    setNoiseModel: posix.relative(dir, DEFAULT_CALIBRATION_MODEL_PATH),
    reason,
  });
  const value = config.noiseModel;
  if (!value) return fallback('the config names no noiseModel, so its gates assume the noise from the tolerances');
  if (isBuiltinNoiseModel(value)) return fallback(`the config names ${value}, a model loadgate ships, which a repository cannot overwrite`);
  const path = posix.normalize(posix.join(dir, value));
  if (posix.isAbsolute(value) || path === '..' || path.startsWith('../')) return fallback(`the config's noiseModel ${value} is outside the repository`);
  return { path };
}

/** The calibration's branch and report directory, one per calibrated version. */
function calibrationNames(version: string): { branch: string; directory: string } {
  return { branch: `loadgate-calibration/${version}`, directory: `reports/calibration-${version}` };
}

/** The AWS cost lines of a plan, or why there is none. */
function costLines(plan: GatePlan): string[] {
  if (!plan.aws) return [`Estimated duration: up to ${describeDuration(Math.ceil(plan.estimatedSeconds / 60) * 60)} on the ${plan.bench} bench (no AWS cost).`];
  if ('error' in plan.aws) return [`The AWS plan could not be built: ${escapeInline(plan.aws.error)}`];
  const a = plan.aws;
  const budget =
    a.maxCostUsd === null
      ? 'no max-cost set'
      : `max-cost $${a.maxCostUsd.toFixed(2)}: ${a.withinBudget ? 'within it' : '**over it: provisioning refuses this calibration**'}`;
  return [
    `Worst-case cost: **$${a.totalUsd.toFixed(2)}** (${budget}), up to ${describeDuration(Math.ceil(a.totalSec / 60) * 60)} from provisioning to teardown; ${a.preset} in ${a.region}, prices of ${a.pricesRegion} as of ${a.pricesAsOf}.`,
    '',
    '<details><summary>loadgate plan</summary>',
    '',
    '```text',
    a.text.replace(/```/g, "'''"),
    '```',
    '',
    '</details>',
  ];
}

/** The job summary of a calibration about to start: what it runs and what it costs at most. */
export function calibrationPlanMarkdown(plan: GatePlan): string {
  return [
    '## loadgate: calibrating',
    '',
    `Version **${escapeInline(plan.candidate)}** on both sides of ${plan.repeats} A/A pair${plan.repeats === 1 ? '' : 's'} on the **${plan.bench}** bench, every pair run (no early stop). No check run: a calibration is not a verdict.`,
    '',
    '| Test | Type | Load |',
    '|---|---|---|',
    ...plan.tests.map((t) => `| ${escapeCell(t.name)} | ${t.type} | ${escapeCell(t.description)} |`),
    '',
    ...costLines(plan),
  ].join('\n');
}

/** The per-metric figures of a measured model, as the PR shows them. */
function modelTable(model: NoiseModelFile): string[] {
  const duet = model.mode === 'duet';
  return [
    `| Test | Metric | sd of ln(value) ${duet ? 'per duet' : 'per run'} | ${duet ? 'Duets' : 'Runs'} | Degrees of freedom | Kind |`,
    '|---|---|---|---|---|---|',
    ...model.entries.map(
      (e) => `| ${escapeCell(e.test)} | ${escapeCell(e.metric)} | ${(e.sdLog * 100).toFixed(2)} % | ${duet ? e.runs / 2 : e.runs} | ${e.df} | ${e.kind} |`,
    ),
  ];
}

export interface CalibrationPrOptions {
  version: string;
  pairs: number;
  configPath: string;
  destination: ModelDestination;
  model: NoiseModelFile;
  /** The model file as calibrate wrote it, committed byte for byte. */
  modelText: Buffer;
  /** The calibration's report (README, verdict.json, results/), kept beside it for review. */
  reportFiles: readonly ReportFile[];
  plan: GatePlan;
  runUrl?: string | undefined;
  /** The branch the calibration was dispatched on, whose config it measured: the pull request's base. */
  base?: string | undefined;
  /** The last run job stopped early: the model is of `pairs`, fewer than asked; how to go on. */
  stoppedEarly?: { asked: number; continueCommand: string } | undefined;
}

function calibrationPrBody(o: CalibrationPrOptions): string {
  const { directory } = calibrationNames(o.version);
  const set = o.destination.setNoiseModel;
  const lines = [
    `Calibration of the bench with **${escapeInline(o.version)}** on both sides, ${o.pairs} A/A pairs${o.runUrl ? ` ([workflow run](${o.runUrl}))` : ''}: the measured noise model of \`${escapeInline(o.configPath)}\`'s tests, at \`${escapeInline(o.destination.path)}\`, ready to merge.`,
    '',
    ...(o.stoppedEarly ? stoppedEarlyLines(o.pairs, o.stoppedEarly) : []),
    ...modelTable(o.model),
    '',
  ];
  if (set) {
    lines.push(
      `**Before the next gate uses it**, set \`noiseModel: ${escapeInline(set)}\` in \`${escapeInline(o.configPath)}\` (in this pull request, or on every release branch that gates): ${escapeInline(o.destination.reason ?? '')}.`,
      '',
    );
  } else {
    lines.push(
      `\`${escapeInline(o.configPath)}\` already reads its model from \`${escapeInline(o.destination.path)}\`: the next gate uses this one once it is merged (and on every release branch that gates).`,
      '',
    );
  }
  lines.push(
    `The model holds for this config's tests and bench only: changing a test's shape, a gating metric or the bench's hardware makes gates refuse it until the bench is calibrated again. The runs and their report are in \`${escapeInline(directory)}/\`.`,
    '',
    ...costLines(o.plan),
  );
  return lines.join('\n');
}

/** A calibration whose last run job ran out: what it measured, and the dispatch that adds the rest. */
function stoppedEarlyLines(pairs: number, early: { asked: number; continueCommand: string }): string[] {
  return [
    `> [!NOTE]`,
    `> **Stopped early** after ${pairs} of the ${early.asked} A/A pairs asked: the run jobs ran out of time, so this model is measured from the ${pairs} completed (${pairs} − 1 degrees of freedom a metric in duet mode, 2 × ${pairs} − 1 in sequential). It is usable as it is; to measure the rest, continue the calibration (its completed pairs are reused) and merge the pull request it updates:`,
    '',
    '```sh',
    early.continueCommand,
    '```',
    '',
  ];
}

/** Commits the model where the config reads it, and the report beside it, on the calibration's branch, and opens (or updates) its pull request. */
export async function publishCalibrationPr(api: GitHubRepoApi, o: CalibrationPrOptions): Promise<PublishedReport> {
  return publishReportPr(api, {
    baseline: o.version,
    candidate: o.version,
    names: calibrationNames(o.version),
    files: o.reportFiles,
    repositoryFiles: [{ path: o.destination.path, content: o.modelText }],
    title: `loadgate: noise model calibrated with ${o.version} (${o.pairs} A/A pairs)`,
    body: calibrationPrBody(o),
    commitMessage: `loadgate: calibrate the bench with ${o.version}, ${o.pairs} A/A pairs`,
    base: o.base,
  });
}
