import type { TestSpec } from '../config/schema.ts';
import type { Progress } from './progress.ts';
import type { Clock, HealthSource, UserControl } from '../coordinator/index.ts';
import type { CollectWindow } from '../metrics/collected.ts';
import type { ServerCollected } from '../chat-servers/chat-server.ts';
import type { BenchFingerprint, RunResult } from '../results/schema.ts';
import { Barrier } from '../util/barrier.ts';
import { JointWindow, type JointParty } from '../coordinator/joint-window.ts';
import type { CapacityHints } from './capacity-hints.ts';
import type { ScheduledRun } from './gate-plan.ts';

/**
 * What the shared run sequence (run-sequence.ts) needs from a bench: one slot of it (the
 * local bench has two in a duet), and per run an attempt that starts the target and the
 * load, stops them and reads the numbers. The sequence owns timing, settling, the duet's
 * meeting points, the coordinator, the crash/abort classification, the load-generator
 * judgement and the run result; an attempt owns only what touches the bench.
 */
export interface RunStage {
  readonly system: RunResult['target']['system'];
  readonly progress: Progress;
  /** Aborted when the whole gate must stop (a signal, a dead bench component). */
  readonly signal: AbortSignal;
  readonly clock: Clock;
  readonly hints: CapacityHints;
  /** When the previous load on this slot ended (ms since epoch), for the settle period. */
  readonly state: { lastLoadEndMs: number };
  /** Prometheus' scrape interval and the collected series' rate window, for the settle period. */
  readonly scrapeIntervalSec: number;
  readonly rateWindowSec: number;
  /** Called before the run's first step; `duet` is set when the run is one side of a duet. */
  attempt(run: ScheduledRun, duet?: DuetPart): RunAttempt;
}

/**
 * One side of a duet: the slot it runs in, the share of the target CPUs each side is
 * measured against (the sides share the same cores), the two meeting points that keep
 * both sides' load on together, from the first user to the end of the later side's test,
 * and its handle on the window both sides are measured over.
 */
export interface DuetPart {
  slot: 'a' | 'b';
  cpuShare: number;
  start: Barrier;
  end: Barrier;
  joint: JointParty;
}

/** The two sides of one duet, slot a first, sharing their meeting points and their window. */
export function duetParts(cpuShare: number): [DuetPart, DuetPart] {
  const start = new Barrier(2);
  const end = new Barrier(2);
  const window = new JointWindow(2);
  const part = (slot: 'a' | 'b'): DuetPart => ({ slot, cpuShare, start, end, joint: window.party(`slot ${slot}`) });
  return [part('a'), part('b')];
}

/** The engine's own counts, read once the test is over. */
export interface EngineTotals {
  requests: number;
  errors: number;
  timeouts?: number;
  droppedIterations: number;
  scriptErrors: number;
  engineCpuPercentMax?: number;
}

/** A started target with its load engine: what the coordinator drives and reads. */
export interface StartedLoad {
  users: UserControl;
  health: HealthSource;
  stats(): Promise<EngineTotals | undefined>;
}

export type { CollectWindow };

/** What a bench read from its metrics for a run's window: the part of a target's collection the run sequence uses. */
export type RunCollected = Pick<
  ServerCollected,
  'series' | 'api' | 'store' | 'totals' | 'problems' | 'missingEssential' | 'engineCpuPercentMax' | 'droppedIterations'
>;

/** Run result fields only the bench knows, once the run is over. */
export interface RunDescription {
  note: string;
  bench: BenchFingerprint;
}

/** Result fields a bench measured beside the test: machine speed, dashboard links, the target's profile. */
export type RunExtras = Partial<Pick<RunResult, 'speedProbe' | 'links' | 'outsideCpu' | 'profile'>>;

export interface RunAttempt {
  /** The test as the coordinator runs it (a bench may disable checks it cannot evaluate). */
  readonly test: TestSpec;
  /** Bench placeholders in a health query filled in, for the result's test parameters. */
  expandQuery(query: string): string;
  readonly generator: GeneratorRule;
  /**
   * Prepares and starts the target and the load; whatever it started, `stop` stops.
   * `abort` ends the run at once when a component dies, naming it.
   */
  start(abort: (reason: Error) => void): Promise<StartedLoad>;
  /** The components a gate-wide stop would leave running are still up: the run was aborted, not crashed. */
  alive(): boolean;
  /** The load begins now (after settling and the duet's start). */
  testStarted?(): void;
  /** The coordinator finished after `seconds`. */
  testEnded?(seconds: number): void;
  /** Stops everything `start` started; `crash` names a component found dead only now. */
  stop(): Promise<{ problems: string[]; crash?: string }>;
  collect(window: CollectWindow): Promise<RunCollected>;
  /** Optional result fields measured beside the test (machine speed, other work's CPU, a profile, dashboard links). */
  extras?(o: { stable: { startSec: number; endSec: number }; window: CollectWindow; ran: boolean }): Promise<RunExtras>;
  describe(): RunDescription;
}

/**
 * The load generator must not be the bottleneck: its CPU over the limit, or dropped
 * iterations, make a run invalid; so does a scenario that threw. Where the bench can
 * always measure the generator's CPU, an unmeasured one makes the run invalid too
 * (saturation could not be ruled out).
 */
export interface GeneratorRule {
  limitPercent: number;
  /** The problem lines in the bench's words (which engine, which setting, what to do). */
  words: {
    /** Set where the generator's CPU is always measured: its absence makes the run invalid. */
    unmeasured?: string;
    cpu(maxPercent: number, limitPercent: number): string;
    dropped(iterations: number): string;
    scriptErrors(errors: number): string;
  };
}
