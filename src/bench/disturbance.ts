import type { RunResult } from '../results/schema.ts';

/**
 * A disturbed duet: other work took more of the bench's CPUs during its measured window
 * than the bench's limit (bench.local.maxOutsideCpuPercent). Such a duet is recorded but not
 * judged, and the gate runs it again. Whether a duet is disturbed depends only on the host's
 * load, measured apart from both sides' metrics, so leaving it out selects duets without
 * looking at their differences, and the sequential test's error bounds hold for the rest.
 */

/**
 * Why this duet is disturbed, or undefined: the larger of its runs' shares (each slot
 * measures the whole bench) above the limit. A share that was not measured is unknown and
 * disturbs nothing.
 */
export function duetDisturbance(results: readonly RunResult[]): string | undefined {
  const measured = results.flatMap((r) => (r.outsideCpu?.percent !== undefined ? [r.outsideCpu as { percent: number; limitPercent: number }] : []));
  const worst = measured.sort((a, b) => b.percent - a.percent)[0];
  if (!worst || worst.percent <= worst.limitPercent) return undefined;
  return `other work used ${worst.percent} % of the bench's CPUs during the measured window (limit ${worst.limitPercent} %, bench.local.maxOutsideCpuPercent)`;
}

/**
 * How many disturbed duets a gate runs again before it gives up: one more than its
 * maxRepeats, so a machine busy now and then costs some time, and one busy throughout ends
 * inconclusive, never passes.
 */
export function disturbedRerunCap(maxRepeats: number): number {
  return maxRepeats + 1;
}

/** Why a gate stopped on a busy machine: N of the M duets it ran were disturbed. */
export function disturbedStop(disturbed: number, duets: number): string {
  return `the bench was disturbed in ${disturbed} of ${duets} duets (other work on its CPUs above bench.local.maxOutsideCpuPercent): run the gate on a machine that runs it alone, or raise the limit`;
}
