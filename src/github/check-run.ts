import type { Verdict, VerdictFile } from '../results/verdict-schema.ts';
import type { CheckAnnotation, CheckConclusion, CheckRun, CheckRunOutput, GitHubRepoApi } from './api.ts';
import { GitHubApiError } from './errors.ts';
import { GITHUB_TEXT_LIMIT, VERDICT_LABEL, truncateForGitHub, verdictMarkdown } from './markdown.ts';
import type { NextStepsContext } from './next-steps.ts';
import { planMarkdown, type GatePlan } from './check-run-plan.ts';

/**
 * The `loadgate` check run on the candidate's commit: in_progress with the plan when the
 * gate starts, completed with the verdict at the end. Only a pass ever maps to success;
 * neutral, skipped and cancelled are never used because required checks treat them as
 * passing.
 */
const CONCLUSION_FOR: Record<Verdict, CheckConclusion> = {
  pass: 'success',
  fail: 'failure',
  inconclusive: 'action_required',
};

/** GitHub takes at most 50 annotations per request; more are sent in further updates. */
const ANNOTATIONS_PER_REQUEST = 50;
/** Bounds the update loop; beyond this the summary and report carry the rest. */
const MAX_ANNOTATIONS = 500;

const TITLE_LIMIT = 250;

export interface StartOptions {
  name: string;
  sha: string;
  plan: GatePlan;
  detailsUrl?: string | undefined;
  /** The workflow run id; stored in external_id after the loadgate marker. */
  runId?: string | undefined;
  log?: ((line: string) => void) | undefined;
}

/** external_id of every check run loadgate creates: how it recognises its own. */
const EXTERNAL_ID_PREFIX = 'loadgate';

function externalIdFor(runId: string | undefined): string {
  return runId ? `${EXTERNAL_ID_PREFIX}:${runId}` : EXTERNAL_ID_PREFIX;
}

/**
 * loadgate's check runs of this name on the commit, newest first. A workflow job whose
 * name happens to be the check name also makes a check run; it has no loadgate
 * external_id and is left alone.
 */
async function ownCheckRuns(api: GitHubRepoApi, sha: string, name: string): Promise<CheckRun[]> {
  const runs = await api.listCheckRuns(sha, name);
  return runs
    .filter(
      (r) => r.name === name && r.head_sha === sha && (r.external_id === EXTERNAL_ID_PREFIX || (r.external_id ?? '').startsWith(`${EXTERNAL_ID_PREFIX}:`)),
    )
    .sort((a, b) => b.id - a.id);
}

export interface StartedCheck {
  checkRun: CheckRun;
  /** created: a new check run; reused: an existing one was set back to in progress. */
  action: 'created' | 'reused';
}

/**
 * One `loadgate` check run per commit: a re-run takes over the newest one (in progress
 * or completed) instead of adding another. GitHub may keep a completed check run
 * completed (it does not promise to reopen one); then, and only then, a new check run
 * carries this gate, and required checks read the newest.
 */
export async function startCheckRun(api: GitHubRepoApi, options: StartOptions): Promise<StartedCheck> {
  const output: CheckRunOutput = {
    title: `Running: ${options.plan.baseline} vs ${options.plan.candidate}`.slice(0, TITLE_LIMIT),
    summary: truncateForGitHub(planMarkdown(options.plan), GITHUB_TEXT_LIMIT, 'the workflow run'),
  };
  const externalId = externalIdFor(options.runId);
  const details = options.detailsUrl ? { detailsUrl: options.detailsUrl } : {};
  const [latest] = await ownCheckRuns(api, options.sha, options.name);
  if (latest) {
    // Status first and alone: if GitHub keeps a completed run completed, its verdict text
    // must not be overwritten with "Running". Another App's run (an earlier gate posted by a
    // GitHub App, this one by the workflow's token, or the other way) cannot be touched.
    const reopened = latest.status === 'completed' ? await updateOwn(api, latest.id, { status: 'in_progress', startedAt: true }, options) : latest;
    const reused =
      reopened && reopened.status !== 'completed'
        ? await updateOwn(api, latest.id, { status: 'in_progress', externalId, ...details, output }, options)
        : undefined;
    if (reused) return { checkRun: reused, action: 'reused' };
    if (reopened) options.log?.(`GitHub kept check run #${latest.id} completed; this gate gets a new ${options.name} check run, which required checks read`);
  }
  const checkRun = await api.createCheckRun({ name: options.name, headSha: options.sha, status: 'in_progress', ...details, externalId, output });
  return { checkRun, action: 'created' };
}

