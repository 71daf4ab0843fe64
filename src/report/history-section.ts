import type { Creep, HistoryView } from '../results/creep-schema.ts';
import type { VerdictFile } from '../results/verdict-schema.ts';
import { fmtPct } from './format.ts';
import { historyGraphFile } from './history-graph.ts';
import type { RenderedGraph } from './graphs.ts';

/**
 * The report's view of the releases before this one: the creep check (its line near the
 * verdict, its checks here) and each gating check's series with the releases where Otava
 * found a shift.
 */

const ICON: Record<Creep['verdict'], string> = { pass: '✅', fail: '❌', inconclusive: '⚠️', skipped: '➖' };

/** The line under the verdict: "❌ Creep since 10.11.0: each step passed; the change since 10.11.0 is −11.4 %…". */
export function creepHeadline(v: VerdictFile): string | undefined {
  const c = v.creep;
  if (!c) return undefined;
  return `**Creep${c.anchor ? ` since ${c.anchor}` : ''}**: ${ICON[c.verdict]} ${c.line}`;
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

function creepPart(c: Creep): string {
  const lines = [`### The change since ${c.anchor ?? 'the anchor'} (creep)`, ''];
  lines.push(
    `The anchor is \`${c.setting}\`${c.anchor && c.anchor !== c.setting ? ` (the last release matching it: ${c.anchor})` : ''}. ${creepHeadline({ creep: c } as VerdictFile)}`,
  );
  if (c.chain.length)
    lines.push(
      '',
      `Chained through ${c.chain.length - 1} recorded steps: ${c.chain.join(' → ')}. The steps' log ratios add, and so do their variances, so the interval widens with every step.`,
    );
  if (c.direct)
    lines.push(
      '',
      `The chain could not decide every check, so the gate measured the anchor against the candidate directly: ${c.direct.pairs} ${c.direct.pairs === 1 ? 'pair' : 'pairs'}, ${c.direct.verdict} (its report: [${c.direct.report}/README.md](${c.direct.report}/README.md)).`,
    );
  lines.push(
    '',
    `Each stage (the chain, then the direct measurement) keeps half of each error rate, so the creep check keeps the gate's: ${c.alpha * 100} % false fails, ${c.beta * 100} % false passes per check.`,
  );
  if (c.checks.length) {
    lines.push('', '| Check | Test | Change since the anchor | Interval | How | Result | Why |', '| --- | --- | --- | --- | --- | --- | --- |');
    for (const k of c.checks) {
      const interval = k.interval ? `[${fmtPct(k.interval[0])}, ${fmtPct(k.interval[1])}]` : 'n/a';
      lines.push(
        `| ${cell(k.metric)} | ${cell(k.test)} | ${k.deltaPct === null ? 'n/a' : fmtPct(k.deltaPct)} | ${interval} | ${k.method} | ${k.verdict} | ${cell(k.reason)} |`,
      );
    }
  }
  return lines.join('\n');
}

/** "supported users (unbounded) shifted −6.1 % at 1.162.0 (from 1.161.0, p 0.0002)", per change point. */
export function changePointLines(h: HistoryView): string[] {
  return h.series.flatMap((s) =>
    s.changePoints.map(
      (c) =>
        `${s.metric.charAt(0).toLowerCase()}${s.metric.slice(1)} (${s.test}) shifted ${fmtPct(c.changePct)} at ${c.release} (from ${c.previous}, p ${c.pValue.toPrecision(2)})`,
    ),
  );
}

function seriesPart(h: HistoryView, graphs: readonly RenderedGraph[]): string {
  const lines = ['### Each gating check since earlier releases', ''];
  lines.push(
    `From the history in \`${h.source}\` (relative to this report; ${h.records} recorded gates): ${h.releases.length ? h.releases.join(' → ') : 'no recorded line to this candidate yet'}.`,
  );
  const found = changePointLines(h);
  if ('unavailable' in h.otava) lines.push('', `Change points: not looked for: ${h.otava.unavailable}.`);
  else {
    const rule = `Apache Otava ${h.otava.version}, p ≤ ${h.otava.maxPValue}, shifts of at least the check's tolerance`;
    lines.push('', found.length ? `Change points (${rule}):` : `Change points (${rule}): none.`);
    lines.push(...found.map((f) => `- ${f}`));
  }
  const mine = h.series.map((s) => graphs.find((g) => g.file === historyGraphFile(s.id))).filter((g): g is RenderedGraph => g !== undefined);
  if (mine.length) {
    lines.push('');
    for (let i = 0; i < mine.length; i += 2) {
      const [left, right] = [mine[i] as RenderedGraph, mine[i + 1]];
      lines.push(`| ![${left.title}](${left.file}) | ${right ? `![${right.title}](${right.file})` : ''} |`);
      if (i === 0) lines.push('| --- | --- |');
    }
  }
  return lines.join('\n');
}

/** The section, when the gate had a creep check or a history. */
export function historySection(v: VerdictFile, graphs: readonly RenderedGraph[]): string | undefined {
  const parts: string[] = [];
  if (v.creep) parts.push(creepPart(v.creep));
  if (v.history) parts.push(seriesPart(v.history, graphs));
  return parts.length ? `## Since earlier releases\n\n${parts.join('\n\n')}` : undefined;
}
