import type { Tolerances } from '../config/schema.ts';
import { dfFor, sdLogFor, slotEffectFor, speedFitFor, type NoiseModel } from '../noise/model.ts';
import { speedFitUnclear } from '../noise/speed.ts';
import { fmtPct } from '../report/format.ts';
import { RELATIVE_METRICS } from '../results/judged-metrics.ts';
import { geometricMeanAt, mean } from '../util/stats.ts';
import {
  DEFAULT_ERROR_RATES,
  defaultWeights,
  splitBudget,
  gateOnRecord,
  gateWalk,
  materialLog,
  morePairs,
  pathAt,
  operatingAt,
  probabilityFail,
  rateEvidence,
  relativeEvidence,
  sprtPath,
  type CheckPath,
  type Evidence,
  type GateStep,
  type NoisePrior,
  type RateCount,
  type RunPairs,
  type ErrorRates,
  type SlotPrior,
  type SprtRule,
} from './sequential.ts';
import { adjustedValuesAt, speedAdjust, type RunProbes, type SpeedAdjusted } from './speed-adjust.ts';
import { normalQuantile } from '../util/stats.ts';
import type { Check, Decision, Verdict } from '../results/verdict-schema.ts';

/**
 * The decision module `compare`, `run` (through compare) and `simulate` share: checks'
 * values in pair order in, the sequential walk, the verdict and `next` out.
 */

export type CheckBase = Pick<Check, 'id' | 'metric' | 'test' | 'unit' | 'tolerancePct' | 'worse' | 'gating'>;

export interface CheckInput {
  base: CheckBase;
  /** The tolerances key (supportedUsers, errorRate…). */
  key: string;
  materialPct: number;
  /** The config's share of the false-fail budget for this check; absent: defaultWeights. */
  weight?: number;
  /** Values per run, in pair order; or counts for a rate; or why it cannot be judged. */
  relative?: {
    baseline: number[];
    candidate: number[];
    pairs?: RunPairs;
    probes?: RunProbes;
    noProbes?: string;
    /** Duets: per baseline run, whether the candidate ran in slot a beside it. */
    candidateInA?: boolean[];
  };
  rate?: { baseline: RateCount[]; candidate: RateCount[]; ignoreBelowPct: number };
  blocked?: { reason: string; baseline: number | null; candidate: number | null };
  /** Why a pass of this check cannot be trusted (non-converged runs, a baseline at its cap, bad runs). */
  blockers: string[];
  /** Why a non-gating check is context only. */
  contextOnly?: string;
}

export interface DecisionSetup {
  model: NoiseModel;
  tolerances: Tolerances;
  /** The error rates the gate keeps; 1 % and 1 % when absent. */
  errorRates?: ErrorRates;
  /** `repeats`: the gate never stops before this many pairs. */
  minPairs: number;
  /** `maxRepeats`: undecided at this many pairs is inconclusive. */
  maxPairs: number;
}

export interface JudgedCheck {
  input: CheckInput;
  /** The model's per-run σ (or its speed fit's): the prior's scale. */
  sdLog: number;
  m: number;
  /** The noise prior of a relative check. */
  prior?: NoisePrior;
  /** This check's share of the budget and its bounds. */
  weight: number;
  rule: SprtRule;
  evidence: Evidence[];
  /** The full walk over every recorded pair. */
  path: CheckPath;
  /** The values as judged: taken to one machine speed when the model has a fit and the runs probes. */
  speed?: SpeedAdjusted;
  /** Why a model's speed fit was not applied to this check's runs. */
  speedSkipped?: string;
  /** A duet check's slot-effect prior. */
  slot?: SlotPrior;
}

export interface GateDecision {
  judged: JudgedCheck[];
  /** Where the live loop stops: the first decisive pair (what `simulate` counts). */
  gate: GateStep;
  /** The verdict on every recorded pair (what `compare` and the verdict give). */
  record: GateStep;
  pairs: number;
}

/**
 * The material regression, % in the bad direction: the config's, else the change twice the
 * tolerance in log terms, so that the tolerance is the test's indifference point (the
 * midpoint of no change and the material regression on the log scale, where a check is as
 * likely to fail as to pass): +30 % → +69 %, −5 % → −9.75 %.
 */
