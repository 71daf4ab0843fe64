import type { UnboundedTest } from '../config/schema.ts';

/**
 * The unbounded test's step policy: how many users to add or remove at each step.
 *
 * - ramp: a warm start ramps linearly to its start point over `warmStart.rampUp`,
 *   because starting many users at once is a login storm. Starting users costs more
 *   than running them (login, initial sync), so a ramp can look unhealthy below the
 *   ceiling: an alert during the ramp pauses it, and only one that lasts a whole lag of
 *   the health queries (the start-up cost has left their windows) is the first alert.
 *   Otherwise a ramp's alert would end the climb well below the ceiling and leave the
 *   search to crawl up in small steps (docs/research/2026-11-24-capacity-search.md);
 * - climb: until the first alert, +usersIncrement per step, or with `climbPct` that % of
 *   the current users (at least usersIncrement): the time to the ceiling then grows with
 *   log(capacity), not with capacity, and the overshoot is the same fraction everywhere;
 * - ceiling: after the first alert, with `ceilingStepPct`, the step halves at every
 *   reversal down to that % of the users at the first alert (a bisection that ends in a
 *   small oscillation whose amplitude is a fixed fraction of the ceiling); without it,
 *   load-test-ng's constant +usersIncrement / -usersDecrement.
 *
 * The target is a real number; users are its rounding, so a step below one user
 * accumulates over several steps instead of rounding to nothing or to a whole user.
 */

export type SearchPhase = 'ramp' | 'climb' | 'ceiling';

export interface SearchState {
  phase: SearchPhase;
  target: number;
  /** Size of the current step in users (ceiling phase). */
  step: number;
  /** Direction of the last move: +1 up, -1 down, 0 none yet. */
  direction: number;
  /** Users when the first alert came; undefined before. */
  firstAlertUsers: number | undefined;
  /** Ramp: consecutive unhealthy steps while paused. */
  rampPausedSteps: number;
  /** Ceiling phase: steps and their net direction (ups - downs) in the current block. */
  blockSteps: number;
  blockNet: number;
  /**
   * True once the step has shrunk to its floor (at once with constant steps): the users
   * straddle the ceiling, and the estimate may start. The bisection before it is transient.
   */
  settled: boolean;
}

export interface SearchStart {
  /** The start point: initialUsers, or the warm-start hint less its margin. */
  startUsers: number;
  /** Seconds to ramp to startUsers (0: start them at once, load-test-ng's InitialActiveUsers). */
  rampSec: number;
  /**
   * Ceiling phase: the step is resized once per block of this many steps (about two lags of
   * the health queries). A block that moved mostly one way (|ups - downs| >= 3/4 of it: 7 steps in 8)
   * doubles the step, up to the climb's: the ceiling is elsewhere (a noise spike raised an
   * early alert, or a warm start's hint was wrong). A mixed block halves it, down to
   * ceilingStepPct: the users straddle the ceiling. Deciding per block rather than at every
   * reversal keeps single noisy evaluations from shrinking the step far from the ceiling.
   */
  blockSteps: number;
  /** Ramp: unhealthy steps in a row (about one lag of the health queries) that make the first alert. */
  patienceSteps: number;
}

export function initialSearchState(): SearchState {
  return { phase: 'ramp', target: 0, step: 0, direction: 0, firstAlertUsers: undefined, rampPausedSteps: 0, blockSteps: 0, blockNet: 0, settled: false };
}

/** The next target after a step taken `tSec` seconds after start. Mutates and returns `state`. */
export function nextTarget(state: SearchState, test: UnboundedTest, start: SearchStart, tSec: number, healthy: boolean, settling: boolean): SearchState {
  const scaled = test.ceilingStepPct !== undefined;
  if (state.phase === 'ramp') {
    if (healthy || settling) {
      // Per step, not per second: after a pause the ramp goes on at its rate, it does not catch up.
      const perStep = start.rampSec > 0 ? (start.startUsers * test.restTime) / start.rampSec : start.startUsers;
      const next = Math.min(start.startUsers, state.target + perStep);
      state.step = Math.max(state.step, next - state.target);
      state.target = next;
      state.direction = 1;
      state.rampPausedSteps = 0;
      if (state.target >= start.startUsers) state.phase = 'climb';
      return clamp(state, test);
    }
    if (++state.rampPausedSteps < start.patienceSteps) return state;
    return alert(state, test, scaled);
  }
  if (state.phase === 'climb') {
    if (!healthy && !settling) return alert(state, test, scaled);
    if (!healthy) return state;
    const step = climbStep(test, state.target);
    state.step = step;
    state.target += step;
    state.direction = 1;
    return clamp(state, test);
  }
  // ceiling
  if (!healthy && settling) return state;
  const direction = healthy ? 1 : -1;
  if (scaled) {
    const fine = ((test.ceilingStepPct as number) / 100) * (state.firstAlertUsers as number);
    state.target += direction * state.step;
    state.blockNet += direction;
    if (++state.blockSteps >= start.blockSteps) {
      state.step =
        Math.abs(state.blockNet) * 4 >= 3 * state.blockSteps
          ? Math.min(Math.max(fine, climbStep(test, state.target)), state.step * 2)
          : Math.max(fine, state.step / 2);
      state.blockSteps = 0;
      state.blockNet = 0;
      if (state.step <= fine) state.settled = true;
    }
  } else {
    state.target += healthy ? test.usersIncrement : -test.usersDecrement;
  }
  state.direction = direction;
  return clamp(state, test);
}

function climbStep(test: UnboundedTest, users: number): number {
  return test.climbPct !== undefined ? Math.max(test.usersIncrement, (test.climbPct / 100) * users) : test.usersIncrement;
}

function alert(state: SearchState, test: UnboundedTest, scaled: boolean): SearchState {
  state.phase = 'ceiling';
  state.firstAlertUsers = state.target;
  if (scaled) {
    const fine = ((test.ceilingStepPct as number) / 100) * state.target;
    // From a climb, half its step. A warm start's ramp takes far bigger steps (52 users in
    // 30 s is 3.5 users per 2 s step, 6.7 %) that say nothing about where the ceiling is:
    // start at half a climb step, and the bisection reaches its floor a block sooner.
    state.step = Math.max(fine, Math.min(state.step, climbStep(test, state.target)) / 2);
    state.target -= state.step;
  } else {
    state.target -= test.usersDecrement;
    state.settled = true;
  }
  state.direction = -1;
  state.blockSteps = 0;
  state.blockNet = 0;
  return clamp(state, test);
}

function clamp(state: SearchState, test: UnboundedTest): SearchState {
  state.target = Math.min(test.maxUsers, Math.max(0, state.target));
  return state;
}

/**
 * Where a warm start begins: `marginPct` below the hint, never above it, and never
 * below initialUsers. A hint that is too high is caught by the first alert during the
 * ramp; one that is too low only lengthens the climb.
 */
export function warmStartUsers(test: UnboundedTest, hint: number | undefined): number {
  const fromHint = hint !== undefined && test.warmStart ? Math.floor(hint * (1 - test.warmStart.marginPct / 100)) : 0;
  return Math.min(test.maxUsers, Math.max(test.initialUsers, fromHint));
}
