import { chainCheck, chooseAnchor, type ChainStep } from '../history/chain.ts';
import type { HistoryRecord } from '../history/record.ts';
import { fmtPct } from '../report/format.ts';
import type { Creep, CreepCheck } from '../results/creep-schema.ts';
import type { Check, VerdictFile } from '../results/verdict-schema.ts';
import { normalQuantile } from '../util/stats.ts';
import { emptySums, materialLog, sprtRule, studentLlr, type ErrorRates, type SprtRule } from './sequential.ts';

/**
 * The creep check: the cumulative change from an anchor release to the candidate, judged
 * by the step check's own rule (sequential.ts) at the step check's error rates.
 *
 * - Chained: the recorded steps' log ratios add, and so do their variances (chainCheck),
 *   so the chained change is one difference d with variance V = Σ sᵢ², and a noise prior
 *   of scale V and the steps' Welch–Satterthwaite degrees of freedom. Λ is then the step
 *   rule's Student-t likelihood ratio for one difference (studentLlr with n = 1), and its
 *   bounds are the step rule's (sprtRule). Every step adds its variance, so the interval
 *   widens with the chain's length: a long chain of small steps decides only a change far
 *   from both bounds.
 * - Direct: when the chain cannot decide, the anchor measured against the candidate by a
 *   gate of its own (src/run/creep-duet.ts): usually one duet, more while undecided, with
 *   one duet's noise whatever the chain's length.
 *
 * The two stages split each rate in halves: a check fails its chained stage at most
 * α/2 of the time at no change and its direct stage at most α/2 (Markov's inequality on
 * exp(Λ), whose mean is 1 under "no change": the bound Ville's inequality gives the step
 * check at any pair), so the creep check keeps α; a material change passes at most β the
 * same way. α is the check's share of the gate's false-fail budget, as in the step check.
 */

export interface CreepInputs {
  /** The config's creep.anchor. */
  setting: string;
  /** The history before this gate, read and checked. */
  history: readonly HistoryRecord[];
  /** The anchor-against-candidate gate's verdict, when one ran, with its report directory relative to this one. */
  direct?: { verdict: VerdictFile; report: string };
}

/** The creep stage's rates: each stage keeps half of the check's. */
function creepStageRates(rates: ErrorRates): ErrorRates {
  return { falseFail: rates.falseFail / 2, falsePass: rates.falsePass / 2 };
}

/** The gate's step as a chain step: its checks' estimates where it stopped. */
function stepOf(verdict: VerdictFile): ChainStep {
  const checks = verdict.checks.flatMap((c) =>
    c.estimate && c.estimate.se > 0
      ? [{ id: c.id, metric: c.metric, test: c.test, worse: c.worse, gating: c.gating, tolerancePct: c.tolerancePct, ...c.estimate }]
      : [],
  );
  return { baseline: verdict.baseline.version, candidate: verdict.candidate.version, checks };
}

/** Each gating relative check's chained stage: its bounds (half its step share) and its material change. */
interface CreepTarget {
  check: Check;
  rule: SprtRule;
  m: number;
  materialPct: number;
}

function targetsOf(verdict: VerdictFile): CreepTarget[] {
  const half = creepStageRates({ falseFail: verdict.decision.alpha, falsePass: verdict.decision.beta });
  return verdict.checks.flatMap((check) => {
    const share = verdict.decision.detectable.find((d) => d.metric === check.metric && d.test === check.test);
    if (!check.gating || !check.estimate || !share) return [];
    // The check's share of the budget scaled as the gate's: α_i/α of the creep stage's α.
    const rule = sprtRule((share.alpha * half.falseFail) / verdict.decision.alpha, half.falsePass);
    return [{ check, rule, m: materialLog(share.materialPct, check.worse), materialPct: share.materialPct }];
  });
}

