import type { RunResult } from '../results/schema.ts';

/**
 * Duets the gate does not judge, and runs again.
 *
 * - **Disturbed**: other work took more of the bench's CPUs during its measured window than
 *   the bench's limit (bench.local.maxOutsideCpuPercent).
 * - **Windows apart**: the two sides were not measured over the same minutes. The sides share
 *   the machine, so each side's figure depends on what the other did meanwhile; two windows
 *   apart compare two different machines. The coordinator stops both sides together over one
 *   window (src/coordinator/joint-window.ts), so this only happens when one side went on
 *   alone (its partner left early) or a bench ran the two sides apart.
 *
 * Both depend only on the host's load and on when each side's window lay, never on the
 * sides' metrics, so leaving such duets out selects duets without looking at their
 * differences, and the sequential test's error bounds hold for the rest.
 */

/**
 * How far apart, in seconds, the starts or the ends of a duet's two measured windows may
 * lie. The joint window puts both on the same interval; what is left is the two sides'
 * start clocks (milliseconds apart) and the rounding of their windows to 0.01 s.
 */
export const WINDOW_ALIGNMENT_SEC = 5;

/** Why the gate will not judge this duet, or undefined: other work first, then windows apart. */
export function duetNotJudged(results: readonly RunResult[]): string | undefined {
  return duetDisturbance(results) ?? windowsApart(results);
}

/**
 * Why this duet is disturbed, or undefined: the larger of its runs' shares (each slot
 * measures the whole bench) above the limit. A share that was not measured is unknown and
 * disturbs nothing.
 */
function duetDisturbance(results: readonly RunResult[]): string | undefined {
  const measured = results.flatMap((r) => (r.outsideCpu?.percent !== undefined ? [r.outsideCpu as { percent: number; limitPercent: number }] : []));
  const worst = measured.sort((a, b) => b.percent - a.percent)[0];
  if (!worst || worst.percent <= worst.limitPercent) return undefined;
  return `other work used ${worst.percent} % of the bench's CPUs during the measured window (limit ${worst.limitPercent} %, bench.local.maxOutsideCpuPercent)`;
}

/**
 * Why this duet's two completed runs were measured over different minutes, or undefined.
 * Runs that did not complete are judged by their status instead; runs that do not record
 * when their test started (older results) cannot be placed and pass.
 */
export function windowsApart(results: readonly RunResult[]): string | undefined {
  if (results.length !== 2 || results.some((r) => r.status !== 'completed' || r.testStartedAt === undefined)) return undefined;
  const [a, b] = results.map((r) => {
    const t0 = Date.parse(r.testStartedAt as string) / 1000;
    return { slot: r.duet?.slot ?? '?', start: t0 + r.stableWindow.startSec, end: t0 + r.stableWindow.endSec, window: r.stableWindow };
  }) as [Window, Window];
  const starts = Math.abs(a.start - b.start);
  const ends = Math.abs(a.end - b.end);
  if (starts <= WINDOW_ALIGNMENT_SEC && ends <= WINDOW_ALIGNMENT_SEC) return undefined;
  const span = (w: Window) => `slot ${w.slot} ${round(w.window.startSec)}-${round(w.window.endSec)} s`;
  return (
    `the two sides were measured over different minutes (${span(a)}, ${span(b)} of their tests: starts ${round(starts)} s apart, ends ${round(ends)} s apart; ` +
    `at most ${WINDOW_ALIGNMENT_SEC} s each), so each side's figure describes a different machine`
  );
}

interface Window {
  slot: string;
  start: number;
  end: number;
  window: { startSec: number; endSec: number };
}

const round = (x: number): number => Math.round(x * 10) / 10;

/**
 * How many duets a gate runs again before it gives up: one more than its maxRepeats, so a
 * machine busy now and then costs some time, and one busy throughout ends inconclusive,
 * never passes.
 */
export function disturbedRerunCap(maxRepeats: number): number {
  return maxRepeats + 1;
}

/** Why a gate stopped: N of the M duets it ran could not be judged, and what to do. */
export function disturbedStop(notJudged: number, duets: number): string {
  return (
    `${notJudged} of ${duets} duets could not be judged (other work on the bench's CPUs above bench.local.maxOutsideCpuPercent, or the two sides measured over different minutes): ` +
    'run the gate on a machine that runs it alone, or raise the limit'
  );
}