export interface FinishOptions {
  name: string;
  sha: string;
  /** From `publish --mode start`; otherwise loadgate's newest check run of that name on the commit. */
  checkRunId?: number | undefined;
  runId?: string | undefined;
  log?: ((line: string) => void) | undefined;
  /** null when the gate produced no verdict (it crashed or was cancelled). */
  verdict: VerdictFile | null;
  /** Why there is no verdict, shown in the check run. */
  problem?: string | undefined;
  /** The title without a verdict (default: the gate did not finish). */
  noVerdictTitle?: string | undefined;
  reportUrl?: string | undefined;
  runUrl?: string | undefined;
  /** Used when neither the report nor the run URL is known (action_required needs a link). */
  fallbackUrl: string;
  baselineReason?: string | undefined;
  nextSteps?: NextStepsContext | undefined;
  annotations?: CheckAnnotation[] | undefined;
  /** The report pull request could not be published: why, and how to fix it. */
  reportProblem?: string | undefined;
  /** A token the publish job could not mint (the GitHub App's): said first, whatever the verdict. */
  tokenProblem?: string | undefined;
}

export interface FinishedCheck {
  checkRun: CheckRun;
  conclusion: CheckConclusion;
  summary: string;
}

/** The markdown for a gate that produced no verdict. */
function noVerdictMarkdown(problem: string, runUrl: string | undefined): string {
  return [
    `## loadgate: ${VERDICT_LABEL.inconclusive}`,
    '',
    'The gate did not produce a verdict, so the candidate is not cleared.',
    '',
    `Reason: ${problem.replace(/[\r\n]+/g, ' ')}`,
    ...(runUrl ? ['', `See the [workflow run](${runUrl}) for the logs, fix the cause and re-run the gate.`] : []),
  ].join('\n');
}

/** Said first in the check run when the verdict is known but the report PR failed. */
function reportProblemMarkdown(problem: string, runUrl: string | undefined): string {
  return [
    '> [!WARNING]',
    '> **The report pull request was not published.** The verdict below stands; the full report is in the',
    `> workflow run's \`loadgate-report\` artifact${runUrl ? ` ([run](${runUrl}))` : ''}. Fix the cause and re-run the publish job:`,
    `> ${problem.replace(/[\r\n]+/g, ' ')}`,
  ].join('\n');
}

/** Said first in the check run when the publish job had to do without the App's token. */
function tokenProblemMarkdown(problem: string): string {
  return ['> [!WARNING]', `> **Published without the GitHub App's token**: ${problem.replace(/[\r\n]+/g, ' ')}.`].join('\n');
}

