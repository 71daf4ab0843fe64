import type { RelativeMetric } from './judged-metrics.ts';
import type { RunResult } from './schema.ts';

/** One duet's two runs, their values of a metric, and ln(candidate / baseline). */
export interface DuetRatio {
  baselineRun: RunResult;
  candidateRun: RunResult;
  baseline: number;
  candidate: number;
  logRatio: number;
}

/**
 * The duets of one test: each baseline run paired with the candidate run of the same
 * repeat, which ran at the same time, where both are `usable` and carry a positive value.
 */
export function duetRatios(
  baseline: readonly RunResult[],
  candidate: readonly RunResult[],
  test: string,
  metric: Pick<RelativeMetric, 'extract'>,
  usable: (run: RunResult) => boolean = (run) => run.status === 'completed',
): DuetRatio[] {
  const ofTest = (run: RunResult) => run.test.name === test && usable(run);
  const out: DuetRatio[] = [];
  for (const baselineRun of baseline.filter(ofTest)) {
    const candidateRun = candidate.find((run) => ofTest(run) && run.repeat === baselineRun.repeat);
    const b = metric.extract(baselineRun);
    const c = candidateRun ? metric.extract(candidateRun) : undefined;
    if (!candidateRun || !(b !== undefined && b > 0 && c !== undefined && c > 0)) continue;
    out.push({ baselineRun, candidateRun, baseline: b, candidate: c, logRatio: Math.log(c / b) });
  }
  return out;
}
