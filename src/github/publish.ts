import type { CheckAnnotation } from './api.ts';
import { GitHubRepoApi } from './api.ts';
import type { BaselineChoiceFile } from './baseline-choice.ts';
import { finishCheckRun, finishedOutput, startCheckRun, type FinishOptions as CheckFinishOptions } from './check-run.ts';
import { createGitHubClient, type ClientOptions } from './client.ts';
import { nextStepsContext, runUrl, type GitHubEnv } from './env.ts';
import { redact } from './errors.ts';
import { VERDICT_LABEL, truncateForGitHub, verdictMarkdown } from './markdown.ts';
import { continuationEstimate, type GatePlan } from './check-run-plan.ts';
import type { NextStepsContext } from './next-steps.ts';
import type { GateConfig } from '../config/schema.ts';
import { readReportDir, type ReportFile } from './report-files.ts';
import { hotSpotCommits } from './hot-spot-commits.ts';
import { addReportNotes } from './report-notes.ts';
import { packForCommit } from './report-pack.ts';
import { publishReportPr, reportNames, type PublishedReport } from './report-pr.ts';
import { assertNoSecrets, findSecrets, type NamedSecret } from './secret-scan.ts';
import { readVerdict } from './verdict-file.ts';
import type { VerdictFile, Verdict } from '../results/verdict-schema.ts';
import type { Outputs } from './outputs.ts';
import { historyRecordSchema } from '../history/record.ts';
import { publishedRecordPath, recordLine } from '../history/store.ts';
import { GITHUB_HOSTED_JOB_LIMIT_MINUTES } from '../aws/job-limits.ts';
import { mostPairsFitRunJobs } from '../aws/run-jobs-fit.ts';

export interface PublishContext {
  env: GitHubEnv;
  /** Secret values that must not appear in anything published (the token among them). */
  secrets: readonly (string | NamedSecret)[];
  clientOptions?: Partial<ClientOptions>;
  log: (line: string) => void;
}

export function repoApi(ctx: PublishContext, target?: ReportsRepository): GitHubRepoApi {
  const client = createGitHubClient({
    token: target?.token ?? ctx.env.token,
    baseUrl: target?.apiUrl ?? ctx.env.apiUrl,
    log: ctx.log,
    ...(ctx.env.writeIntervalMs !== undefined ? { writeIntervalMs: ctx.env.writeIntervalMs } : {}),
    ...ctx.clientOptions,
  });
  const secrets = [...secretValues(ctx), ...(target?.token ? [target.token] : [])];
  return target ? new GitHubRepoApi(client, target.owner, target.repo, secrets) : new GitHubRepoApi(client, ctx.env.owner, ctx.env.repo, secrets);
}

/**
 * Where the report pull request goes when not to the calling repository: a reports
 * repository, written with its own token (the workflow's GITHUB_TOKEN reaches only the
 * repository it runs in).
 */
export interface ReportsRepository {
  owner: string;
  repo: string;
  /** Contents and pull-requests write on that repository; undefined: none was given. */
  token: string | undefined;
  /** Its GitHub API; the workflow's unless given (a second GitHub stand-in in tests). */
  apiUrl?: string | undefined;
  /** Why there is no token (the App's could not be minted), said instead of the generic fix. */
  tokenProblem?: string | undefined;
}

/** The report goes to another repository than the calling one. */
function elsewhere(ctx: PublishContext, reports: ReportsRepository | undefined): reports is ReportsRepository {
  return reports !== undefined && !(reports.owner === ctx.env.owner && reports.repo === ctx.env.repo);
}

/** The report's branch and directory: in a reports repository, under the product's owner/name. */
function namesFor(ctx: PublishContext, options: FinishOptions): { branch: string; directory: string } {
  return reportNames(options.baseline, options.candidate, elsewhere(ctx, options.reports) ? `${ctx.env.owner}/${ctx.env.repo}` : undefined);
}

