import type { RunResult } from '../results/schema.ts';

/**
 * Runs of disturbed duets (the gate marks them: other work took more of the bench's CPUs
 * than its limit) are kept in the record and judged nowhere: not in the checks, not in the
 * tables. Whether a duet is disturbed depends on the host's load alone, never on its
 * metrics, so leaving it out does not bias the test (docs/how-it-decides.md).
 */

export interface DisturbedDuet {
  test: string;
  repeat: number;
  reason: string;
}

/** The runs compare judges: those of no disturbed duet. */
export function undisturbed(runs: readonly RunResult[]): RunResult[] {
  return runs.filter((r) => !r.disturbed);
}

/**
 * The disturbed duets among the runs, by test and repeat: a duet run again and disturbed
 * again counts twice (as many as the side with more such runs at that repeat).
 */
export function disturbedDuets(baseline: readonly RunResult[], candidate: readonly RunResult[]): DisturbedDuet[] {
  const count = new Map<string, { test: string; repeat: number; reason: string; b: number; c: number }>();
  for (const [side, runs] of [
    ['b', baseline],
    ['c', candidate],
  ] as const) {
    for (const r of runs) {
      if (!r.disturbed) continue;
      const key = `${r.test.name}\n${r.repeat}`;
      const entry = count.get(key) ?? { test: r.test.name, repeat: r.repeat, reason: r.disturbed, b: 0, c: 0 };
      entry[side]++;
      count.set(key, entry);
    }
  }
  return [...count.values()]
    .sort((x, y) => x.test.localeCompare(y.test) || x.repeat - y.repeat)
    .flatMap((e) => Array.from({ length: Math.max(e.b, e.c) }, () => ({ test: e.test, repeat: e.repeat, reason: e.reason })));
}

/** verdict.json's lines for them, one per duet. */
export function disturbedLines(duets: readonly DisturbedDuet[]): string[] {
  return duets.map((d) => `test "${d.test}" duet #${d.repeat + 1}: ${d.reason}`);
}

/**
 * A test whose every duet on one side was disturbed has nothing left to judge: the problem
 * that says so, with how many of its duets were disturbed.
 */
export function nothingLeft(
  test: string,
  duets: readonly DisturbedDuet[],
  judged: { baseline: readonly RunResult[]; candidate: readonly RunResult[] },
): string[] {
  const mine = duets.filter((d) => d.test === test);
  if (!mine.length || (judged.baseline.length && judged.candidate.length)) return [];
  const others = new Set([...judged.baseline, ...judged.candidate].map((r) => r.repeat)).size;
  return [
    `${mine.length} of ${mine.length + others} duets of test "${test}" could not be judged (disturbed, or their sides measured over different minutes), and no duet of it is left to judge`,
  ];
}
