import type { Verdict, VerdictFile } from '../compare/verdict-schema.ts';
import type { CheckAnnotation, CheckConclusion, CheckRun, CheckRunOutput, GitHubRepoApi } from './api.ts';
import { GITHUB_TEXT_LIMIT, VERDICT_LABEL, truncateForGitHub, verdictMarkdown } from './markdown.ts';
import { planMarkdown, type GatePlan } from './plan.ts';

/**
 * The `loadgate` check run on the candidate's commit: in_progress with the plan when the
 * gate starts, completed with the verdict at the end. Only a pass ever maps to success;
 * neutral, skipped and cancelled are never used because required checks treat them as
 * passing.
 */
export const CONCLUSION_FOR: Record<Verdict, CheckConclusion> = {
  pass: 'success',
  fail: 'failure',
  inconclusive: 'action_required',
};

/** GitHub takes at most 50 annotations per request; more are sent in further updates. */
export const ANNOTATIONS_PER_REQUEST = 50;
/** Bounds the update loop; beyond this the summary and report carry the rest. */
export const MAX_ANNOTATIONS = 500;

const TITLE_LIMIT = 250;

export interface StartOptions {
  name: string;
  sha: string;
  plan: GatePlan;
  detailsUrl?: string | undefined;
  externalId?: string | undefined;
}

export async function startCheckRun(api: GitHubRepoApi, options: StartOptions): Promise<CheckRun> {
  const output: CheckRunOutput = {
    title: `Running: ${options.plan.baseline} vs ${options.plan.candidate}`.slice(0, TITLE_LIMIT),
    summary: truncateForGitHub(planMarkdown(options.plan), GITHUB_TEXT_LIMIT, 'the workflow run'),
  };
  // A run left in progress by an attempt that died is picked up; a completed one cannot be
  // reopened, so a re-run adds a new attempt, which is the one required checks read.
  const open = (await api.listCheckRuns(options.sha, options.name)).find((r) => r.status !== 'completed');
  if (open) return api.updateCheckRun(open.id, { status: 'in_progress', ...(options.detailsUrl ? { detailsUrl: options.detailsUrl } : {}), output });
  return api.createCheckRun({
    name: options.name,
    headSha: options.sha,
    status: 'in_progress',
    ...(options.detailsUrl ? { detailsUrl: options.detailsUrl } : {}),
    ...(options.externalId ? { externalId: options.externalId } : {}),
    output,
  });
}

export interface FinishOptions {
  name: string;
  sha: string;
  /** From `publish --mode start`; otherwise the newest run of that name on the commit is used. */
  checkRunId?: number | undefined;
  /** null when the gate produced no verdict (it crashed or was cancelled). */
  verdict: VerdictFile | null;
  /** Why there is no verdict, shown in the check run. */
  problem?: string | undefined;
  reportUrl?: string | undefined;
  runUrl?: string | undefined;
  /** Used when neither the report nor the run URL is known (action_required needs a link). */
  fallbackUrl: string;
  baselineReason?: string | undefined;
  annotations?: CheckAnnotation[] | undefined;
}

export interface FinishedCheck {
  checkRun: CheckRun;
  conclusion: CheckConclusion;
  summary: string;
}

/** The markdown for a gate that produced no verdict. */
export function noVerdictMarkdown(problem: string, runUrl: string | undefined): string {
  return [
    `## loadgate: ${VERDICT_LABEL.inconclusive}`,
    '',
    'The gate did not produce a verdict, so the candidate is not cleared.',
    '',
    `Reason: ${problem.replace(/[\r\n]+/g, ' ')}`,
    ...(runUrl ? ['', `See the [workflow run](${runUrl}) for the logs, fix the cause and re-run the gate.`] : []),
  ].join('\n');
}

export function finishedOutput(options: FinishOptions): { conclusion: CheckConclusion; output: CheckRunOutput; summary: string } {
  if (!options.verdict) {
    const summary = noVerdictMarkdown(options.problem ?? 'no verdict.json was produced', options.runUrl);
    return { conclusion: 'action_required', summary, output: { title: 'No verdict: the gate did not finish', summary: truncateForGitHub(summary, GITHUB_TEXT_LIMIT, 'the workflow run') } };
  }
  const v = options.verdict;
  const summary = verdictMarkdown({ verdict: v, reportUrl: options.reportUrl, runUrl: options.runUrl, baselineReason: options.baselineReason });
  return {
    conclusion: CONCLUSION_FOR[v.verdict],
    summary,
    output: {
      title: `${VERDICT_LABEL[v.verdict]}: ${v.summary}`.replace(/[\r\n]+/g, ' ').slice(0, TITLE_LIMIT),
      summary: truncateForGitHub(summary, GITHUB_TEXT_LIMIT, options.reportUrl ? 'the report pull request' : 'the report'),
    },
  };
}

export async function finishCheckRun(api: GitHubRepoApi, options: FinishOptions): Promise<FinishedCheck> {
  const { conclusion, output, summary } = finishedOutput(options);
  const detailsUrl = options.reportUrl ?? options.runUrl ?? options.fallbackUrl;
  const annotations = (options.annotations ?? []).slice(0, MAX_ANNOTATIONS);
  const batches: CheckAnnotation[][] = [];
  for (let i = 0; i < annotations.length; i += ANNOTATIONS_PER_REQUEST) batches.push(annotations.slice(i, i + ANNOTATIONS_PER_REQUEST));
  const first = batches.shift();
  const firstOutput = first ? { ...output, annotations: first } : output;

  let id = options.checkRunId;
  if (id === undefined) {
    const runs = await api.listCheckRuns(options.sha, options.name);
    id = runs.find((r) => r.status !== 'completed')?.id;
  }
  let checkRun =
    id === undefined
      ? await api.createCheckRun({ name: options.name, headSha: options.sha, status: 'completed', conclusion, detailsUrl, output: firstOutput })
      : await api.updateCheckRun(id, { status: 'completed', conclusion, detailsUrl, output: firstOutput });
  // Further batches append annotations; title and summary must be repeated each time.
  for (const batch of batches) checkRun = await api.updateCheckRun(checkRun.id, { output: { ...output, annotations: batch } });
  return { checkRun, conclusion, summary };
}