/** The API the report PR is written through: the calling repository's, or the reports repository's with its token. */
function reportsApi(ctx: PublishContext, api: GitHubRepoApi, reports: ReportsRepository | undefined): GitHubRepoApi {
  if (!reports || (reports.owner === ctx.env.owner && reports.repo === ctx.env.repo && !reports.token)) return api;
  if (!reports.token) {
    if (reports.tokenProblem) throw new Error(`reports-repository ${reports.owner}/${reports.repo}: ${reports.tokenProblem}`);
    throw new Error(
      `reports-repository ${reports.owner}/${reports.repo}: no token that can write there (the workflow's own token reaches only ${ctx.env.owner}/${ctx.env.repo}); pass the reports-token secret (contents and pull-requests write on ${reports.owner}/${reports.repo}), or a GitHub App (app-client-id) installed on both repositories`,
    );
  }
  return repoApi(ctx, { ...reports, token: reports.token });
}

function secretValues(ctx: PublishContext): string[] {
  return ctx.secrets.map((s) => (typeof s === 'string' ? s : s.value));
}

async function resolveSha(api: GitHubRepoApi, candidate: string, sha: string | undefined): Promise<string> {
  return sha ?? api.resolveTagCommit(candidate);
}

export async function publishStart(
  ctx: PublishContext,
  options: { checkName: string; candidate: string; sha?: string | undefined; plan: GatePlan },
): Promise<{ outputs: Outputs; summary: string }> {
  const api = repoApi(ctx);
  const sha = await resolveSha(api, options.candidate, options.sha);
  const started = await startCheckRun(api, {
    name: options.checkName,
    sha,
    plan: options.plan,
    detailsUrl: runUrl(ctx.env),
    runId: ctx.env.runId,
    log: ctx.log,
  });
  const run = started.checkRun;
  ctx.log(`check run ${options.checkName} #${run.id} is in progress on ${sha} (${started.action === 'reused' ? 'the existing one, reused' : 'new'})`);
  return { outputs: { 'check-run-id': run.id, sha, 'check-run-url': run.html_url ?? '' }, summary: '' };
}

export interface FinishOptions {
  checkName: string;
  baseline: string;
  candidate: string;
  sha?: string | undefined;
  checkRunId?: number | undefined;
  reportDir: string;
  baselineChoice?: BaselineChoiceFile | undefined;
  /** Why there may be no verdict, e.g. "the gate job ended with: failure". */
  gateProblem?: string | undefined;
  /** The gate config path in the repository, for annotations. */
  configPath?: string | undefined;
  /** The gate stopped before it started (the preflight refused): the check run's title says so. */
  notStarted?: boolean | undefined;
  /** The gate config, read: what a continuation of an inconclusive gate costs. */
  config?: GateConfig | undefined;
  /** Where the report pull request goes; undefined: the calling repository. */
  reports?: ReportsRepository | undefined;
  /** The runners' job limit (the workflow's runner-limit-minutes): how many pairs one continuation's run jobs hold. */
  runnerLimitMinutes?: number | undefined;
  /** A token the publish job could not mint (the GitHub App's), said in the check run. */
  tokenProblem?: string | undefined;
}

/** The next steps' context, with what a continuation of this gate costs when the config is known. */
function nextStepsFor(ctx: PublishContext, options: FinishOptions, verdict: VerdictFile | null | undefined): NextStepsContext {
  const base = nextStepsContext(ctx.env);
  const config = options.config;
  if (!config || !verdict) return base;
  const tests = [...new Set(verdict.checks.map((c) => c.test))].filter((t) => config.tests.some((c) => c.name === t));
  return {
    ...base,
    estimate: (more) => continuationEstimate(config, tests, config.bench.kind, more),
    mostMorePairs: mostMorePairs(config, tests, options.runnerLimitMinutes),
  };
}

