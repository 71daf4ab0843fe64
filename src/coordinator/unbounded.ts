import type { HealthQuery, UnboundedTest } from '../config/schema.ts';
import { InputError } from '../util/errors.ts';
import { abortReason, sleepUnlessAborted } from './clock.ts';
import { isEquilibrium, lastWindow, partialWindow, windowStats, type WindowStats } from './equilibrium.ts';
import { holdEstimate, windowEstimate, type HoldEstimate, type Sample } from './estimate.ts';
import type { JointDecision, JointParty } from './joint-window.ts';
import { initialSearchState, nextTarget, warmStartUsers, type SearchStart, type SearchState } from './search.ts';
import type { Clock, HealthSource, TimelinePoint, UserControl } from './types.ts';
import { overThreshold } from '../engine/loadtest-ng/alert.ts';
import { longestRangeSec } from '../metrics/promql.ts';

/**
 * The unbounded test's coordinator, as in load-test-ng and the ceiling-test report: it
 * starts `initialUsers` users, then every rest period it reads the health queries, adds `usersIncrement` users while all are at or
 * under their thresholds (up to maxUsers) and removes `usersDecrement` while any is over.
 * It stops at equilibrium (the users' least-squares slope over the stability window is
 * within equilibriumSlope % of the window's mean per minute, and, as in load-test-ng, the
 * window starts after the ceiling was first hit) and reports supported users as the mean
 * over that window.
 * Pure logic: time only passes through the injected clock.
 */

export type StopCause = 'equilibrium' | 'cap' | 'max-duration' | 'no-data' | 'aborted';

export interface UnboundedProgress {
  tSec: number;
  users: number;
  healthy: boolean;
  values: Record<string, number | null>;
  /** Names of the queries over threshold at this step. */
  over: string[];
  /** Until maxDuration. */
  timeLeftSec: number;
  /** The current window's slope and mean, once a whole window has passed. */
  window?: WindowStats;
}

/** How the estimate was made and how sure it is; recorded in the run result as `capacity`. */
export interface CapacityEstimate {
  estimator: 'window-mean' | 'hold-mean';
  supportedUsers: number;
  /** load-test-ng's figure (mean users over the last stability window), for comparison with past reports. */
  windowMeanUsers: number;
  /** 95 % confidence half-width of supportedUsers, % of it (hold-mean only). */
  halfWidthPct?: number;
  /** Standard deviation of one batch's mean, % of the estimate (hold-mean only). */
  sdPct?: number;
  batches?: number;
  /** Users at the first alert (undefined when the run never became unhealthy). */
  firstAlertUsers?: number;
  /** Where the run started: users, and what the start came from. */
  startUsers: number;
  startSource: 'cold' | 'initialUsers' | string;
  /** Seconds from the first alert to the stop. */
  holdSec?: number;
}

export interface UnboundedResult {
  /** The estimate (see capacity.estimator); the window mean for window-mean. */
  supportedUsers: number;
  capacity: CapacityEstimate;
  converged: boolean;
  stopCause: StopCause;
  /** One sentence for logs and reports. */
  reason: string;
  /** Seconds since start over which supportedUsers was averaged. */
  window: { startSec: number; endSec: number };
  slopePerMinute: number;
  durationSec: number;
  timeline: TimelinePoint[];
}

export interface RunUnboundedOptions {
  test: UnboundedTest;
  users: UserControl;
  health: HealthSource;
  clock: Clock;
  onProgress?: (progress: UnboundedProgress) => void;
  signal?: AbortSignal;
  /**
   * Consecutive evaluations of one query without data before the run stops. Default:
   * as many as fit in 60 s (rate()[1m] needs a minute of scrapes after start), at least 5.
   */
  noDataLimit?: number;
  /**
   * Seconds at the start during which an over-threshold value may still describe the
   * previous run (a `rate(...[1m])` window reaches back a minute into it): users still grow
   * while healthy, but are held, not removed, while a query is over. Default: the longest
   * range window in the enabled queries plus two scrape intervals (10 s).
   */
  settleSec?: number;
  /**
   * Capacity known before the run (an earlier run of this gate, --expect-users, or a
   * --history run of that version). Used only with `warmStart`: the run ramps to marginPct below it.
   */
  startHint?: { users: number; source: string };
  /**
   * One side of a duet: neither side stops alone, and both are measured over the same
   * interval (joint-window.ts). Without it the run stops at its own equilibrium.
   */
  joint?: JointParty;
}