export function materialPctOf(tolerances: Tolerances, key: string): number {
  const worse = RELATIVE_METRICS.find((r) => r.key === key)?.worse ?? 'higher';
  const tol = tolerances[key as keyof Tolerances] as { tolerancePct: number; materialPct?: number };
  if (tol.materialPct !== undefined) return tol.materialPct;
  const t = tol.tolerancePct / 100;
  return 100 * (worse === 'higher' ? (1 + t) ** 2 - 1 : 1 - (1 - t) ** 2);
}

/**
 * What a duet gate assumes of a slot effect that no calibration measured: a normal prior
 * with mean 0 whose sd is this multiple of the check's per-duet σ (for AWS supported users,
 * 3.8 %: a 3 % effect of other agents, ports or databases is inside it). A first duet then
 * settles only a change far from both bounds; duets in both orientations estimate the effect
 * from the gate's own pairs. In simulation a 3 % slot effect moves the AWS duet profile's
 * rates by under 1 point with it, and halves a material loss's fails without it.
 */
const ASSUMED_SLOT_SHARE = 2;
/**
 * ...and never above this sd (log units): slots differ by their agents, ports and databases,
 * a few per cent whatever a metric's own noise; a wider prior would let a noisy metric's
 * collapse pass for a slot effect on a first duet.
 */
const ASSUMED_SLOT_SD_MAX = 0.04;

/**
 * A duet check's slot-effect prior (sequential.ts SlotPrior), in badness units: the model
 * entry's measured slot effect with its standard error, else ASSUMED_SLOT_SHARE. `perSide`
 * is the check's per-side σ (sdLogFor), so a difference's prior variance is 2·perSide².
 */
function slotPriorFor(model: NoiseModel, test: string, metric: string, worse: 'higher' | 'lower', perSide: number): SlotPrior {
  const measured = slotEffectFor(model, test, metric);
  if (!measured) {
    const pairSd = Math.SQRT2 * perSide;
    return { gamma0: 0, c: Math.min(ASSUMED_SLOT_SHARE, ASSUMED_SLOT_SD_MAX / pairSd) ** 2 };
  }
  // A difference with the candidate in slot a reads ln(a/b) more, in the metric's own direction.
  return { gamma0: (worse === 'higher' ? 1 : -1) * measured.logRatio, c: (measured.sd * measured.sd) / (2 * perSide * perSide) };
}

/** A check before its evidence: its noise, its material change, its prior. */
interface CheckNoise {
  input: CheckInput;
  sdLog: number;
  m: number;
  prior?: NoisePrior;
  speed?: SpeedAdjusted;
  speedSkipped?: string;
  slot?: SlotPrior;
}

function noiseOf(input: CheckInput, setup: DecisionSetup): CheckNoise {
  let sdLog = sdLogFor(setup.model, setup.tolerances, input.base.test, input.key);
  let df = dfFor(setup.model, input.base.test, input.key);
  const m = materialLog(input.materialPct, input.rate ? 'higher' : input.base.worse);
  // With a speed fit in the model and a probe in every run, the check judges the values
  // taken to one machine speed, at the noise left around the fit (src/noise/speed.ts).
  const fit = input.relative ? speedFitFor(setup.model, input.base.test, input.key) : undefined;
  const unclear = fit ? speedFitUnclear(fit) : null;
  const adjusted = fit && !unclear && input.relative?.probes ? speedAdjust(input.relative, input.relative.probes, fit) : undefined;
  const speed = adjusted && !('skipped' in adjusted) ? adjusted : undefined;
  let speedSkipped: string | undefined;
  if (fit && unclear) speedSkipped = unclear;
  else if (fit && !input.relative?.probes) speedSkipped = input.relative?.noProbes ?? 'the runs carry no speed probe';
  else if (adjusted && 'skipped' in adjusted) speedSkipped = adjusted.skipped;
  if (speed) {
    sdLog = speed.fit.sdLog;
    df = speed.fit.df;
  }
  const slot = input.relative?.candidateInA && !speed ? slotPriorFor(setup.model, input.base.test, input.key, input.base.worse, sdLog) : undefined;
  return {
    input,
    sdLog,
    m,
    ...(slot ? { slot } : {}),
    ...(input.relative ? { prior: { sigmaLog: sdLog, df } } : {}),
    ...(speed ? { speed } : {}),
    ...(speedSkipped ? { speedSkipped } : {}),
  };
}

