import { HANDLER_ALPHA, MIN_CALLS_PER_RUN, type Comparison, type TestComparison } from '../results/comparison.ts';
import { handlerHeader, handlerRow, handlerRule } from './handlers.ts';
import { fmtDelta, fmtPct } from './format.ts';
import type { Check, Verdict } from '../results/verdict-schema.ts';
import type { RunResult } from '../results/schema.ts';
import { describeDuration } from '../util/duration.ts';
import { capacitySection } from './capacity-curve.ts';
import { decisionSection } from './decision-section.ts';
import { findings, hasEvidenceOfChange } from './findings.ts';
import { disturbedComments } from './disturbed.ts';
import { nextStep, whySentence } from './headline.ts';
import type { RenderedGraph } from './graphs.ts';
import { machineSpeedRow } from './machine-speed.ts';
import { profileSection } from './profile-section.ts';
import { buildRows } from './builds.ts';
import { changedCodeSection } from './changed-code.ts';
import { creepHeadline, historySection } from './history-section.ts';
import { failLinesLegend, failLinesOf, MATERIAL_HEADER, materialCell, TOLERANCE_HEADER, toleranceCell } from './fail-lines.ts';

/** The report, in the shape of the seed comparison reports (title, comments, setup, results, graphs). */

const VERDICT_LINE: Record<Verdict, string> = {
  pass: '**Verdict: ✅ PASS**',
  fail: '**Verdict: ❌ FAIL**',
  inconclusive: '**Verdict: ⚠️ INCONCLUSIVE**',
};

const OUTCOME: Record<Check['verdict'], string> = { pass: '✅ pass', fail: '❌ fail', inconclusive: '⚠️ inconclusive', warn: '👀 warn' };

