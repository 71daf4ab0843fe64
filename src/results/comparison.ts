import type { RunResult } from './schema.ts';
import type { VerdictFile } from './verdict-schema.ts';
import type { ProfileDiff } from './profile.ts';

/**
 * What a comparison hands the report: the verdict and, per test, the runs it judged with
 * the per-handler changes worth listing. Declared here, below both, so that compare
 * produces it and report renders it without either importing the other.
 */

/** A per-handler (or per-store-method) change worth listing. */
export interface TimingDelta {
  name: string;
  field: 'avgMs' | 'p99Ms';
  baselineMs: number;
  candidateMs: number;
  deltaMs: number;
  deltaPct: number;
}

export interface TestComparison {
  name: string;
  type: RunResult['test']['type'];
  baseline: RunResult[];
  candidate: RunResult[];
  problems: string[];
  api: { worsened: TimingDelta[]; improved: TimingDelta[] };
  store: { worsened: TimingDelta[]; improved: TimingDelta[] };
  /** Metrics neither side measured (e.g. stack in use on a Python target). */
  notMeasured: string[];
  /** The profile diff, when the runs carry profiles on both sides. */
  profile?: ProfileDiff;
}

export interface Comparison {
  verdict: VerdictFile;
  tests: TestComparison[];
}
