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
/** Run jobs in `.github/workflows/loadgate.yml` (run-aws-1 …); a test holds the two equal. */
export const WORKFLOW_RUN_JOBS = 4;
/** Kept free in every job for checkout, credentials, Terraform init and the artifacts. */
export const JOB_MARGIN_SEC = 20 * 60;

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
  if (budget <= 0) throw new InputError(`--runner-limit: ${limitMinutes} minutes leaves no time after the ${formatDuration(JOB_MARGIN_SEC)} each job keeps for set-up`);
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
  if (duration.provisionSec > budget) throw new InputError(`provisioning takes up to ${formatDuration(duration.provisionSec)}, longer than ${limit}. ${selfHosted}`);
  if (duration.teardownSec > budget) throw new InputError(`teardown takes up to ${formatDuration(duration.teardownSec)}, longer than ${limit}. ${selfHosted}`);
  const slots: RunSlot[][] = [];
  let current: RunSlot[] = [];
  let used = 0;
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
  const jobs: PlannedJob[] = [
    { name: 'provision', seconds: duration.provisionSec },
    ...slots.map((runs, i) => ({ name: `run ${i + 1}`, seconds: runs.reduce((sum, r) => sum + r.seconds, 0), runs })),
    { name: 'teardown', seconds: duration.teardownSec },
  ];
  return { limitMinutes, jobs, runJobs: slots.length };
}

export function renderJobPlan(plan: JobPlan): string {
  const lines = [`Jobs (each under the ${formatDuration(plan.limitMinutes * 60)} runner limit, ${formatDuration(JOB_MARGIN_SEC)} kept for set-up):`];
  for (const job of plan.jobs) {
    const runs = job.runs ? ` (${job.runs.map((r) => `${r.test} ${r.side} #${r.repeat + 1}`).join(', ')})` : '';
    lines.push(`  ${job.name.padEnd(14)} ${formatDuration(job.seconds)}${runs}`);
  }
  return lines.join('\n');
}
