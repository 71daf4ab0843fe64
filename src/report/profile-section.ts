import type { TestComparison } from '../results/comparison.ts';
import type { FunctionChange, ProfileDiff } from '../results/profile.ts';
import { flameGraphFile } from './flame-graph.ts';

/**
 * "Where the CPU went" for one test: a sentence, at most ten functions, the differential
 * flame graph. CPU seconds per 1000 requests read as CPU milliseconds per request.
 */

const MAX_ROWS = 10;
const CONTEXT_ROWS = { grown: 3, shrunk: 2 };

/** A profile's name or path inside a table cell's code span. */
const code = (s: string): string => `\`${s.replace(/`/g, "'").replace(/\|/g, '\\|')}\``;
const ms = (v: number): string => (Math.abs(v) >= 10 ? v.toFixed(1) : Math.abs(v) >= 0.1 ? v.toFixed(3) : v.toPrecision(2));
const signed = (v: number): string => `${v >= 0 ? '+' : '−'}${ms(Math.abs(v))}`;
const pct = (v: number): string => `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(1)} %`;
const where = (f: FunctionChange): string => (f.file ? `${f.file}${f.line !== undefined ? `:${f.line}` : ''}` : '');

/**
 * The whole target's change and its parts always add up: the functions the table lists,
 * and every other function together. The whole is not judged: it moves with the sampling
 * of every function and, in an unbounded test, with the load each side held (each runs at
 * its own capacity), by several per cent between identical builds; each function is
 * judged on its own (ProfileDiff.rule).
 */
function sentence(diff: ProfileDiff, listed: readonly FunctionChange[]): string {
  const { baseline, candidate } = diff.totalPerKReq;
  const whole = `The target's CPU per request went from ${ms(baseline)} to ${ms(candidate)} ms (${signed(candidate - baseline)} ms, ${pct(((candidate - baseline) / baseline) * 100)})`;
  const pairs = `${diff.pairs} pair${diff.pairs === 1 ? '' : 's'} profiled`;
  const rest = `every other function together ${signed(otherChange(diff, listed))} ms`;
  const top = diff.grown.find((f) => f.significant);
  if (top) {
    const more = listed.filter((f) => f.significant).length - 1;
    return `${whole}, ${pairs}; the most grown function is ${code(top.name)} in ${code(where(top))}: ${signed(top.change)} ms per request of its own CPU (${pct(top.changePctOfTotal)} of the baseline's whole), ${top.candidateSharePct.toFixed(1)} % of the candidate's CPU; ${more > 0 ? `with the ${more} other significant function${more === 1 ? '' : 's'} below, ` : ''}${rest}, none of them significantly on its own.`;
  }
  const shrunk = diff.shrunk.find((f) => f.significant);
  if (shrunk)
    return `${whole}, ${pairs}; no function grew significantly, and ${code(shrunk.name)} shrank most (${signed(shrunk.change)} ms per request); ${rest} beside the functions below.`;
  return `${whole}, ${pairs}; no function's CPU per request changed significantly: the largest changes below are within the noise, and the whole moves with it.`;
}

/** Own CPU per request of every function the table does not list, both sides. */
function others(diff: ProfileDiff, listed: readonly FunctionChange[]): { baseline: number; candidate: number } {
  const sum = (side: 'baseline' | 'candidate') => listed.reduce((n, f) => n + f.selfPerKReq[side], 0);
  return { baseline: diff.totalPerKReq.baseline - sum('baseline'), candidate: diff.totalPerKReq.candidate - sum('candidate') };
}

function otherChange(diff: ProfileDiff, listed: readonly FunctionChange[]): number {
  const rest = others(diff, listed);
  return rest.candidate - rest.baseline;
}

function rows(diff: ProfileDiff): FunctionChange[] {
  const significant = [...diff.grown.filter((f) => f.significant), ...diff.shrunk.filter((f) => f.significant)];
  if (significant.length) return significant.slice(0, MAX_ROWS);
  return [...diff.grown.slice(0, CONTEXT_ROWS.grown), ...diff.shrunk.slice(0, CONTEXT_ROWS.shrunk)];
}

/** The listed functions, then one row for all the others: its Change column adds up to the whole's. */
function table(diff: ProfileDiff, listed: readonly FunctionChange[]): string {
  const lines = [
    '| Function | File | Own CPU ms per request | Change | Incl. callees | Share of candidate CPU | Significant |',
    '| --- | --- | ---: | ---: | ---: | ---: | --- |',
  ];
  for (const f of listed) {
    lines.push(
      `| ${code(f.name)} | ${code(where(f))} | ${ms(f.selfPerKReq.baseline)} → ${ms(f.selfPerKReq.candidate)} | ${signed(f.change)} | ` +
        `${ms(f.totalPerKReq.baseline)} → ${ms(f.totalPerKReq.candidate)} | ${f.candidateSharePct.toFixed(1)} % | ${f.significant ? 'yes' : 'no'} |`,
    );
  }
  const rest = others(diff, listed);
  const share = (rest.candidate / diff.totalPerKReq.candidate) * 100;
  lines.push(
    `| every other function | | ${ms(rest.baseline)} → ${ms(rest.candidate)} | ${signed(rest.candidate - rest.baseline)} | | ${share.toFixed(1)} % | not judged together |`,
  );
  lines.push(
    `| **the whole target** | | ${ms(diff.totalPerKReq.baseline)} → ${ms(diff.totalPerKReq.candidate)} | ${signed(diff.totalPerKReq.candidate - diff.totalPerKReq.baseline)} | | 100.0 % | not judged |`,
  );
  return lines.join('\n');
}

/** The section, or undefined when the test's runs carry no profiles on both sides. */
export function profileSection(test: TestComparison): string | undefined {
  const diff = test.profile;
  if (!diff) return undefined;
  const listed = rows(diff);
  const parts = [`### Where the CPU went - ${test.name}`, sentence(diff, listed)];
  if (diff.grown.length || diff.shrunk.length) parts.push(table(diff, listed));
  parts.push(`![Differential flame graph - ${test.name}](${flameGraphFile(test.name)})`);
  const notes = [`How a change counts: ${diff.rule}.`, ...diff.problems.map((p) => `Left out: ${p}.`)];
  parts.push(notes.map((n) => `<sub>${n.replace(/[<>]/g, (c) => (c === '<' ? '&lt;' : '&gt;'))}</sub>`).join('<br>'));
  return parts.join('\n\n');
}