/** On AWS, the most pairs one continuation's run jobs hold, so that the advice is one the workflow accepts. */
function mostMorePairs(config: GateConfig, tests: readonly string[], limitMinutes = GITHUB_HOSTED_JOB_LIMIT_MINUTES): number | undefined {
  if (config.bench.kind !== 'aws') return undefined;
  try {
    return mostPairsFitRunJobs({ ...config, tests: config.tests.filter((t) => tests.includes(t.name)) }, limitMinutes);
  } catch {
    return undefined;
  }
}

export interface FinishResult {
  verdict: Verdict | null;
  conclusion: string;
  outputs: Outputs;
  summary: string;
  report?: PublishedReport;
  /**
   * The report PR could not be published. The check run is completed with the verdict
   * regardless and says why; the caller fails the step with this error afterwards.
   */
  reportError?: Error;
}

/** One annotation per gating check that did not pass, on the gate config. */
function annotationsFor(verdict: VerdictFile, configPath: string | undefined): CheckAnnotation[] {
  if (!configPath) return [];
  return verdict.checks
    .filter((c) => c.verdict === 'fail' || c.verdict === 'inconclusive')
    .map((c) => ({
      path: configPath,
      start_line: 1,
      end_line: 1,
      annotation_level: c.verdict === 'fail' ? ('failure' as const) : ('warning' as const),
      title: `${c.test} · ${c.metric}: ${c.verdict}`.slice(0, 250),
      message: c.reason.slice(0, 4000) || c.verdict,
    }));
}

function pullBody(verdict: VerdictFile, ctx: PublishContext, options: FinishOptions, directory: string, commits: string | undefined): string {
  const run = runUrl(ctx.env);
  const body = [
    verdictMarkdown({ verdict, runUrl: run, baselineReason: options.baselineChoice?.reason, nextSteps: nextStepsFor(ctx, options, verdict) }),
    '',
    ...(commits ? [commits.trimEnd(), ''] : []),
    '---',
    `The full report, graphs and run results are in \`${directory}/\` on this branch. ` +
      'Re-running the gate for the same versions adds a commit here and rewrites this description. Generated by loadgate.',
  ].join('\n');
  return truncateForGitHub(body, 65_536 - 1, `\`${directory}/README.md\``);
}

/** The files to commit: the report read back, scanned, with publish's notes and packing. */
async function reportFiles(ctx: PublishContext, options: FinishOptions, title: string, body: string, files: ReportFile[]): Promise<ReportFile[]> {
  // Scanned as written, before packing: a secret inside an archive would go unseen.
  assertNoSecrets(
    [...files.map((f) => ({ name: `report file ${f.path}`, content: f.content })), { name: 'the pull request text', content: title + body }],
    ctx.secrets,
  );
  const notes: string[] = [];
  if (options.baselineChoice) {
    notes.push(`Baseline choice: ${options.baselineChoice.reason}.`.replace(/\.\.$/, '.'));
    if (!files.some((f) => f.path === 'baseline-choice.json')) {
      files.push({ path: 'baseline-choice.json', content: Buffer.from(`${JSON.stringify(options.baselineChoice, null, 2)}\n`) });
    }
  }
  const packed = packForCommit(files);
  if (packed.packed.length) ctx.log(`report: packed ${packed.packed.map((d) => `${d}/`).join(' and ')} to keep the commit at ${packed.files.length} files`);
  return addReportNotes(packed.files, [...notes, ...packed.notes]);
}

