import { z } from 'zod';
import type { GateConfig } from '../config/schema.ts';
import { InputError } from '../util/errors.ts';
import { formatDuration } from '../util/duration.ts';
import type { DurationEstimate, RunSlot } from './cost.ts';

/**
 * The AWS gate as GitHub Actions jobs that each fit the runner's job limit: provision,
 * run slots (consecutive runs packed in the gate's interleaved order, each slot
 * continuing from the previous one's results), compare and publish, teardown. A
 * GitHub-hosted job stops at 6 hours ("Usage limits", GitHub Actions documentation:
 * job execution time 6 hours; self-hosted runners 5 days), so the limit is an input.
 */
export const GITHUB_HOSTED_JOB_LIMIT_MINUTES = 360;
/**
 * Run jobs in `.github/workflows/loadgate.yml` (run-aws-1 …); a test holds the two equal.
 * Five: the seed comparison run sequentially, with every pair its maxRepeats allows, fills
 * four jobs with its runs, and the first also waits for the dump load.
 */
export const WORKFLOW_RUN_JOBS = 5;
/** Kept free in every job for checkout, credentials, Terraform init and the artifacts. */
export const JOB_MARGIN_SEC = 20 * 60;
/**
 * The `timeout-minutes` of the reusable workflow's provision-aws and teardown jobs (a test
 * holds them equal to `.github/workflows/loadgate.yml`). Provisioning waits for the release
 * tarballs (target.releaseWait, 30 minutes by default: an rc tag often comes before its
 * tarball), then applies; a job killed mid-apply leaves its state locked.
 */
export const PROVISION_JOB_TIMEOUT_MINUTES = 120;
export const TEARDOWN_JOB_TIMEOUT_MINUTES = 60;

/**
 * A runner's job limit in whole minutes: `plan --runner-limit`, `run --runner-limit` and
 * the workflow's runner-limit-minutes input. A string must be plain digits: Number()
 * alone would also take `0x3c`, `1e2` or ` 60 ` and plan a job limit nobody wrote.
 */
export const runnerLimitSchema = z
  .union([z.number(), z.string()])
  .transform((value) => (typeof value === 'number' ? value : /^[0-9]+$/.test(value) ? Number(value) : Number.NaN))
  .pipe(
    z
      .number({ error: 'expected whole minutes, digits only' })
      .int('expected whole minutes, digits only')
      .min(30, 'at least 30 minutes')
      .max(7200, 'at most 7200 minutes (5 days, the self-hosted limit)'),
  );

/** What the runner limit and the job budget are called where they were given: flags or workflow inputs. */
export interface JobBudgetNames {
  limit: string;
  budget: string;
}

const JOB_BUDGET_FLAGS: JobBudgetNames = { limit: '--runner-limit', budget: '--job-budget' };

/** How to fix a refused job budget: the range it must be in, and that leaving it out gives the most. */
export function jobBudgetFix(limitMinutes: number, names: JobBudgetNames = JOB_BUDGET_FLAGS): string {
  const most = jobBudgetSec(limitMinutes);
  return `give a duration such as 4h30m, 90s or 90 (seconds), above 0 and at most ${formatDuration(most)} (${most}s: ${names.limit} ${limitMinutes} less ${formatDuration(JOB_MARGIN_SEC)} per job for set-up), or leave ${names.budget} unset to use that`;
}

/**
 * The run-time budget of one job of a multi-job gate, in seconds: the runner's job limit
 * less JOB_MARGIN_SEC, or `askedSec`, which may lower it and never raise it. A budget of
 * 0 or above that is refused (InputError, exit 3), naming both settings.
 */
export function jobBudgetSec(limitMinutes: number, askedSec?: number, names: JobBudgetNames = JOB_BUDGET_FLAGS): number {
  const most = limitMinutes * 60 - JOB_MARGIN_SEC;
  if (askedSec === undefined) return most;
  const fix = jobBudgetFix(limitMinutes, names);
  if (askedSec <= 0) throw new InputError(`${names.budget}: must be above 0; ${fix}`);
  if (askedSec > most) throw new InputError(`${names.budget}: ${formatDuration(askedSec)} is longer than ${names.limit} allows; ${fix}`);
  return askedSec;
}

