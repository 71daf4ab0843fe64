import type { Check } from '../results/verdict-schema.ts';

/**
 * How changes are written, in the report and in the checks' own text. The decision
 * itself is in compare/sequential.ts (the rule) and compare/decision.ts (checks and verdict).
 */
export const fmtPct = (x: number): string => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(2)}%`;

/**
 * A check's change as text. A rate that went from zero to above zero has no finite
 * relative change: it is "new (+∞)", never "+0.00%".
 */
export function fmtDelta(check: Pick<Check, 'deltaPct' | 'baseline' | 'candidate'>): string {
  if (check.deltaPct !== null) return fmtPct(check.deltaPct);
  if (check.baseline === 0 && check.candidate !== null && check.candidate > 0) return 'new (+∞)';
  return 'not judged';
}

/**
 * Text from outside (a `--note`) as one line of plain Markdown text: line breaks become
 * spaces, so it cannot start a heading or a block of its own, and the characters that
 * make inline markup or HTML are escaped, as are a list item's block markers at its start
 * (CommonMark: any ASCII punctuation may be backslash-escaped).
 */
export function plainMarkdown(text: string): string {
  const line = text.replace(/[\r\n\v\f\u0085\u2028\u2029]+/g, ' ').trim();
  return line.replace(/[\\`*_[\]<>#|~&!]/g, (c) => `\\${c}`).replace(/^([-+=>]|\d+[.)])/, (m) => `${m.slice(0, -1)}\\${m.slice(-1)}`);
}
