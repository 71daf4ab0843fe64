import type { TestSpec } from '../config/schema.ts';
import { longestRangeSec } from '../metrics/promql.ts';
import { runResultSchema, RUN_RESULT_SCHEMA_VERSION, type RunResult } from '../results/schema.ts';
import { testParams } from '../results/test-params.ts';
import { driveTest, type CoordinatorOutcome } from './drive-test.ts';
import { judgeGenerator } from './generator.ts';
import { runId, runTarget, type ScheduledRun } from './gate-plan.ts';
import type { CollectWindow, DuetPart, EngineTotals, RunAttempt, RunCollected, RunExtras, RunStage } from './run-stage.ts';

/**
 * One test run on any bench, start to result: start the target and the load (the
 * bench's attempt), wait until the previous load has left the rate windows, meet the duet
 * partner, let the coordinator drive the users, hold the load until the partner is done,
 * stop everything, read the numbers for the measured window and assemble the run result.
 * A dead component aborts the coordinator at once and makes the result `crashed`; a gate
 * stopped from outside makes it `aborted`; a saturated load generator makes it `invalid`.
 */
export async function executeRun(stage: RunStage, run: ScheduledRun, duet?: DuetPart): Promise<RunResult> {
  const attempt = stage.attempt(run, duet);
  const now = stage.clock.now() / 1000;
  const trial: Trial = { id: runId(run), startedAt: new Date(), status: 'completed', problems: [], runStart: now, runEnd: now };
  await runTrial(stage, attempt, run, trial, duet);
  const measured = await measure(attempt, trial);
  const extras = (await attempt.extras?.({ stable: measured.stable, window: measured.window, ran: trial.coordinator !== undefined })) ?? {};
  return assemble(stage, attempt, run, trial, measured, extras, duet);
}

/**
 * Seconds a bench must be quiet before a run starts: the previous run's samples must have
 * left every rate window, or the first health evaluations (and the first graph points)
 * would judge this run on the last one's load.
 */
export function settleSeconds(test: TestSpec, timing: { rateWindowSec: number; scrapeIntervalSec: number }): number {
  const health = test.type === 'unbounded' ? test.health.filter((h) => h.enabled).map((h) => h.query) : [];
  return Math.min(300, Math.max(longestRangeSec(health), timing.rateWindowSec) + timing.scrapeIntervalSec);
}

