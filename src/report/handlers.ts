import type { HandlerJudgement, TestComparison, TimingDelta, TimingDeltas } from '../results/comparison.ts';
import { fmtPct } from './format.ts';

/**
 * API handlers and store methods in the report: ranked by the time their change adds to a
 * run, each with its judgement, read as benchstat reads one ("~" for no significant change,
 * the p-value and how many pairs it rests on). The rule is in compare/handler-deltas.ts.
 */

/** How a judgement reads in a table cell. */
function judgementText(j: HandlerJudgement): string {
  switch (j.kind) {
    case 'significant':
      return `significant (p=${fmtP(j.p)}, n=${j.n})`;
    case 'not-significant':
      return `~ (p=${fmtP(j.p)}, n=${j.n})`;
    case 'untested':
      return `not tested (n=${j.n})`;
    case 'too-rare':
      return 'too rare to judge';
  }
}

/** The same, inside a sentence. */
function judgementPhrase(j: HandlerJudgement): string {
  switch (j.kind) {
    case 'significant':
      return `significant: p=${fmtP(j.p)} over ${j.n} pairs`;
    case 'not-significant':
      return `no significant change: p=${fmtP(j.p)} over ${j.n} pairs`;
    case 'untested':
      return `not tested: ${j.n} pair`;
    case 'too-rare':
      return 'too rare to judge';
  }
}

function fmtP(p: number): string {
  return p < 0.001 ? '<0.001' : p.toFixed(3);
}

function fmtMs(ms: number): string {
  const a = Math.abs(ms);
  const shown = a >= 600_000 ? `${(a / 60_000).toFixed(1)} min` : a >= 10_000 ? `${(a / 1000).toFixed(1)} s` : `${a >= 100 ? a.toFixed(0) : a.toFixed(1)} ms`;
  return `${ms >= 0 ? '+' : '−'}${shown}`;
}

function calls(n: number): string {
  return n >= 10 ? n.toFixed(0) : n.toFixed(1);
}

export function handlerHeader(baseline: string, candidate: string): string[] {
  return ['Name', 'Calls per run', `Mean ${baseline} (ms)`, `Mean ${candidate} (ms)`, 'Δ mean', 'Time added per run', `p99 (ms)`, 'Significance'];
}

export function handlerRow(d: TimingDelta): string[] {
  return [
    `\`${d.name}\``,
    calls(d.callsPerRun),
    d.baselineMs.toFixed(2),
    d.candidateMs.toFixed(2),
    fmtPct(d.deltaPct),
    fmtMs(d.addedMsPerRun),
    `${d.baselineP99Ms.toFixed(1)} → ${d.candidateP99Ms.toFixed(1)}`,
    judgementText(d.judgement),
  ];
}

/** The rule as the report states it under the tables. */
export function handlerRule(minCalls: number, alpha: number): string {
  return (
    `Ranked by the time each change adds to a run (calls per run × change in mean). ` +
    `Significance: a t-test of the change in mean across the baseline/candidate pairs (the log ratio in each pair), significant at p < ${alpha}; ` +
    `"~" is no significant change, n the pairs tested. A pair counts only when both of its runs made at least ${minCalls} calls; ` +
    `a handler with no such pair is too rare to judge and is never ranked.`
  );
}

function oneFinding(test: TestComparison, kind: string, lists: TimingDeltas): string | undefined {
  const top = lists.worsened[0];
  if (!top) return undefined;
  const significant = lists.worsened.find((d) => d.judgement.kind === 'significant');
  const detail = (d: TimingDelta) =>
    `\`${d.name}\` (${calls(d.callsPerRun)} calls per run, mean ${d.baselineMs.toFixed(1)} → ${d.candidateMs.toFixed(1)} ms, ${fmtPct(d.deltaPct)}, ${fmtMs(d.addedMsPerRun)} per run, ${judgementPhrase(d.judgement)})`;
  if (significant) return `In the ${test.name} test, the ${kind} adding the most time with a significant change is ${detail(significant)}.`;
  if (top.deltaPct < 10) return undefined;
  // "No significant slowdown" only when some handler could be tested (two pairs or more).
  const tested = lists.worsened.some((d) => d.judgement.kind === 'not-significant');
  if (!tested) return `In the ${test.name} test, the ${kind} adding the most time is ${detail(top)}.`;
  return `In the ${test.name} test, no ${kind} slowed significantly; the one adding the most time is ${detail(top)}.`;
}

/** Findings for the Comments section: per test, the handler and the store method that add the most time. */
export function handlerFindings(test: TestComparison): string[] {
  return [oneFinding(test, 'API handler', test.api), oneFinding(test, 'store method', test.store)].filter((x): x is string => x !== undefined);
}