/** The chained stage of one check: its state, Λ and interval; or why it cannot be formed. */
export function judgeChained(
  steps: readonly ChainStep[],
  id: string,
  worse: 'lower' | 'higher',
  m: number,
  rule: SprtRule,
  confidence: number,
):
  { state: 'pass' | 'fail' | 'undecided'; logRatio: number; variance: number; llr: number; passLlr: number; interval: [number, number] } | { missing: string } {
  const chained = chainCheck(steps, id);
  if ('missing' in chained) return chained;
  const bad = (worse === 'higher' ? 1 : -1) * chained.logRatio;
  const sums = { ...emptySums(), n: 1, sum: bad, sumSq: bad * bad };
  const l = studentLlr(sums, m, { sigmaLog: Math.sqrt(chained.variance / 2), df: chained.df });
  const state = l.fail >= rule.upper ? 'fail' : l.pass <= rule.lower ? 'pass' : 'undecided';
  const half = normalQuantile(1 - (1 - confidence) / 2) * Math.sqrt(chained.variance);
  const interval: [number, number] = [Math.expm1(chained.logRatio - half) * 100, Math.expm1(chained.logRatio + half) * 100];
  return { state, logRatio: chained.logRatio, variance: chained.variance, llr: l.fail, passLlr: l.pass, interval };
}

/**
 * The creep check of a gate whose step verdict is `step`. Undefined state is never a
 * pass: a check the chain cannot decide takes the direct duet's verdict, and without one
 * stays inconclusive.
 */
export function judgeCreep(step: VerdictFile, inputs: CreepInputs, confidence: number): Creep {
  const rates = creepStageRates({ falseFail: step.decision.alpha, falsePass: step.decision.beta });
  const base = { setting: inputs.setting, alpha: step.decision.alpha, beta: step.decision.beta };
  const { baseline, candidate } = { baseline: step.baseline.version, candidate: step.candidate.version };
  const choice = chooseAnchor(inputs.setting, inputs.history, baseline, candidate);
  if (choice.anchor === null) return { ...base, anchor: null, verdict: 'skipped', line: `not judged: ${choice.why}`, chain: [], checks: [] };
  if (choice.anchor === baseline || choice.anchor === candidate) {
    return {
      ...base,
      anchor: choice.anchor,
      verdict: 'skipped',
      line: `the anchor ${choice.anchor} is this gate's ${choice.anchor === baseline ? 'baseline' : 'candidate'}: the step check is the creep check`,
      chain: [],
      checks: [],
    };
  }
  const steps: ChainStep[] | null = choice.steps ? [...choice.steps, stepOf(step)] : null;
  const targets = targetsOf(step);
  const checks = targets.map((t) => creepCheck(t, steps, choice.why, inputs.direct?.verdict, confidence));
  const verdict = checks.some((c) => c.verdict === 'fail') ? 'fail' : checks.length && checks.every((c) => c.verdict === 'pass') ? 'pass' : 'inconclusive';
  const chain = steps ? [steps[0]?.baseline as string, ...steps.map((s) => s.candidate)] : [];
  const eachPassed = step.verdict === 'pass' && (choice.steps ?? []).every((r) => r.verdict === 'pass');
  return {
    ...base,
    anchor: choice.anchor,
    verdict,
    line: creepLine(verdict, choice.anchor, checks, eachPassed && steps !== null, targets),
    chain,
    ...(inputs.direct ? { direct: { pairs: inputs.direct.verdict.decision.pairs, report: inputs.direct.report, verdict: inputs.direct.verdict.verdict } } : {}),
    alpha: rates.falseFail * 2,
    beta: rates.falsePass * 2,
    checks,
  };
}