/** Escapes text for a table cell (pipes and newlines would break the table). */
function cell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const lines = [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`];
  for (const row of rows) lines.push(`| ${row.map(cell).join(' | ')} |`);
  return lines.join('\n');
}

function formatValue(value: number | null, unit: string): string {
  if (value === null) return 'n/a';
  if (unit === 'bytes') return `${(value / 1048576).toFixed(1)} MiB`;
  if (unit === 'users') return value >= 100 ? String(Math.round(value)) : value.toFixed(1);
  if (unit === '% of requests') return `${value.toFixed(4)}%`;
  if (unit === '%') return `${value.toFixed(1)}%`;
  if (unit === '% per user') return `${value.toPrecision(3)}% per user`;
  if (unit === 'ms') return `${value.toFixed(1)} ms`;
  return value.toFixed(2);
}

function formatInterval(check: Check): string {
  if (!check.interval) return 'n/a';
  const method = check.method === 'sprt' ? 'noise model' : check.method === 'noise-floor' ? 'noise floor' : check.method === 't-interval' ? 't' : 'Poisson';
  return `[${fmtPct(check.interval[0])}, ${fmtPct(check.interval[1])}] (${method})`;
}

function firstRun(c: Comparison): RunResult {
  return (c.tests[0]?.baseline[0] ?? c.tests[0]?.candidate[0]) as RunResult;
}

/** Component versions from both sides' fingerprints; a component whose version differs (the target) shows both. */
function componentVersions(c: Comparison): [string, string][] {
  const side = (pick: (t: Comparison['tests'][number]) => RunResult[]) => c.tests.flatMap(pick)[0]?.bench.versions ?? {};
  const baseline = side((t) => t.baseline);
  const candidate = side((t) => t.candidate);
  const names = [...new Set([...Object.keys(baseline), ...Object.keys(candidate)])].sort((a, b) => a.localeCompare(b));
  return names.map((name) => {
    const b = baseline[name];
    const k = candidate[name];
    if (b === undefined || k === undefined || b === k) return [name, (b ?? k) as string];
    return [name, `${b} (baseline), ${k} (candidate)`];
  });
}

function setupSection(c: Comparison): string {
  const rows: string[][] = [];
  const run = firstRun(c);
  const bench = run.bench;
  rows.push(['Target', run.target.system]);
  rows.push(['Versions', `\`${c.verdict.baseline.version}\` (baseline) vs \`${c.verdict.candidate.version}\` (candidate)`]);
  rows.push(...buildRows(c.verdict));
  rows.push(['Bench', bench.kind === 'aws' ? 'AWS' : 'local (every component a process on loopback)']);
  for (const [role, runs] of [
    ['baseline', c.tests.flatMap((t) => t.baseline)],
    ['candidate', c.tests.flatMap((t) => t.candidate)],
  ] as const) {
    const quota = runs[0]?.target.cpuQuota;
    if (quota !== undefined) rows.push([`CPU quota (${role})`, `${quota} of the target cores (cgroup CPU quota): a deliberately slowed target`]);
  }
  const speed = machineSpeedRow(c.tests, c.verdict.checks);
  if (speed) rows.push(speed);
  if (bench.host) {
    rows.push(['Host', `${bench.host.cpuModel}, ${bench.host.cores} cores, ${(bench.host.memoryBytes / 2 ** 30).toFixed(0)} GiB, kernel ${bench.host.kernel}`]);
  }
  for (const [role, value] of Object.entries(bench.instances ?? {}).sort(([a], [b]) => a.localeCompare(b))) rows.push([role, value]);
  for (const [component, version] of componentVersions(c)) rows.push([component, version]);
  if (bench.dataset) rows.push(['Dataset', bench.dataset]);
  for (const test of c.tests) {
    const t = (test.baseline[0] ?? (test.candidate[0] as RunResult)).test;
    if (t.type === 'bounded') {
      rows.push([`Bounded (${t.name}) - number of users`, String(t.users)]);
      rows.push([
        `Bounded (${t.name}) - duration`,
        `${describeDuration(t.durationSec)} (ramp-up ${describeDuration(t.rampUpSec)}, excluded from the measurements)`,
      ]);
    } else {
      rows.push([`Unbounded (${t.name}) - MaxActiveUsers`, String(t.maxUsers)]);
      rows.push([
        `Unbounded (${t.name}) - users added/removed`,
        `+${t.usersIncrement}/−${t.usersDecrement} every ${describeDuration(t.restSec)}${t.initialUsers ? `, starting from ${t.initialUsers}` : ''}`,
      ]);
      rows.push([`Unbounded (${t.name}) - stability window`, describeDuration(t.stabilityWindowSec)]);
    }
  }
  // Runs are counted per test: "2 baseline runs" over a bounded and an unbounded test is one of each.
  const plural = (n: number, side: string) => `${n} ${side} run${n === 1 ? '' : 's'}`;
  rows.push([
    'Runs per test',
    c.tests.map((t) => `${t.name}: ${plural(t.baseline.length, 'baseline')}, ${plural(t.candidate.length, 'candidate')}`).join('; '),
  ]);
  const reconstructed = [...c.tests.flatMap((t) => [...t.baseline, ...t.candidate])].find((r) => r.provenance.kind === 'reconstructed');
  if (reconstructed) rows.push(['Provenance', `Reconstructed: ${reconstructed.provenance.note ?? 'rebuilt from a published report'}`]);
  return `## Setup\n\n${table(['Setting', 'Value'], rows)}`;
}

function linksSection(c: Comparison): string | undefined {
  const links: string[] = [];
  for (const test of c.tests) {
    for (const run of [...test.baseline, ...test.candidate]) {
      for (const link of run.links) links.push(`- [${cell(link.title)}](${link.url}) (${run.target.version}, ${test.name} #${run.repeat})`);
    }
  }
  return links.length ? `### Grafana\n\nSnapshots of the Grafana dashboards.\n\n${links.join('\n')}` : undefined;
}

/** A check's result cell: a context check that moved within its noise shows no evidence of change, not a warning. */
function resultCell(ch: Check): string {
  if (!ch.gating && ch.verdict === 'warn' && !hasEvidenceOfChange(ch)) return 'no evidence of change';
  return OUTCOME[ch.verdict];
}

