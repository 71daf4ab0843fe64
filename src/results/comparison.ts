import type { RunResult } from './schema.ts';
import type { VerdictFile } from './verdict-schema.ts';
import type { ProfileDiff } from './profile.ts';
import type { TestChangedCode } from './changed-code.ts';

/**
 * What a comparison hands the report: the verdict and, per test, the runs it judged with
 * the per-handler changes worth listing. Declared here, below both, so that compare
 * produces it and report renders it without either importing the other.
 */

/**
 * The per-handler rule's constants (applied in compare/handler-deltas.ts, stated in the report).
 * Fewer calls than MIN_CALLS_PER_RUN in a run, on either side, make that run's mean too rough
 * to compare: the usual threshold for a mean of skewed values to be close to normal.
 */
export const MIN_CALLS_PER_RUN = 30;
/** Two-sided level of the per-handler test. */
export const HANDLER_ALPHA = 0.05;

/**
 * How one handler's change in mean was judged (compare/handler-deltas.ts): a t-test over
 * the pairs where both runs called it often enough; one such pair cannot be tested; none,
 * and the handler is too rare to judge.
 */
export type HandlerJudgement = { kind: 'significant' | 'not-significant'; p: number; n: number } | { kind: 'untested'; n: number } | { kind: 'too-rare' };

/** A per-handler (or per-store-method) change in mean worth listing. */
export interface TimingDelta {
  name: string;
  /** Calls per run, over both sides' runs. */
  callsPerRun: number;
  /** Mean time per call, count-weighted over each side's runs. */
  baselineMs: number;
  candidateMs: number;
  deltaMs: number;
  deltaPct: number;
  baselineP99Ms: number;
  candidateP99Ms: number;
  /** Calls per run × change in mean: what the change adds to a run's total time (negative: saves). */
  addedMsPerRun: number;
  judgement: HandlerJudgement;
}

/** Ranked by the time they add or save; `rare`: too few calls to judge, by calls. */
export interface TimingDeltas {
  worsened: TimingDelta[];
  improved: TimingDelta[];
  rare: TimingDelta[];
}

export interface TestComparison {
  name: string;
  type: RunResult['test']['type'];
  baseline: RunResult[];
  candidate: RunResult[];
  problems: string[];
  api: TimingDeltas;
  store: TimingDeltas;
  /** Metrics neither side measured (e.g. stack in use on a Python target). */
  notMeasured: string[];
  /** The profile diff, when the runs carry profiles on both sides. */
  profile?: ProfileDiff;
  /** Which of the profile's significantly grown functions changed between the versions, when any grew. */
  changedCode?: TestChangedCode;
}

export interface Comparison {
  verdict: VerdictFile;
  tests: TestComparison[];
}