export interface PlannedJob {
  name: string;
  seconds: number;
  /** The job's timeout-minutes in the workflow. */
  limitMinutes: number;
  /** What the job spends besides runs: the release wait and the apply, the dataset's load. */
  parts?: { what: string; seconds: number }[];
  runs?: RunSlot[];
}

export interface JobPlan {
  limitMinutes: number;
  jobs: PlannedJob[];
  /** Run slots: how many run jobs the workflow needs at most. */
  runJobs: number;
}

/** The config setting that makes a test's runs as long as they are, and its value. */
function settingFor(config: GateConfig, testName: string): { path: string; seconds: number } {
  const index = config.tests.findIndex((t) => t.name === testName);
  const test = config.tests[index];
  if (test?.type === 'unbounded') return { path: `tests[${index}].maxDuration`, seconds: test.maxDuration };
  return { path: `tests[${index}].duration`, seconds: test?.duration ?? 0 };
}

/**
 * Splits the estimate into jobs under `limitMinutes`, or refuses (InputError, exit 3)
 * when one piece cannot fit, naming the setting to change.
 */
export function planJobs(config: GateConfig, duration: DurationEstimate, limitMinutes = GITHUB_HOSTED_JOB_LIMIT_MINUTES): JobPlan {
  const budget = jobBudgetSec(limitMinutes);
  const limit = `the runner's job limit of ${formatDuration(limitMinutes * 60)} (less ${formatDuration(JOB_MARGIN_SEC)} per job for set-up)`;
  const selfHosted = `On a self-hosted runner, raise the limit with --runner-limit (the workflow's runner-limit-minutes input).`;
  if (budget <= 0)
    throw new InputError(`--runner-limit: ${limitMinutes} minutes leaves no time after the ${formatDuration(JOB_MARGIN_SEC)} each job keeps for set-up`);
  for (const run of duration.runs) {
    if (run.seconds > budget) {
      const setting = settingFor(config, run.test);
      const setUp = run.seconds - setting.seconds;
      const most = budget - setUp;
      // When the set-up alone fills the job, no test duration fits: only a longer limit does.
      const fix =
        most > 0
          ? `Lower ${setting.path} to at most ${formatDuration(most)}. ${selfHosted}`
          : `Its set-up alone (${formatDuration(setUp)}) leaves no time for the test: the limit must be at least ${Math.ceil((run.seconds + JOB_MARGIN_SEC) / 60)} minutes (--runner-limit, the workflow's runner-limit-minutes input, on a self-hosted runner).`;
      throw new InputError(
        `${setting.path}: one ${run.test} run takes up to ${formatDuration(run.seconds)} (set-up between runs included), longer than ${limit}. ${fix}`,
      );
    }
  }
  const provision = provisionJob(config, duration);
  if (duration.teardownSec > TEARDOWN_JOB_TIMEOUT_MINUTES * 60 - JOB_MARGIN_SEC) {
    throw new InputError(
      `teardown takes up to ${formatDuration(duration.teardownSec)}, longer than the teardown job's timeout-minutes (${TEARDOWN_JOB_TIMEOUT_MINUTES}) less ${formatDuration(JOB_MARGIN_SEC)} for set-up`,
    );
  }
  // Run job 1 first waits for the nodes' user data: the dump load, when there is one.
  const first = duration.runs[0];
  if (first && duration.datasetSec + first.seconds > budget) {
    throw new InputError(
      `the first run job waits for the dataset's dump load (up to ${formatDuration(duration.datasetSec)}) before its first run (${first.test}, up to ${formatDuration(first.seconds)}), longer than ${limit}. ` +
        `Restore a snapshot instead (bench.aws.database.snapshotIdentifier or --db-snapshot: no load), shorten that test, or ${selfHosted.charAt(0).toLowerCase()}${selfHosted.slice(1)}`,
    );
  }
  const slots: RunSlot[][] = [];
  let current: RunSlot[] = [];
  let used = duration.datasetSec;
  for (const run of duration.runs) {
    if (used + run.seconds > budget && current.length) {
      slots.push(current);
      current = [];
      used = 0;
    }
    current.push(run);
    used += run.seconds;
  }
  if (current.length) slots.push(current);
  if (slots.length > WORKFLOW_RUN_JOBS) {
    throw new InputError(
      `the worst case (every pair maxRepeats allows) needs ${slots.length} run jobs of at most ${formatDuration(budget)}, and the workflow has ${WORKFLOW_RUN_JOBS}. ` +
        `Lower maxRepeats (now ${config.maxRepeats}) or the tests' duration/maxDuration. ${selfHosted}`,
    );
  }
  const dataset = duration.datasetSec ? [{ what: 'dump load', seconds: duration.datasetSec }] : [];
  const jobs: PlannedJob[] = [
    provision,
    ...slots.map((runs, i): PlannedJob => {
      const parts = i === 0 ? dataset : [];
      return {
        name: `run ${i + 1}`,
        seconds: parts.reduce((sum, p) => sum + p.seconds, 0) + runs.reduce((sum, r) => sum + r.seconds, 0),
        limitMinutes,
        ...(parts.length ? { parts } : {}),
        runs,
      };
    }),
    { name: 'teardown', seconds: duration.teardownSec, limitMinutes: TEARDOWN_JOB_TIMEOUT_MINUTES },
  ];
  return { limitMinutes, jobs, runJobs: slots.length };
}