/**
 * The health queries' lag in seconds: the longest averaging window (rate, increase,
 * *_over_time...) plus two scrapes. irate/idelta read only the last two samples of their
 * range, so their range is not a lag (the ceiling-test CPU query is irate(...[5m])).
 */
export function healthLagSec(queries: readonly HealthQuery[]): number {
  const averaging = queries.map((q) => ({ ...q, query: q.query.replace(/\b(irate|idelta)\s*\(([^()]|\([^()]*\))*\)/g, '') }));
  return longestRangeSec(averaging.map((q) => q.query)) + 10;
}

interface QueryState {
  query: HealthQuery;
  value: number | null;
  evaluatedAt: number | undefined;
  noDataStreak: number;
  lastError: string | undefined;
}

/** What one unbounded run carries from step to step. */
interface RunState {
  test: UnboundedTest;
  clock: Clock;
  /** The clock's reading at the start, in ms. */
  start: number;
  queries: QueryState[];
  noDataLimit: number;
  settleSec: number;
  from: SearchStart;
  batchSec: number;
  startSource: string;
  search: SearchState;
  timeline: TimelinePoint[];
  samples: Sample[];
  estimate: HoldEstimate | undefined;
  firstUnhealthySec: number | undefined;
  joint: JointParty | undefined;
}

/** One step's readings, after the users were set for it. */
interface StepReading {
  tSec: number;
  active: number;
  healthy: boolean;
  values: Record<string, number | null>;
  over: string[];
}

export async function runUnbounded(options: RunUnboundedOptions): Promise<UnboundedResult> {
  const run = await startRun(options);
  try {
    return await steps(run, options);
  } finally {
    // Whatever ended this side, its partner no longer waits for it.
    run.joint?.leave();
  }
}

async function steps(run: RunState, options: RunUnboundedOptions): Promise<UnboundedResult> {
  const { test, users, signal } = options;
  for (let step = 0; ; step++) {
    if (signal?.aborted) return finish(run, 'aborted', `stopped before equilibrium: ${abortReason(signal)}`, undefined);
    const tSec = elapsedSec(run);
    const agreed = run.joint?.decision();
    if (agreed) return jointFinish(run, agreed);
    if (tSec >= test.maxDuration) return joined(run) ? jointMaxDuration(run, tSec) : maxDurationStop(run);
    await evaluateDue(run.queries, options.health, run.clock.now());
    const starved = run.queries.find((q) => q.noDataStreak >= run.noDataLimit);
    if (starved) return noDataStop(run, starved);

    const reading = await takeStep(run, users, tSec);
    // The partner may have fixed the interval (and left) while this step's queries ran.
    const agreedMeanwhile = run.joint?.decision();
    if (agreedMeanwhile) return jointFinish(run, agreedMeanwhile);
    const held = joined(run) ? jointStop(run, reading) : adaptiveHoldStop(run, reading);
    if (held) return held;
    const window = lastWindow(run.timeline, test.stabilityWindow);
    options.onProgress?.({
      tSec: round2(tSec),
      users: reading.active,
      healthy: reading.healthy,
      values: reading.values,
      over: reading.over,
      timeLeftSec: Math.max(0, round2(test.maxDuration - tSec)),
      ...(window ? { window } : {}),
    });
    const settled = window ? windowStop(run, window, reading) : undefined;
    if (settled) return settled;

    const nextStepAt = run.start + (step + 1) * test.restTime * 1000;
    if (await sleepUnlessAborted(run.clock, Math.max(0, nextStepAt - run.clock.now()), signal)) {
      return finish(run, 'aborted', `stopped before equilibrium: ${abortReason(signal)}`, undefined);
    }
  }
}