/** Each check's weight (the config's, else defaultWeights) and its bounds from the gate's budget (splitBudget). */
function rulesOf(checks: readonly CheckNoise[], rates: ErrorRates): { weight: number; rule: SprtRule }[] {
  const defaults = defaultWeights(checks.map((c) => ({ sdLog: c.sdLog, m: c.m, rate: !!c.input.rate, gating: c.input.base.gating })));
  const weighted = checks.map((c, i) => ({ weight: c.input.weight ?? (defaults[i] as number), gating: c.input.base.gating }));
  const rules = splitBudget(weighted, rates.falseFail, rates.falsePass);
  return weighted.map((w, i) => ({ weight: w.weight, rule: rules[i] as SprtRule }));
}

/** The core: one sequential walk per check, then the gate's walk over the pairs. */
export function decideGate(inputs: readonly CheckInput[], setup: DecisionSetup): GateDecision {
  const noise = inputs.map((input) => noiseOf(input, setup));
  const rules = rulesOf(noise, setup.errorRates ?? DEFAULT_ERROR_RATES);
  const judged: JudgedCheck[] = noise.map((c, i) => {
    const { input, m, prior, speed } = c;
    const { weight, rule } = rules[i] as { weight: number; rule: SprtRule };
    let evidence: Evidence[] = [];
    if (input.relative && prior) {
      const values = speed ?? input.relative;
      const slots = c.slot && input.relative.candidateInA ? { candidateInA: input.relative.candidateInA, prior: c.slot } : undefined;
      evidence = relativeEvidence(values.baseline, values.candidate, input.base.worse, m, prior, input.relative.pairs, speed?.extraVariance, slots);
    } else if (input.rate) evidence = rateEvidence(input.rate.baseline, input.rate.candidate, input.rate.ignoreBelowPct, c.sdLog, m);
    return { ...c, weight, rule, evidence, path: sprtPath(evidence, rule, setup.minPairs) };
  });
  const pairs = Math.max(0, ...judged.map((j) => j.evidence.length));
  const gating = judged.filter((j) => j.input.base.gating).map((j) => j.path);
  return { judged, gate: gateWalk(gating, pairs, setup.minPairs), record: gateOnRecord(gating, pairs, setup.minPairs), pairs };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Shown change for a rate that went from zero to above zero. */
const NEW_RATE = 'new (was 0, now above 0: +∞)';

function deltaOf(j: JudgedCheck, e: Evidence | undefined): number | null {
  if (!e) return null;
  if (j.input.rate) {
    const rates = pooledRates(j, j.evidence.indexOf(e) + 1);
    if (rates.b === 0) return rates.c === 0 ? 0 : null;
    return (rates.c / rates.b - 1) * 100;
  }
  const sign = j.input.base.worse === 'higher' ? 1 : -1;
  return Math.expm1(sign * e.bad) * 100;
}

function pooledRates(j: JudgedCheck, step: number): { b: number; c: number } {
  const sum = (xs: readonly RateCount[]) =>
    xs.slice(0, step).reduce((a, x) => ({ events: a.events + x.events, requests: a.requests + x.requests }), { events: 0, requests: 0 });
  const b = sum(j.input.rate!.baseline);
  const c = sum(j.input.rate!.candidate);
  return { b: b.requests ? (100 * b.events) / b.requests : 0, c: c.requests ? (100 * c.events) / c.requests : 0 };
}

/** Interval on the % change at `confidence`, from the model's variance (display only). */
function intervalOf(j: JudgedCheck, e: Evidence, confidence: number): [number, number] | null {
  if (e.healthy && j.input.rate && pooledRates(j, j.evidence.indexOf(e) + 1).b === 0) return null;
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const sign = j.input.rate || j.input.base.worse === 'higher' ? 1 : -1;
  const center = sign * e.bad;
  const half = z * Math.sqrt(e.variance);
  return [Math.expm1(center - half) * 100, Math.expm1(center + half) * 100];
}

function checkReason(j: JudgedCheck, at: CheckPath, step: number, delta: string, minPairs: number): string {
  const { rule } = j;
  const tol = `${j.input.base.tolerancePct}% tolerance`;
  const mat = `${round2(j.input.materialPct)}% material regression`;
  const e = j.evidence[step - 1];
  if (e?.healthy) return `${delta}; both sides at or below the healthy level, so it passes whatever the change`;
  const l = at.llr[at.llr.length - 1] ?? 0;
  const lr = `Λ ${l.toFixed(2)}`;
  if (at.outcome === 'fail') {
    // Λ where it crossed: a fail stands whatever later pairs show.
    const failedAt = at.decidedAt ?? step;
    const crossed = `Λ ${(at.llr[failedAt - 1] ?? l).toFixed(2)} ≥ ${rule.upper.toFixed(2)}${failedAt < step ? ` at pair ${failedAt}` : ''}`;
    return `${delta} after ${plural(step, 'pair')}: evidence for the ${mat} (${crossed}), beyond the ${tol}`;
  }
  if (at.outcome === 'pass') {
    // The pass side's Λ where it crossed: a later pair short of the fail bound leaves the pass standing.
    const passed = j.evidence[(at.decidedAt ?? step) - 1];
    const passLr = `Λ ${(passed?.passLlr ?? passed?.llr ?? l).toFixed(2)}`;
    const since = at.decidedAt !== null && at.decidedAt < step ? `, passed at pair ${at.decidedAt}` : '';
    return `${delta} after ${plural(step, 'pair')}: evidence of no change beyond the ${tol} (${passLr} ≤ ${rule.lower.toFixed(2)}${since})`;
  }
  if (step < minPairs) return `${delta} after ${plural(step, 'pair')}: not judged before the minimum of ${plural(minPairs, 'pair')} (${lr})`;
  return `${delta} after ${plural(step, 'pair')}: undecided between no change and the ${mat} (${rule.lower.toFixed(2)} < ${lr} < ${rule.upper.toFixed(2)})`;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** The pair differences' own spread per run against the model's σ, when the runs are clearly noisier (the likely cause of an undecided check). */
function noisierNote(j: JudgedCheck, step: number): string | null {
  const e = j.evidence[Math.min(step, j.evidence.length) - 1];
  if (!e?.spread || e.spread.df < 1 || !j.prior) return null;
  const own = Math.sqrt(e.spread.ss / e.spread.df);
  if (own < 1.5 * j.prior.sigmaLog) return null;
  return `${j.input.base.metric} (${j.input.base.test}) varied ${round2(own * 100)}% per run in its pair differences (${e.spread.df} df) against the model's ${round2(j.prior.sigmaLog * 100)}%`;
}

export interface Judgement {
  checks: Check[];
  verdict: Verdict;
  next: 'stop' | 'repeat';
  decision: Decision;
}

/**
 * Turns the walk into checks, the verdict, `next` and the decision record. `problems`
 * are the comparison's (bad runs, missing sides): they block a pass, never a fail.
 */
export function judge(inputs: readonly CheckInput[], setup: DecisionSetup, problems: readonly string[], modelPath: string | null): Judgement {
  const g = decideGate(inputs, setup);
  // Every check is shown on all the recorded pairs, as the report's tables are.
  const step = Math.max(1, g.pairs);
  const checks = g.judged.map((j) => checkAt(j, step, setup));
  const { verdict, next, stopReason, suggestedMorePairs } = gateOutcome(g, checks, problems, setup);
  const decision: Decision = {
    rule: 'sprt',
    alpha: (setup.errorRates ?? DEFAULT_ERROR_RATES).falseFail,
    beta: (setup.errorRates ?? DEFAULT_ERROR_RATES).falsePass,
    gatingChecks: g.judged.filter((j) => j.input.base.gating).length,
    noiseModel: {
      path: modelPath,
      kind: setup.model.kind,
      ...(setup.model.measuredAt ? { measuredAt: setup.model.measuredAt } : {}),
      ...(setup.model.n !== undefined ? { n: setup.model.n } : {}),
      assumed: setup.model.assumed,
      ...(setup.model.notInModel?.length ? { notInModel: setup.model.notInModel } : {}),
    },
    pairs: g.pairs,
    minRepeats: setup.minPairs,
    maxRepeats: setup.maxPairs,
    stopReason,
    ...(suggestedMorePairs !== undefined ? { suggestedMorePairs } : {}),
    detectable: detectable(g, setup),
  };
  return { checks, verdict, next, decision };
}

/** One check's verdict and reason at the pair the gate stopped. */
function checkAt(j: JudgedCheck, step: number, setup: DecisionSetup): Check {
  const { base, blocked } = j.input;
  if (blocked)
    return {
      ...base,
      baseline: blocked.baseline,
      candidate: blocked.candidate,
      deltaPct: null,
      interval: null,
      method: 'none',
      verdict: 'inconclusive',
      reason: blocked.reason,
    };
  const at = pathAt(j.path, step);
  const e = j.evidence[Math.min(step, j.evidence.length) - 1];
  const deltaPct = deltaOf(j, e);
  const shown = deltaPct === null ? NEW_RATE : fmtPct(deltaPct);
  let verdict: Check['verdict'] = at.outcome === 'undecided' ? 'inconclusive' : at.outcome;
  let reason = checkReason(j, at, Math.min(step, j.evidence.length), shown, setup.minPairs);
  if (!base.gating && verdict !== 'pass') {
    verdict = 'warn';
    reason = `${reason} (context only: ${j.input.contextOnly ?? 'configured as non-gating'})`;
  }
  if (base.gating && j.input.blockers.length && verdict === 'pass') {
    verdict = 'inconclusive';
    reason = `${reason}, but it cannot pass: ${j.input.blockers.join('; ')}`;
  }
  const values = valuesAt(j, step);
  return {
    ...base,
    ...values,
    deltaPct,
    interval: e ? intervalOf(j, e, setup.tolerances.confidence) : null,
    method: 'sprt',
    verdict,
    reason,
    ...speedRecord(j, step),
    ...estimateOf(j, e),
  };
}

/** A relative check's estimate as the history records it: ln(candidate/baseline), its standard error, its noise's degrees of freedom. */
function estimateOf(j: JudgedCheck, e: Evidence | undefined): Pick<Check, 'estimate'> {
  if (!e || !j.input.relative || !j.prior || !(e.variance > 0)) return {};
  const sign = j.input.base.worse === 'higher' ? 1 : -1;
  return { estimate: { logRatio: sign * e.bad, se: Math.sqrt(e.variance), df: Math.max(1, j.prior.df + (e.spread?.df ?? 0)) } };
}

interface GateOutcome {
  verdict: Verdict;
  next: 'stop' | 'repeat';
  stopReason: string;
  suggestedMorePairs?: number;
}

/** The gate's verdict from its walk and its checks, and whether another pair is wanted. */
function gateOutcome(g: GateDecision, checks: readonly Check[], problems: readonly string[], setup: DecisionSetup): GateOutcome {
  const gate = g.record;
  const gating = checks.filter((c) => c.gating);
  if (gate.outcome === 'fail') {
    const failed = gating.filter((c) => c.verdict === 'fail').map((c) => `${c.metric} (${c.test})`);
    return { verdict: 'fail', next: 'stop', stopReason: `${failed.join(', ')} crossed the fail bound after ${plural(gate.stopAt, 'pair')}` };
  }
  if (!gating.length) return { verdict: 'inconclusive', next: 'stop', stopReason: 'no gating check could be computed from these runs' };
  if (problems.length || gating.some((c) => c.method === 'none') || (gate.outcome === 'pass' && gating.some((c) => c.verdict !== 'pass'))) {
    return { verdict: 'inconclusive', next: 'stop', stopReason: 'some runs cannot be judged, so the gate cannot pass (see the problems)' };
  }
  if (gate.outcome === 'pass') return { verdict: 'pass', next: 'stop', stopReason: `every gating check crossed the pass bound by pair ${gate.stopAt}` };
  if (g.pairs < setup.maxPairs) {
    const stopReason =
      g.pairs < setup.minPairs
        ? `${plural(g.pairs, 'pair')} of the minimum ${setup.minPairs}: another pair is needed`
        : `undecided after ${plural(g.pairs, 'pair')} of at most ${setup.maxPairs}: another pair is needed`;
    return { verdict: 'inconclusive', next: 'repeat', stopReason };
  }
  return undecidedAtMax(g);
}

/** Undecided with no pairs left: how many more would likely decide it, and whether the runs were noisier than the model. */
function undecidedAtMax(g: GateDecision): GateOutcome {
  const undecided = g.judged.filter((j) => j.input.base.gating && j.path.outcome === 'undecided');
  const suggestedMorePairs = Math.max(
    ...undecided
      .filter((j) => j.evidence.length)
      .map((j) => {
        const last = j.evidence[j.evidence.length - 1] as Evidence;
        // last.variance · k is the per-pair variance; with a speed fit it also scales up the
        // slope's share, which does not shrink with pairs: an estimate on the long side.
        return morePairs(last, j.path.llr[j.path.llr.length - 1] ?? 0, last.variance * j.evidence.length, j.m, j.rule);
      }),
    1,
  );
  const noisier = undecided.map((j) => noisierNote(j, g.pairs)).filter((n): n is string => n !== null);
  const why = noisier.length
    ? `; the runs were noisier than the noise model (${noisier.join('; ')}): find what disturbed the bench, or recalibrate (loadgate calibrate) if this is its usual noise`
    : '';
  return {
    verdict: 'inconclusive',
    next: 'stop',
    stopReason: `undecided at maxRepeats (${plural(g.pairs, 'pair')}); about ${plural(suggestedMorePairs, 'more pair')} would likely decide it${why}`,
    suggestedMorePairs,
  };
}

/** How the machine's speed entered a check (verdict.json's `speed`), at the pair the gate stopped. */
function speedRecord(j: JudgedCheck, step: number): Pick<Check, 'speed'> {
  if (j.speed) {
    const { fit, probes } = j.speed;
    const raw = { baseline: mean(j.input.relative!.baseline.slice(0, step)), candidate: mean(j.input.relative!.candidate.slice(0, step)) };
    // The noise the evidence implies: the fit's, updated by the runs' own pair differences.
    const judgedAt = j.evidence[Math.min(step, j.evidence.length) - 1]?.sdLog ?? fit.sdLog;
    const rawDeltaPct = (geometricMeanAt(j.input.relative!.candidate, step) / geometricMeanAt(j.input.relative!.baseline, step) - 1) * 100;
    return {
      speed: {
        adjusted: true,
        slope: fit.slope,
        sdPct: round2(judgedAt * 100),
        baselineProbeMs: round2(geometricMeanAt(probes.baseline, step)),
        candidateProbeMs: round2(geometricMeanAt(probes.candidate, step)),
        rawBaseline: raw.baseline,
        rawCandidate: raw.candidate,
        rawDeltaPct: round2(rawDeltaPct),
      },
    };
  }
  return j.speedSkipped ? { speed: { adjusted: false, why: j.speedSkipped } } : {};
}

function valuesAt(j: JudgedCheck, step: number): { baseline: number | null; candidate: number | null } {
  if (j.input.relative) {
    const { baseline, candidate } = j.speed ? adjustedValuesAt(j.input.relative, j.speed, step) : j.input.relative;
    return { baseline: baseline.length ? mean(baseline.slice(0, step)) : null, candidate: candidate.length ? mean(candidate.slice(0, step)) : null };
  }
  const r = pooledRates(j, step);
  return { baseline: r.b, candidate: r.c };
}

/**
 * Each gating check's share of the budget and its operating characteristic: the
 * probability that it fails within maxRepeats pairs at a true change of its tolerance and
 * of its material regression, at the model's noise (sequential.ts probabilityFail, the same
 * Λ and look rule; as if it were the only gating check). A relative check's figures; a
 * rate's error budget and bounds only.
 */
function detectable(g: GateDecision, setup: DecisionSetup): Decision['detectable'] {
  return g.judged
    .filter((j) => j.input.base.gating)
    .map((j) => {
      const base = {
        metric: j.input.base.metric,
        test: j.input.base.test,
        tolerancePct: j.input.base.tolerancePct,
        materialPct: round2(j.input.materialPct),
        weight: Number(j.weight.toPrecision(3)),
        alpha: Number(j.rule.alpha.toPrecision(3)),
      };
      if (!j.prior) return base;
      // At one machine speed the slope's uncertainty stays in every simulated gate: it does not shrink with pairs.
      const common = j.speed?.extraVariance[j.speed.extraVariance.length - 1] ?? 0;
      const judging = { m: j.m, prior: j.prior, rule: j.rule, minPairs: setup.minPairs, maxPairs: setup.maxPairs, common, ...(j.slot ? { slot: j.slot } : {}) };
      const tolBad = materialLog(j.input.base.tolerancePct, j.input.base.worse);
      const atTolerance = operatingAt(tolBad, judging);
      return {
        ...base,
        sdPct: round2(j.prior.sigmaLog * 100),
        priorDf: j.prior.df,
        failAtTolerance: Math.round(atTolerance.fail * 1000) / 1000,
        passAtTolerance: Math.round(atTolerance.pass * 1000) / 1000,
        probabilityFail: Math.round(probabilityFail(j.m, judging) * 1000) / 1000,
      };
    });
}