function checksSection(c: Comparison): string {
  const rows = c.verdict.checks.map((ch) => {
    const lines = failLinesOf(c.verdict, ch);
    return [
      ch.metric + (ch.speed?.adjusted ? ' (at one machine speed)' : '') + (ch.gating ? '' : ' (context)'),
      ch.test,
      formatValue(ch.baseline, ch.unit),
      formatValue(ch.candidate, ch.unit),
      ch.deltaPct === null ? (fmtDelta(ch) === 'not judged' ? 'n/a' : fmtDelta(ch)) : fmtPct(ch.deltaPct),
      formatInterval(ch),
      toleranceCell(lines),
      materialCell(lines),
      resultCell(ch),
    ];
  });
  const header = ['Check', 'Test', c.verdict.baseline.version, c.verdict.candidate.version, 'Delta', 'Interval', TOLERANCE_HEADER, MATERIAL_HEADER, 'Result'];
  return `### Checks\n\n${failLinesLegend(c.verdict)}\n\n${table(header, rows)}`;
}

function supportedUsersSection(c: Comparison): string | undefined {
  const rows: string[][] = [];
  const checks = c.verdict.checks.filter((x) => x.id.endsWith('.supportedUsers'));
  // As measured first, as release managers compare with past reports; then, when the check
  // was judged at one machine speed, the change it was judged by.
  const adjusted = checks.some((ch) => ch.speed?.adjusted);
  for (const ch of checks) {
    const s = ch.speed?.adjusted ? ch.speed : undefined;
    const measured = s
      ? [formatValue(s.rawBaseline, 'users'), formatValue(s.rawCandidate, 'users'), fmtPct(s.rawDeltaPct)]
      : [formatValue(ch.baseline, 'users'), formatValue(ch.candidate, 'users'), ch.deltaPct === null ? 'n/a' : fmtPct(ch.deltaPct)];
    rows.push([ch.test, ...measured, ...(adjusted ? [s && ch.deltaPct !== null ? fmtPct(ch.deltaPct) : 'n/a'] : [])]);
  }
  if (!rows.length) return undefined;
  const title = rows.length === 1 ? 'Supported users in unbounded test' : 'Supported users in unbounded tests';
  return `### ${title}\n\n${table(['Test', c.verdict.baseline.version, c.verdict.candidate.version, 'Delta', ...(adjusted ? ['Delta at one machine speed'] : [])], rows)}`;
}

function errorsSection(c: Comparison): string {
  const rows: string[][] = [];
  const sum = (runs: RunResult[], f: (r: RunResult) => number) => runs.reduce((s, r) => s + f(r), 0);
  for (const test of c.tests) {
    const be = sum(test.baseline, (r) => r.totals.errors);
    const ce = sum(test.candidate, (r) => r.totals.errors);
    const bt = sum(test.baseline, (r) => r.totals.timeouts);
    const ctm = sum(test.candidate, (r) => r.totals.timeouts);
    const br = sum(test.baseline, (r) => r.totals.requests);
    const cr = sum(test.candidate, (r) => r.totals.requests);
    const rate = (e: number, n: number) => (n ? `${((100 * e) / n).toFixed(4)}%` : 'n/a');
    rows.push([
      test.name,
      String(be),
      String(ce),
      be ? fmtPct(((ce - be) / be) * 100) : ce ? 'new' : '0',
      `${rate(be, br)} → ${rate(ce, cr)}`,
      `${bt} → ${ctm}`,
    ]);
  }
  return `### Number of errors\n\nCounts are totals over each side's runs; the gate judges the rate per request, which does not depend on how long a test ran.\n\n${table(
    ['Test', c.verdict.baseline.version, c.verdict.candidate.version, 'Delta', 'Error rate', 'Timeouts'],
    rows,
  )}`;
}

function timingsSection(test: TestComparison, c: Comparison, listing: { minDeltaPct: number; minDeltaMs: number }): string {
  const header = handlerHeader(c.verdict.baseline.version, c.verdict.candidate.version);
  const parts: string[] = [];
  const limit = 15;
  for (const [kind, lists] of [
    ['API handlers', test.api],
    ['Store methods', test.store],
  ] as const) {
    for (const [label, list] of [
      ['worsened', lists.worsened],
      ['improved', lists.improved],
    ] as const) {
      const more = list.length > limit ? ` (top ${limit} of ${list.length})` : '';
      parts.push(
        list.length
          ? `**${kind}, ${label}**${more}\n\n${table(header, list.slice(0, limit).map(handlerRow))}`
          : `**${kind}, ${label}**: none beyond ${listing.minDeltaPct}% and ${listing.minDeltaMs} ms in mean.`,
      );
    }
    if (lists.rare.length) {
      const shown = lists.rare.slice(0, limit).map((d) => `\`${cell(d.name)}\` (${d.callsPerRun.toFixed(1)} calls per run, ${fmtPct(d.deltaPct)})`);
      const more = lists.rare.length > limit ? `, and ${lists.rare.length - limit} more` : '';
      parts.push(`**${kind}, too rare to judge** (fewer than ${MIN_CALLS_PER_RUN} calls in a run): ${shown.join(', ')}${more}.`);
    }
  }
  return `### API and store times - ${test.name}\n\n${handlerRule(MIN_CALLS_PER_RUN, HANDLER_ALPHA)} Changes in mean smaller than ${listing.minDeltaPct}% or ${listing.minDeltaMs} ms are not listed.\n\n${parts.join('\n\n')}`;
}