/** Checks the test, sets up the queries and the search, and starts the first users. */
async function startRun(options: RunUnboundedOptions): Promise<RunState> {
  const { test, users, clock } = options;
  if (test.restTime <= 0) throw new InputError(`tests "${test.name}": restTime must be longer than 0s for an unbounded test`);
  if (test.stabilityWindow <= 0) throw new InputError(`tests "${test.name}": stabilityWindow must be longer than 0s`);
  const queries: QueryState[] = test.health
    .filter((q) => q.enabled)
    .map((query) => ({ query, value: null, evaluatedAt: undefined, noDataStreak: 0, lastError: undefined }));
  if (!queries.length) throw new InputError(`tests "${test.name}": every health query is disabled; enable at least one`);

  const start = clock.now();
  const hint = test.warmStart ? options.startHint : undefined;
  const lagSec = healthLagSec(queries.map((q) => q.query));
  const from: SearchStart = {
    startUsers: warmStartUsers(test, hint?.users),
    rampSec: test.warmStart?.rampUp ?? 0,
    // The lag: a rate() window plus a scrape or two before the value moves.
    blockSteps: Math.max(4, Math.ceil((2 * lagSec) / test.restTime)),
    patienceSteps: Math.max(2, Math.ceil(lagSec / test.restTime)),
  };
  const search = initialSearchState();
  if (from.startUsers === 0 || from.rampSec === 0) {
    // load-test-ng's InitialActiveUsers: start part-way up instead of climbing from zero,
    // so a small increment (a small overshoot at equilibrium) does not make the run long.
    if (from.startUsers > 0) await users.setUsers(from.startUsers);
    search.phase = 'climb';
    search.target = await users.activeUsers();
  }
  return {
    test,
    clock,
    start,
    queries,
    noDataLimit: options.noDataLimit ?? Math.max(5, Math.ceil(60 / test.restTime)),
    settleSec: options.settleSec ?? longestRangeSec(queries.map((q) => q.query.query)) + 10,
    from,
    // Batches two lags long: the users' wander near the ceiling is correlated over about one.
    batchSec: 2 * Math.max(4 * test.restTime, lagSec),
    startSource: hint && from.startUsers > test.initialUsers ? hint.source : test.initialUsers > 0 ? 'initialUsers' : 'cold',
    search,
    timeline: [],
    samples: [],
    estimate: undefined,
    firstUnhealthySec: undefined,
    joint: options.joint,
  };
}

function elapsedSec(run: RunState): number {
  return (run.clock.now() - run.start) / 1000;
}

/** Moves the search one step on the queries' latest values, sets the users, and records the step. */
async function takeStep(run: RunState, users: UserControl, tSec: number): Promise<StepReading> {
  const { test, queries, search } = run;
  // A query without data yet (e.g. rate() before the second scrape) does not block growth;
  // the no-data limit stops a run where it never gets data.
  const over = queries.filter((q) => overThreshold(q.value, q.query.threshold)).map((q) => q.query.name);
  const healthy = over.length === 0;
  const settling = tSec < run.settleSec;
  nextTarget(search, test, run.from, tSec, healthy, settling);
  await users.setUsers(Math.round(search.target));
  const active = await users.activeUsers();
  const values = Object.fromEntries(queries.map((q) => [q.query.name, q.value]));
  run.timeline.push({ tSec: round2(tSec), users: active, healthy, values });
  // The ceiling was first hit at the first alert (a paused ramp is not one yet).
  if (search.phase === 'ceiling' && run.firstUnhealthySec === undefined) run.firstUnhealthySec = round2(tSec);
  if (search.settled) {
    run.samples.push({ tSec: round2(tSec), users: active });
    if (test.estimator === 'hold-mean') run.estimate = holdEstimate(run.samples, run.batchSec);
  }
  return { tSec, active, healthy, values, over };
}

