import type { Check, CheckOutcome, Verdict, VerdictFile } from '../results/verdict-schema.ts';
import { hasEvidenceOfChange } from '../report/findings.ts';
import { nextStep, whySentence } from '../report/headline.ts';
import { changePointLines, creepHeadline } from '../report/history-section.ts';
import { failLinesLegend, failLinesOf, MATERIAL_HEADER, materialCell, TOLERANCE_HEADER, toleranceCell } from '../report/fail-lines.ts';
import { nextStepsMarkdown, type NextStepsContext } from './next-steps.ts';

/**
 * Markdown for the check run, the job summary and the PR body. Every value that came
 * from a file is escaped for a table cell, and every text is cut to fit GitHub's limits.
 */

/**
 * GitHub's limit for check run summary and text. The REST reference says "65535
 * characters", but the API counts UTF-8 bytes ("summary exceeds a maximum bytesize of
 * 65535", github/docs#35252), so every text is cut in bytes, which also keeps it under
 * the documented character count (and the 65536-character limit of PR bodies).
 */
export const GITHUB_TEXT_LIMIT = 65_535;

export const VERDICT_LABEL: Record<Verdict, string> = {
  pass: '✅ PASS',
  fail: '❌ FAIL',
  inconclusive: '⚠️ INCONCLUSIVE',
};

const OUTCOME_LABEL: Record<CheckOutcome, string> = {
  pass: '✅ pass',
  fail: '❌ fail',
  inconclusive: '⚠️ inconclusive',
  warn: '🟡 warn',
};

/** Failures first: the rows a reader needs are at the top, and survive truncation. */
const OUTCOME_ORDER: Record<CheckOutcome, number> = { fail: 0, inconclusive: 1, warn: 2, pass: 3 };

export function escapeCell(text: string): string {
  return text
    .replace(/[\r\n]+/g, ' ')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\|/g, '\\|');
}

