import type { Comparison } from '../results/comparison.ts';
import { fmtPct } from './format.ts';
import { handlerFindings } from './handlers.ts';
import { metricInSentence } from './headline.ts';
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
  if (check.verdict === 'warn') return 'with no evidence of change';
  if (check.method === 'noise-floor' && check.interval && check.deltaPct !== null) {
    const half = (check.interval[1] - check.interval[0]) / 2;
    return Math.abs(check.deltaPct) <= half ? `which sits in the ±${half}% interval of usual variance` : `inside its ${check.tolerancePct}% tolerance`;
  }
  return `inside its ${check.tolerancePct}% tolerance`;
}

/**
 * A change in the worse direction that the noise does not explain: the interval lies wholly
 * on the worse side of zero, or a rate went from none to some. A context check is shown only
 * with such evidence; one that merely stayed undecided is no news.
 */
export function hasEvidenceOfChange(check: Check): boolean {
  if (check.deltaPct === null) return check.baseline === 0 && check.candidate !== null && check.candidate > 0;
  if (!check.interval) return false;
  return check.worse === 'higher' ? check.interval[0] > 0 : check.interval[1] < 0;
}

/** A check's reason without the test statistic (the statistics section has the rule and its bounds). */
function plainReason(reason: string): string {
  return reason.replace(/\s*\([^()]*Λ[^()]*\)/g, '');
}

function sentence(check: Check): string {
  const label = `${metricInSentence(check.metric)} in the ${check.test} test`;
  if (check.deltaPct === null) return `${check.verdict === 'fail' ? '**Regression**' : '**Cannot judge**'}: ${label}: ${plainReason(check.reason)}.`;
  const moved = check.deltaPct === 0 ? 'did not change' : `${check.deltaPct > 0 ? 'rose' : 'fell'} by ${fmtPct(check.deltaPct).replace(/^[+−]/, '')}`;
  if (check.verdict === 'pass') return `No significant change: ${label} ${moved}, ${beyondNoise(check)}.`;
  const status = { fail: '**Regression**', inconclusive: '**Cannot judge**', warn: '**Watch**' }[check.verdict];
  return `${status}: ${label} ${moved}: ${plainReason(check.reason)}.`;
}

export function findings(comparison: Comparison): string[] {
  const { verdict, tests } = comparison;
  const lines: string[] = [];
  for (const problem of verdict.problems) lines.push(`**Cannot judge**: ${problem}.`);
  // A context check that stayed undecided, with no evidence of change, is counted with the quiet ones.
  const quiet = (c: Check) => c.verdict === 'pass' || (c.verdict === 'warn' && !c.gating && !hasEvidenceOfChange(c));
  // Below the minimum of pairs nothing is judged yet: one line for all the undecided checks, not one each.
  const { pairs, minRepeats } = verdict.decision;
  const early = pairs < minRepeats && !verdict.problems.length ? verdict.checks.filter((c) => c.verdict === 'inconclusive') : [];
  if (early.length) {
    const worst = [...early].sort((a, b) => badness(b) - badness(a) || a.id.localeCompare(b.id))[0] as Check;
    const largest =
      badness(worst) > 0
        ? `the largest move in the worse direction so far is ${metricInSentence(worst.metric)} in the ${worst.test} test at ${fmtPct(worst.deltaPct ?? 0)}`
        : 'none moved in the worse direction so far';
    lines.push(`**Not judged yet**: ${early.length} checks wait for the minimum of ${minRepeats} pairs (${pairs} so far); ${largest}.`);
  }
  const notable = [...verdict.checks]
    .filter((c) => !early.includes(c))
    .filter((c) => !quiet(c) || (c.id.endsWith('.supportedUsers') && c.deltaPct !== null))
    .sort((a, b) => RANK[a.verdict] - RANK[b.verdict] || badness(b) - badness(a) || a.id.localeCompare(b.id));
  for (const check of notable) lines.push(sentence(check));
  const passing = verdict.checks.filter((c) => quiet(c) && !c.id.endsWith('.supportedUsers'));
  if (passing.length) {
    const worst = [...passing].sort((a, b) => badness(b) - badness(a) || a.id.localeCompare(b.id))[0] as Check;
    // Name the largest move in the worse direction: a reader scans for what got worse, not for improvements.
    const largest =
      badness(worst) > 0
        ? `the largest move in the worse direction is ${metricInSentence(worst.metric)} in the ${worst.test} test at ${fmtPct(worst.deltaPct ?? 0)}, ${beyondNoise(worst)}`
        : 'none of them moved in the worse direction';
    lines.push(`No evident changes in the other ${passing.length} checks (API and store times, errors, resources); ${largest}.`);
  }
  for (const test of tests) {
    lines.push(...handlerFindings(test));
    if (test.notMeasured.length) lines.push(`Not measured on this bench for the ${test.name} test: ${test.notMeasured.join(', ').toLowerCase()}.`);
  }
  return lines;
}
