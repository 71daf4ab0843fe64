import type { TimelinePoint } from './types.ts';

/**
 * Equilibrium of an unbounded test: over the last stability window, the least-squares
 * slope of active users is within `equilibriumSlope` % of the window's mean, per minute.
 */

export interface WindowStats {
  startSec: number;
  endSec: number;
  points: number;
  meanUsers: number;
  /** Least-squares slope of users over time, users per minute. */
  slopePerMinute: number;
}

/** Least-squares slope of y over x (0 when x does not vary). */
export function leastSquaresSlope(xs: readonly number[], ys: readonly number[]): number {
  const n = Math.min(xs.length, ys.length);
  if (n < 2) return 0;
  let sx = 0;
  let sy = 0;
  for (let i = 0; i < n; i++) {
    sx += xs[i] as number;
    sy += ys[i] as number;
  }
  const mx = sx / n;
  const my = sy / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    const dx = (xs[i] as number) - mx;
    num += dx * ((ys[i] as number) - my);
    den += dx * dx;
  }
  return den === 0 ? 0 : num / den;
}

/**
 * Stats of the points in the last `windowSec` seconds (ending at the last point).
 * Undefined until the timeline spans a whole window.
 */
export function lastWindow(timeline: readonly TimelinePoint[], windowSec: number): WindowStats | undefined {
  const last = timeline[timeline.length - 1];
  const first = timeline[0];
  if (!last || !first || last.tSec - first.tSec < windowSec) return undefined;
  const startSec = last.tSec - windowSec;
  return statsOf(
    timeline.filter((p) => p.tSec >= startSec),
    startSec,
    last.tSec,
  );
}

/** Stats of whatever part of the last window exists (for runs stopped early). */
export function partialWindow(timeline: readonly TimelinePoint[], windowSec: number): WindowStats | undefined {
  const last = timeline[timeline.length - 1];
  if (!last) return undefined;
  const startSec = Math.max(0, last.tSec - windowSec);
  return statsOf(
    timeline.filter((p) => p.tSec >= startSec),
    startSec,
    last.tSec,
  );
}

/** Stats of the points in [startSec, endSec]. */
export function windowStats(timeline: readonly TimelinePoint[], startSec: number, endSec: number): WindowStats {
  return statsOf(
    timeline.filter((p) => p.tSec >= startSec && p.tSec <= endSec),
    startSec,
    endSec,
  );
}

function statsOf(points: readonly TimelinePoint[], startSec: number, endSec: number): WindowStats {
  const xs = points.map((p) => p.tSec / 60);
  const ys = points.map((p) => p.users);
  const meanUsers = ys.reduce((a, b) => a + b, 0) / Math.max(1, ys.length);
  return { startSec, endSec, points: points.length, meanUsers, slopePerMinute: leastSquaresSlope(xs, ys) };
}

export function isEquilibrium(window: WindowStats, equilibriumSlopePct: number): boolean {
  return Math.abs(window.slopePerMinute) <= (equilibriumSlopePct / 100) * window.meanUsers;
}