/**
 * The provision job: the release wait and the apply, against its own timeout-minutes
 * (not the run jobs' limit), or refused naming the limit and the setting that fills it.
 */
function provisionJob(config: GateConfig, duration: DurationEstimate): PlannedJob {
  const { releaseWaitSec, applySec } = duration.provisionJob;
  const seconds = releaseWaitSec + applySec;
  const budget = PROVISION_JOB_TIMEOUT_MINUTES * 60 - JOB_MARGIN_SEC;
  if (seconds > budget) {
    const most = budget - applySec;
    throw new InputError(
      `target.releaseWait: the provision job waits up to ${formatDuration(releaseWaitSec)} for the release, then applies for up to ${formatDuration(applySec)} (network, instances, Aurora and any OpenSearch), ` +
        `longer than the provision job's timeout-minutes (${PROVISION_JOB_TIMEOUT_MINUTES}) less ${formatDuration(JOB_MARGIN_SEC)} for set-up; a job killed mid-apply leaves the bench half built and its state locked. ` +
        (most > 0
          ? `Lower target.releaseWait to at most ${formatDuration(most)}.`
          : `The apply alone fills the job: use a smaller bench (no OpenSearch, a new cluster rather than a snapshot restore).`),
    );
  }
  return {
    name: 'provision',
    seconds,
    limitMinutes: PROVISION_JOB_TIMEOUT_MINUTES,
    parts: [
      { what: 'release wait', seconds: releaseWaitSec },
      { what: 'apply', seconds: applySec },
    ],
  };
}

export function renderJobPlan(plan: JobPlan): string {
  const lines = [
    `Jobs (each under its limit, ${formatDuration(JOB_MARGIN_SEC)} kept for set-up; run jobs: the ${formatDuration(plan.limitMinutes * 60)} runner limit):`,
  ];
  for (const job of plan.jobs) {
    const pieces = [
      ...(job.parts ?? []).map((p) => `${p.what} ${formatDuration(p.seconds)}`),
      ...(job.runs ?? []).map((r) => `${r.test} ${r.side} #${r.repeat + 1}`),
    ];
    lines.push(
      `  ${job.name.padEnd(14)} ${formatDuration(job.seconds)} of ${formatDuration(job.limitMinutes * 60)}${pieces.length ? ` (${pieces.join(', ')})` : ''}`,
    );
  }
  return lines.join('\n');
}