function maxDurationStop(run: RunState): UnboundedResult {
  const { test } = run;
  const w = partialWindow(run.timeline, test.stabilityWindow);
  return finish(
    run,
    'max-duration',
    `did not reach equilibrium within maxDuration (${test.maxDuration} s)` +
      (w ? `; over the last ${round2(w.endSec - w.startSec)} s users moved ${round2(w.slopePerMinute)}/min around a mean of ${round2(w.meanUsers)}` : ''),
    w,
  );
}

function noDataStop(run: RunState, starved: QueryState): UnboundedResult {
  const detail = starved.lastError ? `; last error: ${starved.lastError}` : '';
  return finish(
    run,
    'no-data',
    `Prometheus has no data for "${starved.query.name}" (${starved.query.query}) after ${starved.noDataStreak} evaluations${detail}; ` +
      'check that its scrape target is up',
    undefined,
  );
}

/** Adaptive hold: stop as soon as the estimate is sure enough (at least four batches). */
function adaptiveHoldStop(run: RunState, { tSec, active }: StepReading): UnboundedResult | undefined {
  const { test, estimate } = run;
  if (
    test.holdHalfWidthPct === undefined ||
    estimate === undefined ||
    estimate.batches < 4 ||
    !(estimate.halfWidthPct <= test.holdHalfWidthPct) ||
    active >= test.maxUsers
  ) {
    return undefined;
  }
  return finish(
    run,
    'equilibrium',
    `equilibrium after ${round2(tSec)} s: ${estimate.batches} batches of ${run.batchSec} s at the ceiling average ${round2(estimate.supportedUsers)} users ` +
      `(±${round2(estimate.halfWidthPct)}%, within the ±${test.holdHalfWidthPct}% asked)`,
    undefined,
  );
}

/** The stops a whole stability window can show: at the cap, unhealthy without users, or at equilibrium. */
function windowStop(run: RunState, window: WindowStats, { tSec, active }: StepReading): UnboundedResult | undefined {
  const { test, estimate, firstUnhealthySec } = run;
  const inWindow = run.timeline.filter((p) => p.tSec >= window.startSec);
  // Healthy through the whole window and at the cap: it settled only because it may not grow.
  if (active >= test.maxUsers && inWindow.every((p) => p.healthy) && isEquilibrium(window, test.equilibriumSlope)) {
    return finish(
      run,
      'cap',
      `healthy all the way to maxUsers (${test.maxUsers}): the bench could not find the ceiling; supported users >= ${test.maxUsers}`,
      window,
    );
  }
  if (inWindow.every((p) => p.users === 0 && !p.healthy)) {
    return finish(run, 'equilibrium', `unhealthy even without users for ${test.stabilityWindow} s: supported users 0`, window);
  }
  // In a duet the joint rule (jointStop) decides equilibrium for both sides at once.
  if (joined(run)) return undefined;
  // hold-mean: the stability window is the settled hold (the step at its floor), so the
  // estimate gets a whole window of it. A window that starts at the first alert, as
  // load-test-ng's does, holds the bisection's transient, and its mean varies about
  // twice as much between runs (docs/research/2026-11-24-capacity-search.md).
  if (
    test.estimator === 'hold-mean' &&
    estimate !== undefined &&
    window.startSec >= (run.samples[0] as Sample).tSec &&
    isEquilibrium(window, test.equilibriumSlope)
  ) {
    return finish(
      run,
      'equilibrium',
      `equilibrium after ${round2(tSec)} s: ${estimate.batches} batches of ${run.batchSec} s at the ceiling average ${round2(estimate.supportedUsers)} users` +
        (Number.isFinite(estimate.halfWidthPct) ? ` (±${round2(estimate.halfWidthPct)}%)` : '') +
        `, and users moved ${round2(window.slopePerMinute)}/min over the ${test.stabilityWindow} s hold`,
      window,
    );
  }
  // As in load-test-ng, only a window that starts once the ceiling was first hit can be
  // an equilibrium. Otherwise the climb and the overshoot peak that follows it (health
  // queries lag the users) form a hump whose least-squares slope is flat too, and whose
  // mean is far from the ceiling.
  if (
    test.estimator !== 'hold-mean' &&
    firstUnhealthySec !== undefined &&
    window.startSec >= firstUnhealthySec &&
    isEquilibrium(window, test.equilibriumSlope)
  ) {
    return finish(
      run,
      'equilibrium',
      `equilibrium after ${round2(tSec)} s: users moved ${round2(window.slopePerMinute)}/min over the last ${test.stabilityWindow} s, ` +
        `within ${test.equilibriumSlope}% of their mean ${round2(window.meanUsers)}`,
      window,
    );
  }
  return undefined;
}