export function escapeInline(text: string): string {
  return escapeCell(text).replace(/[`*_[\]]/g, (c) => `\\${c}`);
}

/** Bytes as MiB or GiB: a heap of 153 000 000 bytes reads as 145.9 MiB. */
function formatBytes(bytes: number): string {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(2)} GiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

function formatValue(value: number | null, unit: string): string {
  if (value === null) return '—';
  if (unit === 'bytes') return formatBytes(value);
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${value.toFixed(digits)}${unit ? ` ${unit}` : ''}`;
}

function formatPct(value: number | null): string {
  if (value === null) return '—';
  return `${value > 0 ? '+' : ''}${value.toFixed(1)}%`;
}

/** A context check that stayed undecided with no evidence of change: no news, not a warning. */
function quietContext(c: Check): boolean {
  return !c.gating && c.verdict === 'warn' && !hasEvidenceOfChange(c);
}

function sortChecks(checks: readonly Check[]): Check[] {
  return [...checks].sort((a, b) => OUTCOME_ORDER[a.verdict] - OUTCOME_ORDER[b.verdict] || Number(b.gating) - Number(a.gating));
}

function verdictTable(verdict: VerdictFile): string {
  const header = [
    `| Test | Metric | Baseline | Candidate | Change | Interval | ${TOLERANCE_HEADER} | ${MATERIAL_HEADER} | Result |`,
    '|---|---|---:|---:|---:|---|---:|---:|---|',
  ];
  const rows = sortChecks(verdict.checks).map((c) => {
    const interval = c.interval ? `[${formatPct(c.interval[0])}, ${formatPct(c.interval[1])}]` : '—';
    const lines = failLinesOf(verdict, c);
    const tolerance = `${toleranceCell(lines)}${c.gating ? '' : ' (non-gating)'} | ${materialCell(lines)}`;
    // Values taken to one machine speed are not the measured ones: say so where they are shown.
    const metric = c.speed?.adjusted
      ? `${c.metric} (at one machine speed; measured ${formatValue(c.speed.rawBaseline, c.unit)} → ${formatValue(c.speed.rawCandidate, c.unit)})`
      : c.metric;
    return `| ${escapeCell(c.test)} | ${escapeCell(metric)} | ${escapeCell(formatValue(c.baseline, c.unit))} | ${escapeCell(formatValue(c.candidate, c.unit))} | ${formatPct(c.deltaPct)} | ${interval} | ${tolerance} | ${quietContext(c) ? 'no evidence of change' : OUTCOME_LABEL[c.verdict]} |`;
  });
  return rows.length ? [...header, ...rows].join('\n') : '_No checks were evaluated._';
}

export interface SummaryContext {
  verdict: VerdictFile;
  reportUrl?: string | undefined;
  runUrl?: string | undefined;
  baselineReason?: string | undefined;
  /** Where and how to re-run or override an inconclusive gate. */
  nextSteps?: NextStepsContext | undefined;
}

/**
 * What to do next, first: the check run's own steps for an inconclusive gate (how to re-run
 * or override), otherwise the report's one line.
 */
function nextLines(v: VerdictFile, ctx: SummaryContext): string[] {
  if (v.verdict === 'inconclusive' && ctx.nextSteps) {
    const steps = nextStepsMarkdown(v, ctx.nextSteps);
    if (steps.length) return steps;
  }
  return [`**What to do next**: ${escapeInline(nextStep(v))}`];
}

/**
 * The shared body. First what a release manager needs: the verdict, why in one sentence,
 * what to do next; then versions, links and problems; the statistics last.
 */
export function verdictMarkdown(ctx: SummaryContext): string {
  const v = ctx.verdict;
  const lines = [`## loadgate: ${VERDICT_LABEL[v.verdict]}`, '', escapeInline(whySentence(v)), '', ...nextLines(v, ctx), ''];
  const creep = creepHeadline(v);
  if (creep) lines.push(creep, '');
  const shifts = v.history ? changePointLines(v.history) : [];
  if (shifts.length) lines.push(`Where a check shifted (Apache Otava, over the recorded releases): ${shifts.map(escapeInline).join('; ')}.`, '');
  lines.push(
    `Baseline **${escapeInline(v.baseline.version)}** (${v.baseline.runs} run${v.baseline.runs === 1 ? '' : 's'}) vs candidate **${escapeInline(v.candidate.version)}** (${v.candidate.runs} run${v.candidate.runs === 1 ? '' : 's'}).`,
  );
  if (ctx.baselineReason) lines.push('', `Baseline choice: ${escapeInline(ctx.baselineReason)}`);
  const links = [ctx.reportUrl ? `[report pull request](${ctx.reportUrl})` : '', ctx.runUrl ? `[workflow run](${ctx.runUrl})` : ''].filter(Boolean);
  if (links.length) lines.push('', `Details: ${links.join(' · ')}`);
  if (v.problems.length) lines.push('', '### Why the gate could not judge', '', ...v.problems.map((p) => `- ${escapeInline(p)}`));
  lines.push('', '### Statistics', '', `The gate's own summary: ${escapeInline(v.summary)}`);
  const notPassing = sortChecks(v.checks).filter((c) => c.verdict !== 'pass' && !quietContext(c));
  if (notPassing.length) {
    lines.push(
      '',
      '#### Checks outside tolerance or undecided',
      '',
      ...notPassing.map((c) => `- **${escapeInline(c.test)} · ${escapeInline(c.metric)}** (${OUTCOME_LABEL[c.verdict]}): ${escapeInline(c.reason)}`),
    );
  }
  lines.push('', '#### All checks', '', failLinesLegend(v), '', verdictTable(v));
  return lines.join('\n');
}

/** The longest prefix of `text` that is at most `maxBytes` in UTF-8, never splitting a character. */
export function cutToBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  // A character cut in half decodes as U+FFFD at the end; drop it.
  return bytes
    .subarray(0, Math.max(0, maxBytes))
    .toString('utf8')
    .replace(/\uFFFD+$/, '');
}

/**
 * Cuts text to `limit` UTF-8 bytes at a line boundary and says so, pointing at `fullAt`.
 */
export function truncateForGitHub(text: string, limit = GITHUB_TEXT_LIMIT, fullAt = 'the report pull request'): string {
  const size = Buffer.byteLength(text, 'utf8');
  if (size <= limit) return text;
  const note = `\n\n_… cut to fit GitHub's ${limit}-byte limit (${size} bytes in full); see ${fullAt} for everything._`;
  let cut = cutToBytes(text, limit - Buffer.byteLength(note, 'utf8'));
  const lastNewline = cut.lastIndexOf('\n');
  if (lastNewline > cut.length / 2) cut = cut.slice(0, lastNewline);
  return cut + note;
}
