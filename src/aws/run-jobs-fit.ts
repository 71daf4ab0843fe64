import type { GateConfig } from '../config/schema.ts';
import { formatDuration } from '../util/duration.ts';
import { InputError } from '../util/errors.ts';
import { estimateDuration } from './cost.ts';
import { JOB_MARGIN_SEC, planJobs, WORKFLOW_RUN_JOBS } from './job-limits.ts';
import { resolveBench } from './presets.ts';

/** The most pairs a gate may ask for (the flags' and the workflow input's range). */
const MOST_PAIRS = 20;

/** What the settings are called where they were given: the workflow's inputs, run's flags or the config. */
export interface PairSettingNames {
  repeats: string;
  maxRepeats: string;
  limit: string;
}

/** A plan of `pairs` pairs as the workflow's run jobs would hold them; throws as planJobs does when they cannot. */
function planPairs(config: GateConfig, pairs: number, limitMinutes: number): void {
  const inPairs: GateConfig = { ...config, repeats: pairs, maxRepeats: pairs };
  // The database's source changes provisioning alone, which is its own job.
  planJobs(inPairs, estimateDuration(inPairs, resolveBench(inPairs.bench.aws, inPairs.tests, inPairs.mode), 'empty'), limitMinutes);
}

/**
 * The most pairs of this config's tests the workflow's run jobs hold at this job limit
 * (looked for up to `upTo`); throws as the plan does when not even one fits.
 */
export function mostPairsFitRunJobs(config: GateConfig, limitMinutes: number, upTo = MOST_PAIRS): number {
  // A single pair that does not fit is the plan's own refusal, naming the test setting.
  planPairs(config, 1, limitMinutes);
  let most = 1;
  while (most < Math.min(upTo, MOST_PAIRS)) {
    try {
      planPairs(config, most + 1, limitMinutes);
    } catch {
      break;
    }
    most++;
  }
  return most;
}

/**
 * Refuses (InputError) an AWS gate whose worst case, every pair up to the larger of
 * `repeats` and `maxRepeats`, needs more run jobs than the workflow has at this job limit:
 * the gate would stop for want of a job, with pairs unmeasured. How many pairs fit depends
 * on the tests' durations and the limit, so the message says the most that do. `reused`:
 * the pairs a continuation takes over, which run on no job here but count in its cap.
 */
export function checkPairsFitRunJobs(
  config: GateConfig,
  pairs: { repeats: number; maxRepeats: number },
  limitMinutes: number,
  names: PairSettingNames,
  reused = 0,
): void {
  if (config.bench.kind !== 'aws') return;
  const worst = Math.max(pairs.repeats, pairs.maxRepeats);
  const most = mostPairsFitRunJobs(config, limitMinutes, worst);
  if (worst <= most) return;
  const name = pairs.repeats > pairs.maxRepeats ? names.repeats : names.maxRepeats;
  const jobSec = limitMinutes * 60 - JOB_MARGIN_SEC;
  const pairsText = reused ? `${worst} new pairs (above the ${reused} a continuation reuses)` : `${worst} pairs`;
  throw new InputError(
    `${name}: ${pairsText} do not fit in the AWS workflow's ${WORKFLOW_RUN_JOBS} run jobs (run-aws-1 to run-aws-${WORKFLOW_RUN_JOBS}) of at most ${formatDuration(jobSec)} each ` +
      `(${names.limit} ${limitMinutes} less ${formatDuration(JOB_MARGIN_SEC)} per job for set-up): at most ${most} pair${most === 1 ? '' : 's'} of these tests fit. ` +
      `Lower ${name} to ${most + reused} or less, shorten the tests (duration, maxDuration), or on self-hosted runners raise ${names.limit}`,
  );
}
