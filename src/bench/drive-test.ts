import type { TestSpec } from '../config/schema.ts';
import type { Progress } from './progress.ts';
import { hintSource, type CapacityHints } from './capacity-hints.ts';
import { warmStartUsers } from '../coordinator/search.ts';
import { runBounded, runUnbounded, type BoundedResult, type Clock, type HealthSource, type UnboundedResult, type UserControl } from '../coordinator/index.ts';
import type { JointParty } from '../coordinator/joint-window.ts';

/**
 * The coordinator part of one run, shared by every bench: drive the users through a
 * bounded or an unbounded test, print progress, and say what the outcome means for the
 * run result. The bench around it (starting the target and the load engine, collecting
 * the numbers afterwards) is the caller's.
 */

export type CoordinatorOutcome = { kind: 'bounded'; result: BoundedResult } | { kind: 'unbounded'; result: UnboundedResult };

export interface DriveTestOptions {
  test: TestSpec;
  users: UserControl;
  /** Only read by unbounded tests. */
  health: HealthSource;
  clock: Clock;
  signal: AbortSignal;
  progress: Pick<Progress, 'status' | 'info'>;
  label: { version: string; repeat: number };
  /** Which side of the gate runs (baseline, candidate): warm-start hints prefer the side's own runs. */
  side?: string;
  /** The gate's warm-start hints (RunOptions.hints): asked before an unbounded run, told its answer after. */
  hints: CapacityHints;
  /** One side of a duet: both sides stop together and are measured over the same interval. */
  joint?: JointParty;
}

export interface DrivenTest {
  coordinator: CoordinatorOutcome;
  /** Prometheus never had data for a health query: the run cannot be judged. */
  noData: boolean;
  /** Why the measurement is incomplete (an early stop, no equilibrium), for the run result. */
  problems: string[];
}

export async function driveTest(o: DriveTestOptions): Promise<DrivenTest> {
  const { test, progress, label } = o;
  if (test.type === 'bounded') {
    const watched = test.earlyStop?.query;
    const result = await runBounded({
      test,
      users: o.users,
      clock: o.clock,
      ...(watched ? { sample: () => o.health.query(watched) } : {}),
      signal: o.signal,
      ...(o.joint ? { joint: o.joint } : {}),
      onProgress: (p) => progress.status({ ...label, users: p.users, detail: p.phase, leftSec: p.timeLeftSec }),
    });
    return { coordinator: { kind: 'bounded', result }, noData: false, problems: result.completed ? [] : [`the bounded test ${result.reason}`] };
  }
  const thresholds = new Map(test.health.map((h) => [h.name, h.threshold]));
  const { hints } = o;
  const hint = test.warmStart ? await hints.get(test.name, label.version, o.side) : undefined;
  if (hint)
    progress.info(
      `unbounded: warm start at ${warmStartUsers(test, hint.users)} users, ${test.warmStart?.marginPct}% below the expected capacity of ${Math.round(hint.users)} (${hint.source})`,
    );
  const result = await runUnbounded({
    ...(hint ? { startHint: hint } : {}),
    test,
    users: o.users,
    health: o.health,
    clock: o.clock,
    signal: o.signal,
    ...(o.joint ? { joint: o.joint } : {}),
    onProgress: (p) =>
      progress.status({
        ...label,
        users: p.users,
        health: Object.entries(p.values).map(([name, value]) => ({ name, value, threshold: thresholds.get(name) ?? Infinity })),
        leftSec: p.timeLeftSec,
      }),
  });
  progress.info(`unbounded: ${result.reason}`);
  if (result.converged && result.stopCause === 'equilibrium')
    hints.record(test.name, result.supportedUsers, hintSource(label.version, label.repeat, o.side), o.side);
  const noData = result.stopCause === 'no-data';
  const problems = noData ? [result.reason] : result.converged ? [] : [`the unbounded test ${result.reason}`];
  return { coordinator: { kind: 'unbounded', result }, noData, problems };
}