function creepCheck(
  t: CreepTarget,
  steps: readonly ChainStep[] | null,
  noPath: string | undefined,
  direct: VerdictFile | undefined,
  confidence: number,
): CreepCheck {
  const { check, rule, m, materialPct } = t;
  const head = { id: check.id, metric: check.metric, test: check.test, worse: check.worse };
  const chained = steps ? judgeChained(steps, check.id, check.worse, m, rule, confidence) : { missing: noPath ?? 'no recorded path' };
  const mat = `the ${materialPct}% material change`;
  if (!('missing' in chained) && chained.state !== 'undecided') {
    const delta = Math.expm1(chained.logRatio) * 100;
    const reason =
      chained.state === 'fail'
        ? `${fmtPct(delta)} over ${steps!.length} steps: evidence for ${mat} (Λ ${chained.llr.toFixed(2)} ≥ ${rule.upper.toFixed(2)})`
        : `${fmtPct(delta)} over ${steps!.length} steps: evidence of no change beyond the ${check.tolerancePct}% tolerance (Λ ${chained.passLlr.toFixed(2)} ≤ ${rule.lower.toFixed(2)})`;
    return { ...head, deltaPct: delta, interval: chained.interval, method: 'chained', verdict: chained.state, reason };
  }
  const why =
    'missing' in chained
      ? chained.missing
      : `${fmtPct(Math.expm1(chained.logRatio) * 100)} over ${steps!.length} steps, undecided (${rule.lower.toFixed(2)} < Λ ${chained.llr.toFixed(2)} < ${rule.upper.toFixed(2)}): the chained interval is too wide`;
  const measured = direct?.checks.find((c) => c.id === check.id);
  if (!measured) {
    const chainedFigures =
      'missing' in chained ? { deltaPct: null, interval: null } : { deltaPct: Math.expm1(chained.logRatio) * 100, interval: chained.interval };
    return { ...head, ...chainedFigures, method: 'missing' in chained ? 'none' : 'chained', verdict: 'inconclusive', reason: `${why}; no direct measurement` };
  }
  const verdict = measured.verdict === 'pass' || measured.verdict === 'fail' ? measured.verdict : 'inconclusive';
  return {
    ...head,
    deltaPct: measured.deltaPct,
    interval: measured.interval,
    method: 'direct',
    verdict,
    reason: `${why}; measured directly: ${measured.reason}`,
  };
}

/** The check the line names: a failed one nearest its material change, else supported users, else the one that moved most toward failing. */
function headline(checks: readonly CreepCheck[], targets: readonly CreepTarget[]): CreepCheck | undefined {
  const toward = (c: CreepCheck) =>
    c.deltaPct === null ? -Infinity : ((c.worse === 'higher' ? 1 : -1) * c.deltaPct) / (targets.find((t) => t.check.id === c.id)?.check.tolerancePct || 1);
  const rank = (list: readonly CreepCheck[]) =>
    [...list].sort((a, b) => Number(b.id.endsWith('.supportedUsers')) - Number(a.id.endsWith('.supportedUsers')) || toward(b) - toward(a))[0];
  const failed = checks.filter((c) => c.verdict === 'fail');
  return failed.length ? [...failed].sort((a, b) => toward(b) - toward(a))[0] : rank(checks);
}

function creepLine(verdict: Creep['verdict'], anchor: string, checks: readonly CreepCheck[], eachPassed: boolean, targets: readonly CreepTarget[]): string {
  const lead = headline(checks, targets);
  if (!lead) return `not judged: no gating check with an estimate to chain since ${anchor}`;
  const what = `${lead.metric.charAt(0).toLowerCase()}${lead.metric.slice(1)} (${lead.test})`;
  const change = lead.deltaPct === null ? 'not known' : fmtPct(lead.deltaPct).replace(/\.(\d)\d%$/, '.$1 %');
  if (verdict === 'fail') return `${eachPassed ? 'each step passed; ' : ''}the change since ${anchor} is ${change}: ${what}, beyond its material change`;
  if (verdict === 'pass') return `the change since ${anchor} is ${change}: ${what}, within its tolerance, as is every gating check's`;
  const open = checks.filter((c) => c.verdict === 'inconclusive').length;
  return `the change since ${anchor} cannot be judged yet (${what} ${change} so far; ${open} gating check${open === 1 ? '' : 's'} undecided)`;
}

/** Whether the chain left a check undecided that a direct anchor-against-candidate measurement would settle. */
export function needsDirect(creep: Creep): boolean {
  return creep.verdict === 'inconclusive' && creep.anchor !== null && creep.checks.some((c) => c.verdict === 'inconclusive' && c.method !== 'direct');
}

/**
 * The gate's verdict with its creep check: a creep fail fails a gate whose step passed,
 * as its own line; a creep check that cannot be judged makes it inconclusive. A skipped
 * creep check (no anchor) changes nothing.
 */
export function withCreep(verdict: VerdictFile, creep: Creep): VerdictFile {
  const out: VerdictFile = { ...verdict, creep };
  if (verdict.verdict !== 'pass' || creep.verdict === 'pass' || creep.verdict === 'skipped') return out;
  if (creep.verdict === 'fail') return { ...out, verdict: 'fail', next: 'stop', summary: `Creep since ${creep.anchor}: ${creep.line}` };
  return { ...out, verdict: 'inconclusive', next: 'stop', summary: `Cannot judge the creep since ${creep.anchor}: ${creep.line}` };
}
