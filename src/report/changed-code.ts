import { plainMarkdown } from './format.ts';
import type { ChangedCommits } from '../results/changed-code.ts';

/**
 * The report's "changed code" part: which hot functions changed between the two versions
 * (the local bench diffs both installed trees), and the commits between the two tags that
 * touched their files (GitHub's comparison), as links. When none of the hot functions
 * changed it says so plainly: the cause is then elsewhere. The shapes are the ones
 * chat-servers/synapse/changed-functions.ts and github/changed-commits.ts produce.
 */

export interface ChangedFunctionRow {
  name: string;
  path?: string | undefined;
  baselinePath?: string | undefined;
  status: 'changed' | 'unchanged' | 'added' | 'removed' | 'not-found';
  added?: number;
  removed?: number;
  candidateLine?: number;
}

export interface ChangedCodeInput {
  /** The test whose profile the hot functions come from, for the heading. */
  test?: string;
  baseline: string;
  candidate: string;
  /** The local tree diff of the hot functions, when both trees were at hand. */
  functions?: readonly ChangedFunctionRow[];
  /** The commits that touched the hot files, when both sides are tags of the repository. */
  commits?: ChangedCommits;
  /** At most this many commits per file are listed. */
  maxCommitsPerFile?: number;
}

const code = (text: string) => `\`${text.replace(/`/g, "'")}\``;

function functionsPart(rows: readonly ChangedFunctionRow[], baseline: string, candidate: string): string[] {
  const changed = rows.filter((r) => r.status === 'changed' || r.status === 'added' || r.status === 'removed');
  const known = rows.filter((r) => r.status !== 'not-found');
  if (changed.length === 0) {
    return [
      known.length === 0
        ? `None of the hot functions is in the server's own source, so none can have changed between ${code(baseline)} and ${code(candidate)}.`
        : `None of the ${known.length} hot functions in the server's source changed between ${code(baseline)} and ${code(candidate)}: the cause is elsewhere (configuration, dependencies, data).`,
    ];
  }
  const lines = [
    `${changed.length} of the ${known.length} hot functions in the server's source changed between ${code(baseline)} and ${code(candidate)}:`,
    '',
    '| Function | File | Change |',
    '| --- | --- | --- |',
  ];
  for (const r of changed) {
    const change =
      r.status === 'changed' ? `+${r.added ?? 0} / −${r.removed ?? 0} lines` : r.status === 'added' ? 'new in the candidate' : 'gone from the candidate';
    const where = r.path ? `${code(r.path)}${r.candidateLine ? `:${r.candidateLine}` : ''}${r.baselinePath ? ` (was ${code(r.baselinePath)})` : ''}` : '—';
    lines.push(`| ${code(r.name)} | ${where} | ${change} |`);
  }
  return lines;
}

function commitsPart(c: ChangedCommits, max: number): string[] {
  const range = `[${plainMarkdown(c.base)}…${plainMarkdown(c.head)}](${c.compareUrl})`;
  if (c.files.length === 0) {
    return [`No commit in ${range} (${c.totalCommits} commits in ${plainMarkdown(c.repository)}) touched the hot functions' files.`];
  }
  const lines = [
    `Commits in ${range} that touched the hot functions' files${c.truncated ? ` (GitHub listed ${c.totalCommits} commits only in part; follow the link for all)` : ''}:`,
    '',
  ];
  for (const f of c.files) {
    lines.push(`- ${code(f.path)} (${f.functions.map(code).join(', ')}; +${f.additions} / −${f.deletions} lines)`);
    for (const commit of f.commits.slice(0, max)) {
      lines.push(`  - [${commit.sha.slice(0, 7)}](${commit.url}) ${plainMarkdown(commit.title)}${commit.author ? ` (${plainMarkdown(commit.author)})` : ''}`);
    }
    if (f.commits.length > max) lines.push(`  - and ${f.commits.length - max} more`);
  }
  if (c.untouched.length) lines.push('', `Unchanged in the range: ${c.untouched.map(code).join(', ')}.`);
  return lines;
}

/** The section's Markdown; empty when there is nothing to say (no tree diff and no comparison). */
export function changedCodeSection(input: ChangedCodeInput): string {
  const parts: string[][] = [];
  if (input.functions) parts.push(functionsPart(input.functions, input.baseline, input.candidate));
  if (input.commits) parts.push(commitsPart(input.commits, input.maxCommitsPerFile ?? 5));
  if (parts.length === 0) return '';
  return [`### The changed code behind the hot spots${input.test ? ` - ${input.test}` : ''}`, '', ...parts.flatMap((p, i) => (i ? ['', ...p] : p)), ''].join(
    '\n',
  );
}
