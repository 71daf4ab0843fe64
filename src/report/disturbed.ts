import type { VerdictFile } from '../results/verdict-schema.ts';

/** The report's comment on disturbed duets (verdict.json `disturbed`): which, why, and that none was judged. */
export function disturbedComments(verdict: Pick<VerdictFile, 'disturbed'>): string[] {
  const lines = verdict.disturbed ?? [];
  if (!lines.length) return [];
  const what = lines.length === 1 ? 'one duet, which is' : `${lines.length} duets, which are`;
  return [`**Disturbed**: other work took the bench's CPUs during ${what} recorded in \`results/\` (\`*-disturbed-N.json\`) but judged by no check: ${lines.join('; ')}.`];
}
