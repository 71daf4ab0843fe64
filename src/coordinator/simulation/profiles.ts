import { unboundedTestSchema, type UnboundedTest } from '../../config/schema.ts';
import type { ModelParams } from './model.ts';

/**
 * Two fitted capacity models and the searches they are run with, "before" (the shipped
 * profiles until issue 13) and "after" (the scale-free search).
 *
 * local: the 2-core Synapse bench. Ceiling ~90 users (6 A/A runs 2026-11-23: 82.4-90.0,
 * mean 86.4; the faster machine: ~150), 15 s rate windows, 5 s scrapes
 * (examples/local-synapse.yml). The noise is fitted so that the "before" search gives the
 * measured per-run sd of supported users (3.9 %, README, 6 A/A runs).
 *
 * aws: the ceiling-test seed (/work/shared/seeds/ceiling-tests-v2-report.md): ceilings
 * 17,000-30,000 users, +8/-8 per 2 s, 1-minute rate windows, a 30-minute window; 5 s
 * scrapes (src/bench/aws/gate-bench.ts timing). Its noise is the local fit: the seed gives
 * no per-evaluation figure, and its reports call ±5 % between runs "the usual variance".
 */

export const THRESHOLD = 0.1;
/** The query text only tells the coordinator the rate window (its lag); the model answers it. */
export const queryFor = (rateWindowSec: number): string =>
  `sum(rate(sim_latency_seconds_sum[${rateWindowSec}s])) / sum(rate(sim_latency_seconds_count[${rateWindowSec}s]))`;

export interface Profile {
  name: 'local' | 'aws';
  model: Omit<ModelParams, 'ceiling'>;
  /** The ceiling the model is fitted to. */
  ceiling: number;
  before: UnboundedTest;
  after: UnboundedTest;
}

const healthFor = (rateWindowSec: number) => [{ name: 'Average client request duration (s)', query: queryFor(rateWindowSec), threshold: THRESHOLD }];

/** The local bench's fitted per-evaluation noise (sd of the log of a 15 s-window value). */
export const LOCAL_NOISE_SD = 0.3;

export const LOCAL: Profile = {
  name: 'local',
  model: { threshold: THRESHOLD, rateWindowSec: 15, scrapeSec: 5, noiseSd: LOCAL_NOISE_SD },
  ceiling: 90,
  // examples/local-synapse.yml before issue 13.
  before: unboundedTestSchema.parse({
    type: 'unbounded',
    maxUsers: 300,
    initialUsers: 40,
    usersIncrement: 1,
    usersDecrement: 1,
    restTime: 2,
    stabilityWindow: 120,
    equilibriumSlope: 3,
    maxDuration: 360,
    health: healthFor(15),
  }),
  after: unboundedTestSchema.parse({
    type: 'unbounded',
    maxUsers: 1000,
    initialUsers: 30,
    usersIncrement: 1,
    usersDecrement: 1,
    restTime: 2,
    climbPct: 3,
    ceilingStepPct: 0.5,
    warmStart: { marginPct: 15, rampUp: 30 },
    estimator: 'hold-mean',
    holdHalfWidthPct: 1.5,
    stabilityWindow: 180,
    equilibriumSlope: 3,
    maxDuration: 720,
    health: healthFor(15),
  }),
};

export const AWS: Profile = {
  name: 'aws',
  // 1-minute windows average 4x more requests than 15 s ones: half the noise.
  model: { threshold: THRESHOLD, rateWindowSec: 60, scrapeSec: 5, noiseSd: LOCAL_NOISE_SD / 2 },
  ceiling: 17000,
  // examples/aws-mattermost.yml before issue 13.
  before: unboundedTestSchema.parse({
    type: 'unbounded',
    maxUsers: 20000,
    usersIncrement: 8,
    usersDecrement: 8,
    restTime: 2,
    stabilityWindow: 1800,
    maxDuration: 14400,
    health: healthFor(60),
  }),
  after: unboundedTestSchema.parse({
    type: 'unbounded',
    maxUsers: 40000,
    usersIncrement: 8,
    usersDecrement: 8,
    restTime: 2,
    climbPct: 0.5,
    ceilingStepPct: 0.05,
    warmStart: { marginPct: 15, rampUp: 900 },
    estimator: 'hold-mean',
    holdHalfWidthPct: 1,
    stabilityWindow: 1800,
    maxDuration: 14400,
    health: healthFor(60),
  }),
};
