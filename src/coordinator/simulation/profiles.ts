import { unboundedTestSchema, type UnboundedTest } from '../../config/schema.ts';
import type { ModelParams } from './model.ts';

/**
 * Two fitted capacity models and two searches each: `constantStep` (load-test-ng's
 * constant +/- step, kept as the yardstick the scale-free search is measured against)
 * and `scaleFree` (the search the examples ship: a climb in % steps, a halving ceiling
 * step, a warm start and the hold-mean estimator).
 *
 * local: the 2-core Synapse bench. Ceiling ~90 users, 15 s rate windows, 5 s scrapes
 * (examples/local-synapse.yml). The noise is fitted so that the constant-step search
 * gives the per-run sd of supported users measured on that bench
 * (docs/research/2026-11-23-local-bench-first-figures.md).
 *
 * aws: the ceiling-test reports (/work/shared/seeds/ceiling-tests-v2-report.md): ceilings
 * 17,000-30,000 users, +8/-8 per 2 s, 1-minute rate windows, a 30-minute window; 5 s
 * scrapes (src/bench/aws/aws-gate-bench.ts timing). Its noise is the local fit scaled to the
 * longer windows: those reports give no per-evaluation figure.
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
  /** load-test-ng's constant-step search, the yardstick. */
  constantStep: UnboundedTest;
  /** The scale-free search with a warm start and the hold-mean estimator. */
  scaleFree: UnboundedTest;
}

const healthFor = (rateWindowSec: number) => [{ name: 'Average client request duration (s)', query: queryFor(rateWindowSec), threshold: THRESHOLD }];

/** The local bench's fitted per-evaluation noise (sd of the log of a 15 s-window value). */
const LOCAL_NOISE_SD = 0.3;

export const LOCAL: Profile = {
  name: 'local',
  model: { threshold: THRESHOLD, rateWindowSec: 15, scrapeSec: 5, noiseSd: LOCAL_NOISE_SD },
  ceiling: 90,
  // Fixed +1/-1 user per 2 s from 40 users, a 2-minute window.
  constantStep: unboundedTestSchema.parse({
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
  scaleFree: unboundedTestSchema.parse({
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
  // The ceiling tests' search: fixed +8/-8 users per 2 s, a 30-minute window.
  constantStep: unboundedTestSchema.parse({
    type: 'unbounded',
    maxUsers: 20000,
    usersIncrement: 8,
    usersDecrement: 8,
    restTime: 2,
    stabilityWindow: 1800,
    maxDuration: 14400,
    health: healthFor(60),
  }),
  scaleFree: unboundedTestSchema.parse({
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