export function finishedOutput(options: FinishOptions): { conclusion: CheckConclusion; output: CheckRunOutput; summary: string } {
  const warning = options.tokenProblem ? [tokenProblemMarkdown(options.tokenProblem), ''] : [];
  if (!options.verdict) {
    const summary = [...warning, noVerdictMarkdown(options.problem ?? 'no verdict.json was produced', options.runUrl)].join('\n');
    return {
      conclusion: 'action_required',
      summary,
      output: {
        title: options.noVerdictTitle ?? 'No verdict: the gate did not finish',
        summary: truncateForGitHub(summary, GITHUB_TEXT_LIMIT, 'the workflow run'),
      },
    };
  }
  const v = options.verdict;
  const summary = [
    ...warning,
    ...(options.reportProblem ? [reportProblemMarkdown(options.reportProblem, options.runUrl), ''] : []),
    verdictMarkdown({ verdict: v, reportUrl: options.reportUrl, runUrl: options.runUrl, baselineReason: options.baselineReason, nextSteps: options.nextSteps }),
  ].join('\n');
  return {
    conclusion: CONCLUSION_FOR[v.verdict],
    summary,
    output: {
      title: `${VERDICT_LABEL[v.verdict]}: ${v.summary}`.replace(/[\r\n]+/g, ' ').slice(0, TITLE_LIMIT),
      summary: truncateForGitHub(summary, GITHUB_TEXT_LIMIT, options.reportUrl ? 'the report pull request' : 'the report'),
    },
  };
}

/**
 * Updates the check run, or undefined when GitHub refuses because another App created it
 * (only that App may complete it: a publish job left with the workflow's own token); the
 * verdict then goes on a check run of its own, which required checks of that name read.
 */
async function updateOwn(
  api: GitHubRepoApi,
  id: number,
  update: Parameters<GitHubRepoApi['updateCheckRun']>[1],
  options: { name: string; log?: ((line: string) => void) | undefined },
): Promise<CheckRun | undefined> {
  try {
    return await api.updateCheckRun(id, update);
  } catch (error) {
    if (!(error instanceof GitHubApiError && error.status === 403 && /another GitHub App/.test(error.message))) throw error;
    options.log?.(
      `check run #${id} belongs to another GitHub App (only the App that created a check run may change it); this gate goes on a new ${options.name} check run`,
    );
    return undefined;
  }
}

export async function finishCheckRun(api: GitHubRepoApi, options: FinishOptions): Promise<FinishedCheck> {
  const { conclusion, output, summary } = finishedOutput(options);
  const detailsUrl = options.reportUrl ?? options.runUrl ?? options.fallbackUrl;
  const externalId = externalIdFor(options.runId);
  const complete = { status: 'completed' as const, conclusion, detailsUrl, externalId };

  const runs = await ownCheckRuns(api, options.sha, options.name);
  const existing: Pick<CheckRun, 'id' | 'output'> | undefined =
    options.checkRunId === undefined ? runs[0] : (runs.find((r) => r.id === options.checkRunId) ?? { id: options.checkRunId });

  // Annotations cannot be deleted and GitHub appends them on every update, so a check
  // run that already has some (a re-publish) keeps them rather than getting duplicates.
  const annotations = existing?.output?.annotations_count ? [] : (options.annotations ?? []).slice(0, MAX_ANNOTATIONS);
  const batches: CheckAnnotation[][] = [];
  for (let i = 0; i < annotations.length; i += ANNOTATIONS_PER_REQUEST) batches.push(annotations.slice(i, i + ANNOTATIONS_PER_REQUEST));
  const first = batches.shift();
  const firstOutput = first ? { ...output, annotations: first } : output;

  let checkRun: CheckRun | undefined;
  if (existing) {
    checkRun = await updateOwn(api, existing.id, { ...complete, output: firstOutput }, options);
    if (checkRun && (checkRun.status !== 'completed' || checkRun.conclusion !== conclusion)) {
      // GitHub kept an earlier conclusion on a completed run: the verdict must not be lost,
      // so it goes on a new check run, the one required checks read.
      options.log?.(`GitHub kept check run #${existing.id} at ${checkRun.conclusion}; the ${conclusion} verdict goes on a new ${options.name} check run`);
      checkRun = undefined;
    }
  }
  checkRun ??= await api.createCheckRun({ name: options.name, headSha: options.sha, ...complete, output: firstOutput });
  // Further batches append annotations; title and summary must be repeated each time.
  for (const batch of batches) checkRun = await api.updateCheckRun(checkRun.id, { output: { ...output, annotations: batch } });
  return { checkRun, conclusion, summary };
}