async function publishReport(ctx: PublishContext, api: GitHubRepoApi, options: FinishOptions, verdict: VerdictFile): Promise<PublishedReport> {
  const run = runUrl(ctx.env);
  const names = namesFor(ctx, options);
  const { directory } = names;
  const read = await readReportDir(options.reportDir);
  // The server's repository is public: read with the workflow's token, through the same API.
  const commits = await hotSpotCommits(verdict, read, (owner, repo) => repoApi(ctx, { owner, repo, token: undefined }));
  const body = pullBody(verdict, ctx, options, directory, commits && redact(commits, secretValues(ctx)));
  const product = elsewhere(ctx, options.reports) ? `${ctx.env.owner}/${ctx.env.repo} ` : '';
  const title = `Performance report: ${product}${options.baseline} vs ${options.candidate} (${VERDICT_LABEL[verdict.verdict]})`;
  const files = await reportFiles(ctx, options, title, body, read);
  const history = historyFile(ctx, options, directory, read);
  const report = await publishReportPr(reportsApi(ctx, api, options.reports), {
    baseline: options.baseline,
    candidate: options.candidate,
    names,
    files,
    ...(history ? { repositoryFiles: [history] } : {}),
    title,
    body,
    commitMessage: `perf report: ${product}${options.baseline} vs ${options.candidate}: ${verdict.verdict}\n\n${verdict.summary}${run ? `\n\nWorkflow run: ${run}` : ''}`,
  });
  const what = report.pullAction === 'already-merged' ? `is already merged in #${report.pull.number}` : `#${report.pull.number} ${report.pullAction}`;
  ctx.log(`report ${report.committed ? 'committed' : 'unchanged'} on ${report.branch} (${report.commitSha}); pull request ${what}: ${report.pull.html_url}`);
  return report;
}

/**
 * The gate's record (history-record.json, written beside its report) as a file of the
 * reports repository's history, its report linked where the pull request puts it on the
 * default branch. A report without one (written by an older loadgate) adds none.
 */
function historyFile(ctx: PublishContext, options: FinishOptions, directory: string, read: readonly ReportFile[]): ReportFile | undefined {
  const file = read.find((f) => f.path === 'history-record.json');
  if (!file) return undefined;
  const record = historyRecordSchema.parse(JSON.parse(file.content.toString('utf8')));
  const where = options.reports ?? { owner: ctx.env.owner, repo: ctx.env.repo };
  const report = `${ctx.env.serverUrl}/${where.owner}/${where.repo}/tree/HEAD/${directory}`;
  return {
    path: publishedRecordPath(record.profile, record.baseline, record.candidate, ctx.env.runId),
    content: Buffer.from(recordLine({ ...record, report })),
  };
}

/**
 * Publishes the report PR, then completes the check run with the verdict, whatever
 * happened to the PR: a check run left in progress would block a release without
 * saying why. A PR failure is stated in the check run and returned as `reportError`.
 */
export async function publishFinish(ctx: PublishContext, options: FinishOptions): Promise<FinishResult> {
  const api = repoApi(ctx);
  const sha = await resolveSha(api, options.candidate, options.sha);
  const read = await readVerdict(options.reportDir, { baseline: options.baseline, candidate: options.candidate });
  const run = runUrl(ctx.env);
  const fallbackUrl = `${ctx.env.serverUrl}/${ctx.env.owner}/${ctx.env.repo}/commit/${sha}/checks`;
  const reason = options.baselineChoice?.reason;

  let report: PublishedReport | undefined;
  let reportError: Error | undefined;
  if (read.verdict) {
    try {
      report = await publishReport(ctx, api, options, read.verdict);
    } catch (error) {
      reportError = error instanceof Error ? error : new Error(String(error));
      ctx.log(`the report pull request was not published: ${redact(reportError.message, secretValues(ctx))}`);
    }
  } else {
    ctx.log(`no verdict: ${read.problem}`);
  }

  const problem = read.verdict ? undefined : [options.gateProblem, read.problem].filter(Boolean).join('; ');
  const checkOptions: CheckFinishOptions = {
    name: options.checkName,
    sha,
    checkRunId: options.checkRunId,
    runId: ctx.env.runId,
    log: ctx.log,
    verdict: read.verdict,
    problem,
    reportUrl: report?.pull.html_url,
    runUrl: run,
    fallbackUrl,
    baselineReason: reason,
    ...(options.notStarted && !read.verdict ? { noVerdictTitle: NOT_STARTED_TITLE } : {}),
    nextSteps: nextStepsFor(ctx, options, read.verdict),
    annotations: read.verdict ? annotationsFor(read.verdict, options.configPath) : [],
    reportProblem: reportError ? redact(reportError.message, secretValues(ctx)) : undefined,
    tokenProblem: options.tokenProblem,
  };
  const safeOptions = withoutSecrets(ctx, checkOptions);
  const finished = await finishCheckRun(api, safeOptions);
  ctx.log(`check run ${options.checkName} #${finished.checkRun.id} completed: ${finished.conclusion}`);
  return {
    verdict: read.verdict?.verdict ?? null,
    conclusion: finished.conclusion,
    summary: finished.summary,
    ...(report ? { report } : {}),
    ...(reportError ? { reportError } : {}),
    outputs: {
      verdict: read.verdict?.verdict ?? 'inconclusive',
      conclusion: finished.conclusion,
      'check-run-id': finished.checkRun.id,
      'check-run-url': finished.checkRun.html_url ?? '',
      'pr-number': report?.pull.number ?? '',
      'pr-url': report?.pull.html_url ?? '',
      branch: report?.branch ?? '',
      sha,
    },
  };
}