/** One side of a duet whose partner is still running: the joint rule decides when both stop. */
function joined(run: RunState): boolean {
  return run.joint !== undefined && !run.joint.alone();
}

/**
 * A duet side's step under the joint rule: once both sides have settled, this side judges
 * its estimate over the hold they share (from the later side's settling to now) as it would
 * judge its own hold, and says so; when every side agrees, the first to see it fixes the
 * interval and both stop on it.
 */
function jointStop(run: RunState, reading: StepReading): UnboundedResult | undefined {
  const joint = run.joint as JointParty;
  const first = run.samples[0];
  if (run.search.settled && first) joint.settled(run.start + first.tSec * 1000);
  const commonMs = joint.commonStartMs();
  const fromSec = commonMs === undefined ? undefined : (commonMs - run.start) / 1000;
  const ready = fromSec !== undefined && reading.tSec > fromSec && jointReady(run, fromSec, reading.tSec);
  joint.ready(ready);
  if (!ready || !joint.allReady()) return undefined;
  return jointFinish(run, joint.decide({ startMs: commonMs as number, endMs: run.start + reading.tSec * 1000 }, 'settled'));
}

/** Whether this side's estimate over [fromSec, toSec] would stop it: the adaptive hold's interval, or a whole flat stability window. */
function jointReady(run: RunState, fromSec: number, toSec: number): boolean {
  const { test } = run;
  if (test.estimator === 'hold-mean' && test.holdHalfWidthPct !== undefined) {
    const estimate = windowEstimate(run.timeline, fromSec, toSec, run.batchSec);
    if (estimate && estimate.batches >= 4 && estimate.halfWidthPct <= test.holdHalfWidthPct) return true;
  }
  const window = lastWindow(run.timeline, test.stabilityWindow);
  return toSec - fromSec >= test.stabilityWindow && window !== undefined && isEquilibrium(window, test.equilibriumSlope);
}

/**
 * maxDuration in a duet: the first side there ends both, over the longer of the hold they
 * share and the last stability window, as a side alone is measured. A hold that began a few
 * steps before the stop would hold a few samples, too few for per-handler timings at low load.
 */
function jointMaxDuration(run: RunState, tSec: number): UnboundedResult {
  const joint = run.joint as JointParty;
  const endMs = run.start + tSec * 1000;
  const startMs = Math.min(joint.commonStartMs() ?? Infinity, endMs - run.test.stabilityWindow * 1000);
  return jointFinish(run, joint.decide({ startMs, endMs }, 'max-duration'));
}