function graphsSection(test: TestComparison, graphs: readonly RenderedGraph[]): string | undefined {
  const mine = graphs.filter((g) => g.file.startsWith(`graphs/${test.name}_`));
  if (!mine.length) return undefined;
  const img = (g: RenderedGraph) => `![${g.title}](${g.file})`;
  const lines: string[] = [];
  for (let i = 0; i < mine.length; i += 2) {
    const left = mine[i] as RenderedGraph;
    const right = mine[i + 1];
    lines.push(`| ${img(left)} | ${right ? img(right) : ''} |`);
    if (i === 0) lines.push('| --- | --- |');
  }
  const kind = test.type === 'bounded' ? 'Bounded' : 'Unbounded';
  return `### Graphs - ${kind} (${test.name})\n\nThe grey band is the ramp-up, before the measured window of every run.\n\n${lines.join('\n')}`;
}

/** Under a test's profile: which of its grown functions changed, or why that is not known here. */
function changedCodeOf(test: TestComparison, baseline: string, candidate: string): string | undefined {
  const changed = test.changedCode;
  if (!changed) return undefined;
  if ('unavailable' in changed) return `### The changed code behind the hot spots - ${test.name}\n\n${changed.unavailable}`;
  return changedCodeSection({ test: test.name, baseline, candidate, functions: changed.functions }).trimEnd() || undefined;
}

export function renderMarkdown(
  comparison: Comparison,
  graphs: readonly RenderedGraph[],
  listing: { minDeltaPct: number; minDeltaMs: number },
  notes: readonly string[] = [],
): string {
  const v = comparison.verdict;
  const sections: string[] = [];
  sections.push(`# Performance Comparison \`${v.baseline.version}\` vs \`${v.candidate.version}\``);
  sections.push(VERDICT_LINE[v.verdict]);
  sections.push(`**Why**: ${whySentence(v)}`);
  const creep = creepHeadline(v);
  if (creep) sections.push(creep);
  sections.push(`**What to do next**: ${nextStep(v)}`);
  const comments = [...notes, ...disturbedComments(v), ...findings(comparison)];
  sections.push(`## Comments\n\n${comments.map((l) => `- ${l}`).join('\n')}`);
  sections.push(setupSection(comparison));
  const results: string[] = ['## Results'];
  const links = linksSection(comparison);
  if (links) results.push(links);
  const users = supportedUsersSection(comparison);
  if (users) results.push(users);
  results.push(errorsSection(comparison));
  results.push(checksSection(comparison));
  for (const test of comparison.tests) results.push(timingsSection(test, comparison, listing));
  for (const section of comparison.tests.map(capacitySection)) if (section) results.push(section);
  for (const test of comparison.tests) {
    const section = profileSection(test);
    if (section) results.push(section);
    const changed = changedCodeOf(test, v.baseline.version, v.candidate.version);
    if (changed) results.push(changed);
  }
  for (const test of comparison.tests) {
    const g = graphsSection(test, graphs);
    if (g) results.push(g);
  }
  sections.push(results.join('\n\n'));
  const history = historySection(v, graphs);
  if (history) sections.push(history);
  sections.push(decisionSection(v));
  sections.push(
    '---\n\nGenerated by loadgate from the run results in `results/`; the decision for every check is in `verdict.json`. ' +
      'Each check is decided by a sequential probability ratio test on the log ratio of candidate to baseline, pair by pair (see How the gate decided).',
  );
  return `${sections.join('\n\n')}\n`;
}
