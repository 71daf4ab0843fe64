import type { VerdictFile } from '../results/verdict-schema.ts';

/** The report's comment on the duets the gate did not judge (verdict.json `disturbed`): which, why, and that none was judged. */
export function disturbedComments(verdict: Pick<VerdictFile, 'disturbed'>): string[] {
  const lines = verdict.disturbed ?? [];
  if (!lines.length) return [];
  const what = lines.length === 1 ? 'one duet' : `${lines.length} duets`;
  return [`**Not judged**: ${what}, run again; kept in \`results/\` (\`*-disturbed-N.json\`) and judged by no check: ${lines.join('; ')}.`];
}