const NOT_STARTED_TITLE = 'No verdict: the gate could not start';

/**
 * Completes the check run of a gate that could not start (its config cannot be read, its
 * baseline cannot be picked, ...): action_required, saying why, so a ruleset that
 * requires the check shows a reason instead of waiting for a check that never comes.
 */
export async function publishAbort(
  ctx: PublishContext,
  options: { checkName: string; candidate: string; sha?: string | undefined; problem: string },
): Promise<{ outputs: Outputs; summary: string }> {
  const api = repoApi(ctx);
  const sha = await resolveSha(api, options.candidate, options.sha);
  const run = runUrl(ctx.env);
  const checkOptions: CheckFinishOptions = {
    name: options.checkName,
    sha,
    runId: ctx.env.runId,
    log: ctx.log,
    verdict: null,
    problem: options.problem,
    noVerdictTitle: NOT_STARTED_TITLE,
    runUrl: run,
    fallbackUrl: `${ctx.env.serverUrl}/${ctx.env.owner}/${ctx.env.repo}/commit/${sha}/checks`,
  };
  const finished = await finishCheckRun(api, withoutSecrets(ctx, checkOptions));
  ctx.log(`check run ${options.checkName} #${finished.checkRun.id} completed: ${finished.conclusion} (the gate could not start)`);
  return {
    outputs: { conclusion: finished.conclusion, 'check-run-id': finished.checkRun.id, 'check-run-url': finished.checkRun.html_url ?? '', sha },
    summary: finished.summary,
  };
}

/**
 * The check run must still be completed with the verdict when its text would carry a
 * secret (a verdict reason quoting a log line, say): the text is then replaced by a
 * notice, and the conclusion is kept.
 */
function withoutSecrets(ctx: PublishContext, options: CheckFinishOptions): CheckFinishOptions {
  const preview = finishedOutput(options);
  const findings = findSecrets([{ name: 'the check run text', content: `${preview.output.title}\n${preview.summary}` }], ctx.secrets);
  if (!findings.length) return options;
  ctx.log(`the check run text contains ${findings.map((f) => f.what).join(', ')}; posting the conclusion with a notice instead`);
  const notice =
    'The verdict text contained the value of a secret, so loadgate did not post it here. ' +
    'The verdict and this conclusion stand; read the report pull request or the workflow run, and remove the secret from what the gate records.';
  return {
    ...options,
    annotations: [],
    ...(options.reportProblem ? { reportProblem: 'the reason is withheld from this text; see the publish job log' } : {}),
    ...(options.verdict
      ? { verdict: { ...options.verdict, summary: 'text withheld (it contained a secret)', problems: [notice], checks: [] } }
      : { problem: notice }),
  };
}