interface Trial {
  id: string;
  startedAt: Date;
  status: RunResult['status'];
  problems: string[];
  runStart: number;
  runEnd: number;
  coordinator?: CoordinatorOutcome;
  stats?: EngineTotals | undefined;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const reasonOf = (signal: AbortSignal): string => (signal.reason instanceof Error ? signal.reason.message : String(signal.reason));

/** Runs the test itself; never throws: a failure becomes the trial's status and problems. */
async function runTrial(stage: RunStage, attempt: RunAttempt, run: ScheduledRun, t: Trial, duet?: DuetPart): Promise<void> {
  const controller = new AbortController();
  const onGate = (): void => controller.abort(stage.signal.reason);
  if (stage.signal.aborted) onGate();
  else stage.signal.addEventListener('abort', onGate, { once: true });
  const party = duet ? `slot ${duet.slot}` : '';
  try {
    const load = await attempt.start((reason) => {
      if (!controller.signal.aborted) controller.abort(reason);
    });
    await settle(stage, run, attempt.test, controller.signal);
    if (duet) {
      stage.progress.status({ version: run.side.label, repeat: run.repeat, detail: `${party}: waiting for the other side` });
      await duet.start.arrive(party);
    }
    // The coordinator's clock: its windows count from here (the real clock in a gate).
    t.runStart = stage.clock.now() / 1000;
    attempt.testStarted?.();
    const driven = await driveTest({
      test: attempt.test,
      users: load.users,
      health: load.health,
      clock: stage.clock,
      signal: controller.signal,
      progress: stage.progress,
      label: { version: run.side.label, repeat: run.repeat },
      side: run.side.role,
      hints: stage.hints,
      ...(duet ? { joint: duet.joint } : {}),
    });
    t.coordinator = driven.coordinator;
    t.problems.push(...driven.problems);
    if (driven.noData) t.status = 'crashed';
    t.runEnd = stage.clock.now() / 1000;
    attempt.testEnded?.(t.runEnd - t.runStart);
    if (duet) {
      // Keep this side's load on until the other side's test ends too: its measured window
      // must not see a machine this side has left.
      if (!duet.end.isOpen) stage.progress.info(`${party}: test done, holding the load until the other side's ends`);
      await duet.end.arrive(party);
    }
    if (controller.signal.aborted) {
      t.status = stage.signal.aborted && attempt.alive() ? 'aborted' : 'crashed';
      t.problems.push(
        t.status === 'crashed' ? `a component stopped during the run: ${reasonOf(controller.signal)}` : `the run was stopped: ${reasonOf(controller.signal)}`,
      );
    } else {
      // Keep the load on for one more scrape, so Prometheus holds samples up to runEnd.
      await sleep((stage.scrapeIntervalSec + 1) * 1000);
    }
    t.stats = await load.stats().catch((error: Error) => {
      t.problems.push(`could not read the load engine's own statistics: ${error.message}`);
      return undefined;
    });
  } catch (error) {
    t.status = 'crashed';
    t.runEnd = stage.clock.now() / 1000;
    t.problems.push((error as Error).message);
    stage.progress.problem(`${t.id}: ${(error as Error).message}`);
  } finally {
    duet?.start.leave(party);
    duet?.joint.leave();
    duet?.end.leave(party);
    stage.signal.removeEventListener('abort', onGate);
    await windDown(stage, attempt, t);
  }
}

async function windDown(stage: RunStage, attempt: RunAttempt, t: Trial): Promise<void> {
  const stopped = await attempt.stop().catch((error: Error) => ({ problems: [`stopping the run: ${error.message}`], crash: undefined }));
  // A crash seen only now (e.g. during the last scrape) still makes the run crashed.
  if (stopped.crash && t.status === 'completed') {
    t.status = 'crashed';
    t.problems.push(stopped.crash);
  }
  t.problems.push(...stopped.problems);
  // The load ends when the engine is gone: its last samples are older than this.
  stage.state.lastLoadEndMs = Date.now();
}

async function settle(stage: RunStage, run: ScheduledRun, test: TestSpec, signal: AbortSignal): Promise<void> {
  const settleUntil = stage.state.lastLoadEndMs + settleSeconds(test, stage) * 1000;
  while (Date.now() < settleUntil && !signal.aborted) {
    stage.progress.status({
      version: run.side.label,
      repeat: run.repeat,
      detail: 'letting the previous run leave the rate windows',
      leftSec: (settleUntil - Date.now()) / 1000,
    });
    await sleep(Math.min(1000, settleUntil - Date.now()));
  }
  if (signal.aborted) throw new Error(`stopped before the test began: ${reasonOf(signal)}`);
}

interface Measured {
  stable: { startSec: number; endSec: number };
  window: CollectWindow;
  collected?: RunCollected;
  cpuMax?: number;
  dropped: number;
  saturated: boolean;
}

/** The measured window (clamped to the run), its numbers, and whether the load generator held up. */
async function measure(attempt: RunAttempt, t: Trial): Promise<Measured> {
  const { coordinator, runStart, runEnd } = t;
  const window0 = coordinator?.result.window ?? { startSec: 0, endSec: 0 };
  const stable = { startSec: Math.min(window0.startSec, runEnd - runStart), endSec: Math.min(window0.endSec, runEnd - runStart) };
  const window = { runStart, runEnd, stableStart: runStart + stable.startSec, stableEnd: runStart + stable.endSec };
  let collected: RunCollected | undefined;
  if (coordinator && stable.endSec > stable.startSec) {
    collected = await attempt.collect(window);
    t.problems.push(...collected.problems);
    if (collected.missingEssential && t.status === 'completed') t.status = 'crashed';
  }
  const cpus = [t.stats?.engineCpuPercentMax, collected?.engineCpuPercentMax].filter((x): x is number => x !== undefined && Number.isFinite(x));
  const cpuMax = cpus.length ? Math.max(...cpus) : undefined;
  const dropped = Math.max(t.stats?.droppedIterations ?? 0, collected?.droppedIterations ?? 0);
  const generator = judgeGenerator(
    { cpuPercentMax: cpuMax, droppedIterations: dropped, scriptErrors: t.stats?.scriptErrors ?? 0 },
    // Without collected numbers the generator's CPU was never asked for: judge what the engine said.
    collected ? attempt.generator : { ...attempt.generator, words: { ...attempt.generator.words, unmeasured: undefined } },
  );
  if (generator.problem && t.status === 'completed') {
    t.status = 'invalid';
    t.problems.push(generator.problem);
  }
  return { stable, window, ...(collected ? { collected } : {}), ...(cpuMax !== undefined ? { cpuMax } : {}), dropped, saturated: generator.saturated };
}

function assemble(stage: RunStage, attempt: RunAttempt, run: ScheduledRun, t: Trial, m: Measured, extras: RunExtras, duet?: DuetPart): RunResult {
  const { coordinator, stats } = t;
  const { collected } = m;
  const described = attempt.describe();
  const result = {
    schemaVersion: RUN_RESULT_SCHEMA_VERSION,
    provenance: { kind: 'measured', note: described.note },
    target: runTarget(stage.system, run.side),
    test: testParams(attempt.test, (q) => attempt.expandQuery(q)),
    repeat: run.repeat,
    ...(duet ? { duet: { slot: duet.slot, cpuShare: duet.cpuShare } } : {}),
    startedAt: t.startedAt.toISOString(),
    ...(coordinator ? { testStartedAt: new Date(t.runStart * 1000).toISOString() } : {}),
    finishedAt: new Date().toISOString(),
    status: t.status,
    problems: t.problems,
    ...(coordinator?.kind === 'unbounded'
      ? { supportedUsers: coordinator.result.supportedUsers, converged: coordinator.result.converged, capacity: coordinator.result.capacity }
      : {}),
    ...(coordinator?.kind === 'bounded' && coordinator.result.earlyStop ? { earlyStop: coordinator.result.earlyStop } : {}),
    stableWindow: m.stable,
    totals: collected?.totals ?? { requests: stats?.requests ?? 0, errors: stats?.errors ?? 0, timeouts: stats?.timeouts ?? 0 },
    api: collected?.api ?? [],
    store: collected?.store ?? [],
    series: collected?.series ?? {},
    ...(extras.speedProbe ? { speedProbe: extras.speedProbe } : {}),
    ...(extras.outsideCpu ? { outsideCpu: extras.outsideCpu } : {}),
    ...(extras.profile ? { profile: extras.profile } : {}),
    generator: {
      ...(m.cpuMax !== undefined ? { cpuPercentMax: Math.round(m.cpuMax * 10) / 10 } : {}),
      ...(stats || collected?.droppedIterations !== undefined ? { droppedIterations: m.dropped } : {}),
      saturated: m.saturated,
    },
    bench: described.bench,
    links: extras.links ?? [],
  };
  return runResultSchema.parse(result);
}
