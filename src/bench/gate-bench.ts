import type { BenchFingerprint, RunResult } from '../results/schema.ts';
import type { ScheduledRun } from './gate-plan.ts';
import type { ChangedFunctionRecord } from '../results/changed-code.ts';
import type { FunctionKey } from '../results/profile.ts';

/**
 * What the gate loop (src/run/gate.ts) needs from a bench. The loop owns the schedule
 * (interleaved repeats), result files, runs that never happened, clean-up and the
 * comparison; a bench owns everything between "set up" and "tear down": the local bench
 * (src/bench/local/local-gate-bench.ts) starts processes on 127.0.0.1, the AWS bench
 * (src/bench/aws/aws-gate-bench.ts) drives a provisioned one.
 */
export interface GateBench {
  /** The chat server it runs (ChatServer.system), as run results record it. */
  readonly system: RunResult['target']['system'];
  /**
   * Seconds a run costs beyond its test's planned length (switching builds, restoring the
   * dataset, settling), so the job budget stops before a run that would not finish.
   */
  readonly runOverheadSec: number;
  /** Bench placeholders in a health query filled in, for runs that never happened. */
  expandHealthQuery(query: string): string;
  /** Installs SIGINT/SIGTERM handling that ends the gate cleanly; `onSignal` aborts it. */
  handleSignals(onSignal: (signal: NodeJS.Signals) => void): void;
  /** Everything before the first run. `signal` aborts when the whole gate must stop. */
  setUp(signal: AbortSignal): Promise<void>;
  /** The bench as run results record it (grows as set-up learns versions). */
  fingerprint(): BenchFingerprint;
  /** One test run, start to result; a failure becomes a crashed or invalid result, not a throw. */
  execute(run: ScheduledRun): Promise<RunResult>;
  /**
   * A duet (mode: duet), on benches that can run one: both runs at once, on their own
   * servers sharing the same CPUs, the first in slot a. Results in the order given.
   */
  executeDuet?(runs: readonly [ScheduledRun, ScheduledRun]): Promise<[RunResult, RunResult]>;
  /**
   * Where the bench installs both versions side by side (the local bench): which of the
   * profile's hot functions changed between the baseline's and the candidate's installed
   * sources; undefined when either install is not there.
   */
  changedFunctions?(hot: readonly FunctionKey[]): Promise<ChangedFunctionRecord[] | undefined>;
  /** After a run: why the bench cannot go on (a component died), if it cannot. */
  stopReason(): string | undefined;
  /** Stops what the bench started; returns problems, which are warnings. */
  tearDown(): Promise<string[]>;
  /** One line for the log once torn down. */
  tornDownMessage(): string;
  /**
   * Report notes: layout, dataset, per-side overrides, caveats, and `fatal` reasons.
   * `ranOn` is the fingerprint of reused runs (--resume) when this invocation set nothing up.
   */
  notes(fatal: readonly string[], ranOn?: BenchFingerprint): string[];
}
