import type { Check, Decision, VerdictFile } from '../results/verdict-schema.ts';

/**
 * A check's two lines and what they mean, in the words the report, its Why sentence and the
 * check run share. The tolerance is the sequential test's indifference point: a true change
 * of that size is as likely to fail as to pass only over very many pairs, and within a
 * gate's few pairs it rarely fails and mostly ends undecided. The material change is the
 * one the gate is built to fail: near it a check fails reliably. The chances are the
 * decision's own (decision.ts detectable: the same Λ and look rule, simulated at the noise
 * model's σ), so the words never claim more than the gate does.
 */

export interface FailLines {
  worse: Check['worse'];
  tolerancePct: number;
  /** Absent for a context check: it never fails the gate. */
  materialPct?: number;
  /** The chances within maxRepeats pairs at a true change of the tolerance (relative checks). */
  atTolerance?: { fail: number; pass?: number };
  /** The chance it fails within maxRepeats pairs at a true change of the material change (relative checks). */
  atMaterial?: number;
  /** An error or timeout rate: judged on its counts, with no simulated chances. */
  rate: boolean;
}

type Detectable = Decision['detectable'][number];

function detectableOf(v: VerdictFile, c: Check): Detectable | undefined {
  if (!c.gating) return undefined;
  return v.decision.detectable.find((d) => d.metric === c.metric && d.test === c.test);
}

export function failLinesOf(v: VerdictFile, c: Check): FailLines {
  const d = detectableOf(v, c);
  const rate = c.unit === '% of requests';
  if (!d) return { worse: c.worse, tolerancePct: c.tolerancePct, rate };
  return {
    worse: c.worse,
    tolerancePct: d.tolerancePct,
    materialPct: d.materialPct,
    ...(d.failAtTolerance !== undefined
      ? { atTolerance: { fail: d.failAtTolerance, ...(d.passAtTolerance !== undefined ? { pass: d.passAtTolerance } : {}) } }
      : {}),
    ...(d.probabilityFail !== undefined ? { atMaterial: d.probabilityFail } : {}),
    rate,
  };
}

/** Simulated with 1000 trials: 100 % would claim more than the simulation shows. */
export function chance(p: number): string {
  return p >= 0.995 ? '> 99%' : `${Math.round(p * 100)}%`;
}

const signed = (worse: Check['worse'], pct: number) => `${worse === 'lower' ? '−' : '+'}${pct}%`;

/** "+10% (fails 1%)": the tolerance and, for a relative gating check, how often a change that size fails. */
export function toleranceCell(l: FailLines): string {
  return `${signed(l.worse, l.tolerancePct)}${l.atTolerance ? ` (fails ${chance(l.atTolerance.fail)})` : ''}`;
}

/** "+21% (fails 76%)"; a rate's material change decides on its counts; a context check has none. */
export function materialCell(l: FailLines): string {
  if (l.materialPct === undefined) return '—';
  if (l.atMaterial !== undefined) return `${signed(l.worse, l.materialPct)} (fails ${chance(l.atMaterial)})`;
  return `${signed(l.worse, l.materialPct)}${l.rate ? ' (a rate)' : ''}`;
}

/** The column headers both tables use. */
export const TOLERANCE_HEADER = 'Tolerance';
export const MATERIAL_HEADER = 'Material change';

function range(values: number[]): string {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return chance(lo) === chance(hi) ? chance(lo) : `${chance(lo).replace('%', '')}–${chance(hi)}`;
}

/**
 * What the two columns mean, with this gate's own chances: how often a true change of the
 * tolerance fails and ends undecided within its pairs, and how often one of the material
 * change fails, over its relative gating checks.
 */
export function failLinesLegend(v: VerdictFile): string {
  const n = v.decision.maxRepeats;
  const pairs = `${n} pair${n === 1 ? '' : 's'}`;
  const relative = v.decision.detectable.filter((d) => d.failAtTolerance !== undefined && d.probabilityFail !== undefined);
  const context = 'A context check never fails the gate.';
  if (!relative.length) {
    return `**${TOLERANCE_HEADER}** is where a check is as likely to fail as to pass over many pairs: within a gate's few pairs a change that size rarely fails and mostly ends inconclusive. **${MATERIAL_HEADER}** is the change the gate is built to fail: a check fails reliably only near it. ${context}`;
  }
  const failTol = range(relative.map((d) => d.failAtTolerance as number));
  const withPass = relative.filter((d) => d.passAtTolerance !== undefined);
  const undecided = withPass.length
    ? `, ends inconclusive ${range(withPass.map((d) => 1 - (d.failAtTolerance as number) - (d.passAtTolerance as number)))}`
    : '';
  const failMat = range(relative.map((d) => d.probabilityFail as number));
  const rates = v.decision.detectable.some((d) => d.probabilityFail === undefined)
    ? ' Error and timeout rates are judged on their counts: a rise near the material change fails at once.'
    : '';
  return (
    `**${TOLERANCE_HEADER}** is where a check is as likely to fail as to pass over many pairs, not where it fails: within this gate's ${pairs} a true change of the tolerance fails ${failTol} of the time${undecided ? ` and${undecided.replace(/^,/, '')}` : ''}. ` +
    `**${MATERIAL_HEADER}** is the change the gate is built to fail: at it a check fails ${failMat} of the time (each at the noise model's noise, as if it were the only gating check).${rates} ${context}`
  );
}

const word = (worse: Check['worse']) => (worse === 'higher' ? 'rise' : 'fall');

/** "its 10% tolerance" */
export function toleranceWords(l: FailLines): string {
  return `its ${l.tolerancePct}% tolerance`;
}

/** "its 21% material rise" (the change it is built to fail), or undefined for a context check. */
export function materialWords(l: FailLines): string | undefined {
  return l.materialPct === undefined ? undefined : `its ${l.materialPct}% material ${word(l.worse)}`;
}
