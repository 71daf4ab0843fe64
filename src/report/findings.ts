import type { Comparison } from '../results/comparison.ts';
import { fmtPct } from './format.ts';
import { handlerFindings } from './handlers.ts';
import type { Check } from '../results/verdict-schema.ts';

/**
 * The "Comments" section: generated findings, worst first, in the voice of the seed
 * reports ("a 1.34% reduction, which sits in the [-5%, +5%] interval of usual variance").
 */

const RANK: Record<Check['verdict'], number> = { fail: 0, inconclusive: 1, warn: 2, pass: 3 };

function badness(check: Check): number {
  if (check.deltaPct === null) return 0;
  return check.worse === 'higher' ? check.deltaPct : -check.deltaPct;
}

function beyondNoise(check: Check): string {
  if (check.verdict === 'fail') return 'beyond noise';
  if (check.verdict === 'inconclusive') return 'not separable from noise with these runs';
  if (check.method === 'noise-floor' && check.interval && check.deltaPct !== null) {
    const half = (check.interval[1] - check.interval[0]) / 2;
    return Math.abs(check.deltaPct) <= half ? `which sits in the ±${half}% interval of usual variance` : 'within tolerance';
  }
  return 'within tolerance';
}

function sentence(check: Check): string {
  const label = `${check.metric.replace(/ \(stable phase\)$/, '')} in the ${check.test} test`;
  if (check.deltaPct === null) return `${check.verdict === 'fail' ? '**Regression**' : '**Cannot judge**'}: ${label}: ${check.reason}.`;
  const moved = `${check.deltaPct >= 0 ? 'rose' : 'fell'} by ${fmtPct(check.deltaPct).replace(/^[+−]/, '')}`;
  if (check.verdict === 'pass') return `No significant change: ${label.toLowerCase()} ${moved}, ${beyondNoise(check)}.`;
  const status = { fail: '**Regression**', inconclusive: '**Cannot judge**', warn: '**Watch**' }[check.verdict];
  return `${status}: ${label.toLowerCase()} ${moved}: ${check.reason}.`;
}

export function findings(comparison: Comparison): string[] {
  const { verdict, tests } = comparison;
  const lines: string[] = [];
  for (const problem of verdict.problems) lines.push(`**Cannot judge**: ${problem}.`);
  const notable = [...verdict.checks]
    .filter((c) => c.verdict !== 'pass' || (c.id.endsWith('.supportedUsers') && c.deltaPct !== null))
    .sort((a, b) => RANK[a.verdict] - RANK[b.verdict] || badness(b) - badness(a) || a.id.localeCompare(b.id));
  for (const check of notable) lines.push(sentence(check));
  const passing = verdict.checks.filter((c) => c.verdict === 'pass' && !c.id.endsWith('.supportedUsers'));
  if (passing.length) {
    const worst = [...passing].sort((a, b) => badness(b) - badness(a) || a.id.localeCompare(b.id))[0] as Check;
    // Name the largest move in the worse direction: a reader scans for what got worse, not for improvements.
    const largest = badness(worst) > 0
      ? `the largest move in the worse direction is ${worst.metric.toLowerCase()} in the ${worst.test} test at ${fmtPct(worst.deltaPct ?? 0)}, ${beyondNoise(worst)}`
      : 'none of them moved in the worse direction';
    lines.push(`No evident changes in the other ${passing.length} checks (API and store times, errors, resources); ${largest}.`);
  }
  for (const test of tests) {
    lines.push(...handlerFindings(test));
    if (test.notMeasured.length) lines.push(`Not measured on this bench for the ${test.name} test: ${test.notMeasured.join(', ').toLowerCase()}.`);
  }
  return lines;
}