/** This side's result over the interval both sides agreed on. */
function jointFinish(run: RunState, agreed: JointDecision): UnboundedResult {
  const { test } = run;
  const fromSec = Math.max(0, (agreed.startMs - run.start) / 1000);
  const toSec = Math.max(fromSec, (agreed.endMs - run.start) / 1000);
  const estimate = test.estimator === 'hold-mean' ? windowEstimate(run.timeline, fromSec, toSec, run.batchSec) : undefined;
  run.estimate = estimate;
  const stats = estimate
    ? windowStats(run.timeline, estimate.startSec, estimate.endSec)
    : windowStats(run.timeline, Math.max(fromSec, toSec - test.stabilityWindow), toSec);
  const users = estimate
    ? `${estimate.batches} batches of ${run.batchSec} s average ${round2(estimate.supportedUsers)} users` +
      (Number.isFinite(estimate.halfWidthPct) ? ` (±${round2(estimate.halfWidthPct)}%)` : '')
    : `users average ${round2(stats.meanUsers)}`;
  const span = `${round2(stats.startSec)}-${round2(stats.endSec)} s, the same minutes for both sides of the duet`;
  if (agreed.cause === 'max-duration') {
    return finish(
      run,
      'max-duration',
      `did not reach equilibrium on both sides of the duet within maxDuration (${test.maxDuration} s); over ${span}, ${users}`,
      stats,
    );
  }
  return finish(
    run,
    'equilibrium',
    `equilibrium of both sides of the duet after ${round2(toSec)} s: over the hold they share (${span}, from the later side's settling), ${users}`,
    stats,
  );
}

/** The result: the estimate, the window it was averaged over, and why the run stopped. */
function finish(run: RunState, stopCause: StopCause, reason: string, window: WindowStats | undefined): UnboundedResult {
  const w = window ?? partialWindow(run.timeline, run.test.stabilityWindow);
  const capacity = capacityOf(run, w);
  // The hold estimate's window is the span of its batches: the stable-phase metrics
  // are averaged over the same span the users were.
  const hold = capacity.estimator === 'hold-mean' ? run.estimate : undefined;
  return {
    supportedUsers: capacity.supportedUsers,
    capacity,
    converged: stopCause === 'equilibrium' || stopCause === 'cap',
    stopCause,
    reason,
    window: hold ? { startSec: round2(hold.startSec), endSec: round2(hold.endSec) } : { startSec: round2(w?.startSec ?? 0), endSec: round2(w?.endSec ?? 0) },
    slopePerMinute: round2(w?.slopePerMinute ?? 0),
    durationSec: round2(elapsedSec(run)),
    timeline: run.timeline,
  };
}

function capacityOf(run: RunState, w: WindowStats | undefined): CapacityEstimate {
  const { test, search, firstUnhealthySec } = run;
  const windowMean = w ? round2(w.meanUsers) : 0;
  const hold = test.estimator === 'hold-mean' ? run.estimate : undefined;
  return {
    estimator: test.estimator,
    supportedUsers: hold ? round2(hold.supportedUsers) : windowMean,
    windowMeanUsers: windowMean,
    ...(hold
      ? {
          // Under two batches there is no interval: no half-width rather than an infinite one.
          ...(Number.isFinite(hold.halfWidthPct) ? { halfWidthPct: round2(hold.halfWidthPct), sdPct: round2(hold.sdPct) } : {}),
          batches: hold.batches,
        }
      : {}),
    ...(search.firstAlertUsers !== undefined ? { firstAlertUsers: Math.round(search.firstAlertUsers) } : {}),
    startUsers: run.from.startUsers,
    startSource: run.startSource,
    ...(firstUnhealthySec !== undefined ? { holdSec: round2(elapsedSec(run) - firstUnhealthySec) } : {}),
  };
}

/** Evaluates the queries whose minInterval has passed; the others keep their last value. */
async function evaluateDue(queries: QueryState[], health: HealthSource, now: number): Promise<void> {
  const due = queries.filter((q) => q.evaluatedAt === undefined || now - q.evaluatedAt >= q.query.minInterval * 1000);
  await Promise.all(
    due.map(async (q) => {
      let value: number | null;
      try {
        value = await health.query(q.query.query);
        q.lastError = undefined;
      } catch (error) {
        value = null;
        q.lastError = (error as Error).message;
      }
      // NaN is 0/0 (no requests yet): no data, not a health verdict.
      if (value !== null && Number.isNaN(value)) value = null;
      q.value = value;
      q.evaluatedAt = now;
      q.noDataStreak = value === null ? q.noDataStreak + 1 : 0;
    }),
  );
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
