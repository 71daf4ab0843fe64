import type { Check, VerdictFile } from '../results/verdict-schema.ts';
import { failLinesOf, materialWords, toleranceWords } from './fail-lines.ts';

/**
 * What a release manager reads first, in the report and in the check run: one sentence of
 * why the verdict is what it is, and what to do next, in plain words from the verdict's own
 * figures. The statistics behind them are further down in both.
 */

/** A metric's name inside a sentence: "API time, average" stays, "Supported users" → "supported users". */
export function metricInSentence(metric: string): string {
  const name = metric.replace(/ \(stable phase\)$/, '');
  const first = name.split(/[ ,]/)[0] ?? '';
  return first === first.toUpperCase() ? name : name.charAt(0).toLowerCase() + name.slice(1);
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A size of change without its sign: "0.16%", "1.3%", "45%". */
function plainPct(x: number): string {
  const a = Math.abs(x);
  return `${a < 1 ? Number(a.toFixed(2)) : a < 10 ? Number(a.toFixed(1)) : Math.round(a)}%`;
}

/** How far a check moved toward its tolerance, as a share of it (negative: away). */
function towardTolerance(c: Check): number {
  if (c.deltaPct === null) return 0;
  return (c.worse === 'higher' ? c.deltaPct : -c.deltaPct) / c.tolerancePct;
}

function label(c: Check, oneTest: boolean): string {
  return oneTest ? metricInSentence(c.metric) : `${metricInSentence(c.metric)} in the ${c.test} test`;
}

function moved(c: Check): string {
  if (c.deltaPct === null) return c.baseline === 0 && (c.candidate ?? 0) > 0 ? 'went from none to some' : 'could not be compared';
  if (c.deltaPct === 0) return 'did not change';
  return `${c.deltaPct > 0 ? 'rose' : 'fell'} ${plainPct(c.deltaPct)}`;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * Where a passing check's change sits against its two lines: the tolerance (where a check is
 * as likely to fail as to pass, so a change there mostly ends undecided) and the material
 * change, near which alone it fails reliably.
 */
function passPosition(v: VerdictFile, c: Check): string {
  const l = failLinesOf(v, c);
  const share = towardTolerance(c);
  const tol = toleranceWords(l);
  const where = share <= 0 ? `, away from ${tol}` : share <= 0.5 ? `, well inside ${tol}` : `, inside ${tol}`;
  const material = materialWords(l);
  return material ? `${where} (it fails reliably only near ${material})` : where;
}

function passWhy(v: VerdictFile, oneTest: boolean): string {
  const gating = v.checks.filter((c) => c.gating);
  const users = gating.find((c) => c.id.endsWith('.supportedUsers') && c.deltaPct !== null);
  const rest = gating.filter((c) => c !== users);
  const lead = users ?? [...gating].sort((a, b) => towardTolerance(b) - towardTolerance(a))[0];
  if (!lead) return 'No gating check was computed.';
  const first = `${capitalised(label(lead, oneTest))} ${moved(lead)}${passPosition(v, lead)}`;
  const others = users ? rest.length : gating.length - 1;
  if (others === 0) return `${first}.`;
  return `${first}, and ${users ? 'the other' : 'all other'} ${plural(others, 'gating check')} also passed.`;
}

/** A failed check against its lines: the runs favour its material change over no change. */
function failPosition(v: VerdictFile, c: Check): string {
  if (c.deltaPct === null) return '';
  const l = failLinesOf(v, c);
  const material = materialWords(l);
  const bad = c.worse === 'higher' ? c.deltaPct : -c.deltaPct;
  if (!material || l.materialPct === undefined) return `, beyond ${toleranceWords(l)}`;
  if (bad >= l.materialPct) return `, beyond ${material}`;
  if (bad >= l.tolerancePct) return `, past ${toleranceWords(l)} toward ${material}`;
  return `, inside ${toleranceWords(l)}, yet the runs favour ${material} over no change`;
}

function failWhy(v: VerdictFile, oneTest: boolean): string {
  const failed = v.checks.filter((c) => c.gating && c.verdict === 'fail').sort((a, b) => towardTolerance(b) - towardTolerance(a));
  const first = failed[0];
  if (!first && v.creep?.verdict === 'fail') return `${capitalised(v.creep.line)}.`;
  if (!first) return 'A gating check failed.';
  const what = (c: Check) => `${label(c, oneTest)} ${moved(c)}${failPosition(v, c)}`;
  // The two that moved farthest past their tolerances are named; any others are counted.
  const second = failed[1] ? `; ${what(failed[1])}` : '';
  const more = failed.length > 2 ? `${second}, and ${plural(failed.length - 2, 'other check')} failed too` : second;
  return `${capitalised(what(first))}${more}.`;
}

function inconclusiveWhy(v: VerdictFile, oneTest: boolean): string {
  if (v.creep?.verdict === 'inconclusive' && !v.problems.length && !v.checks.some((c) => c.gating && c.verdict === 'inconclusive')) {
    return `Every gating check passed this step, but ${v.creep.line}.`;
  }
  if (v.problems.length) {
    const more = v.problems.length > 1 ? ` (and ${plural(v.problems.length - 1, 'other problem')}, listed below)` : '';
    return `The gate could not judge: ${v.problems[0]}${more}.`;
  }
  const open = v.checks.filter((c) => c.gating && c.verdict === 'inconclusive');
  const { pairs: ran, minRepeats } = v.decision;
  if (ran < minRepeats) {
    // Nothing is judged before the minimum: say so, and what the pairs so far show.
    const users = open.find((c) => c.id.endsWith('.supportedUsers') && c.deltaPct !== null);
    const lead = users ?? [...open].sort((a, b) => towardTolerance(b) - towardTolerance(a))[0];
    const sofar = lead ? `; so far ${label(lead, oneTest)} ${moved(lead)}` : '';
    return `The gate judges after at least ${plural(minRepeats, 'pair')} of runs and ${plural(ran, 'pair')} ${ran === 1 ? 'has' : 'have'} run${sofar}.`;
  }
  // Supported users first (the capacity a release manager asks about), then the closest to their tolerances.
  const ranked = [...open].sort(
    (a, b) => Number(b.id.endsWith('.supportedUsers')) - Number(a.id.endsWith('.supportedUsers')) || towardTolerance(b) - towardTolerance(a),
  );
  const named = ranked.slice(0, 3).map((c) => `${label(c, oneTest)} (${moved(c)} so far)`);
  const list = `${named.join(', ')}${open.length > 3 ? `, and ${open.length - 3} more` : ''}`;
  const pairs = plural(v.decision.pairs, 'pair');
  const stage = v.next === 'repeat' ? `After ${pairs}` : `After ${pairs}, the most this gate runs,`;
  return `${stage} the runs cannot yet tell the candidate from the baseline on ${plural(open.length, 'gating check')}: ${list}.`;
}

/** One sentence: why the verdict is what it is. */
export function whySentence(v: VerdictFile): string {
  const oneTest = new Set(v.checks.map((c) => c.test)).size === 1;
  if (v.verdict === 'pass') return passWhy(v, oneTest);
  if (v.verdict === 'fail') return failWhy(v, oneTest);
  return inconclusiveWhy(v, oneTest);
}

/** What to do next. For an inconclusive gate, the check run's own next steps take precedence. */
export function nextStep(v: VerdictFile): string {
  if (v.verdict === 'pass') return 'Nothing: proceed with the release.';
  if (v.verdict === 'fail') {
    const first = v.checks.filter((c) => c.gating && c.verdict === 'fail').sort((a, b) => towardTolerance(b) - towardTolerance(a))[0];
    if (!first && v.creep?.verdict === 'fail')
      return `Hold the release: each change was small, but together they exceed the material change since ${v.creep.anchor}. Look at the series graphs under "Since earlier releases" and the releases where a check shifted.`;
    const what = first ? `${metricInSentence(first.metric)} in the ${first.test} test` : 'the failed check';
    return `Hold the release. Look first at ${what} (its row in the checks table and its graph in the report), then at the API handlers and store methods that add the most time.`;
  }
  if (v.problems.length) return 'Fix the cause and run the gate again: a run that could not be judged is not noise, so more pairs will not help.';
  if (v.creep?.verdict === 'inconclusive' && !v.checks.some((c) => c.gating && c.verdict === 'inconclusive')) {
    return `The step passed, but the change since ${v.creep.anchor} is not judged yet: each undecided check says why under "Since earlier releases". Resume the gate (--resume, same output directory) to measure the anchor against the candidate.`;
  }
  if (v.next === 'repeat') return 'Add another pair of runs: resume the run on the same output directory, and the gate judges every pair together.';
  const more = v.decision.suggestedMorePairs;
  if (more !== undefined) return `About ${plural(more, 'more pair')} would likely decide it: raise maxRepeats and resume, or lower the bench's noise.`;
  return 'Re-run the gate with more pairs, or have an approver accept the risk.';
}
