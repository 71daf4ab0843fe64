import type { Tolerances } from '../config/schema.ts';
import { dfFor, sdLogFor, speedFitFor, type NoiseModel } from '../noise/model.ts';
import { speedFitUnclear } from '../noise/speed.ts';
import { fmtPct } from './decide.ts';
import { mean } from './stats.ts';
import {
  GATE_FALSE_NOISY,
  NOISE_THAT_MATTERS,
  gateWalk,
  materialLog,
  morePairs,
  pathAt,
  probabilityFail,
  rateEvidence,
  relativeEvidence,
  sprtPath,
  sprtRule,
  type CheckPath,
  type Evidence,
  type GateStep,
  type NoiseCheck,
  type NoisePrior,
  type RateCount,
  type RunPairs,
  type SprtRule,
} from './sequential.ts';
import { adjustedValuesAt, geometricMeanAt, speedAdjust, type RunProbes, type SpeedAdjusted } from './speed-adjust.ts';
import { chiSquareSf, normalQuantile } from './stats.ts';
import type { Check, Decision, Verdict } from './verdict-schema.ts';

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
  /** Values per run, in pair order; or counts for a rate; or why it cannot be judged. */
  relative?: { baseline: number[]; candidate: number[]; pairs?: RunPairs; probes?: RunProbes; noProbes?: string };
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
  /** `repeats`: the gate never stops before this many pairs. */
  minPairs: number;
  /** `maxRepeats`: undecided at this many pairs is inconclusive. */
  maxPairs: number;
}

export interface JudgedCheck {
  input: CheckInput;
  sdLog: number;
  m: number;
  evidence: Evidence[];
  /** The measured model's weight when pooling the runs' spread. */
  prior?: NoisePrior;
  /** The test that the runs fit the model (relative checks). */
  noiseCheck?: NoiseCheck;
  /** The full walk over every recorded pair. */
  path: CheckPath;
  /** The values as judged: taken to one machine speed when the model has a fit and the runs probes. */
  speed?: SpeedAdjusted;
  /** Why a model's speed fit was not applied to this check's runs. */
  speedSkipped?: string;
}

export interface GateDecision {
  rule: SprtRule;
  judged: JudgedCheck[];
  gate: GateStep;
  pairs: number;
}

/** The material regression, % in the bad direction: the config's, else twice the tolerance. */
export function materialPctOf(tolerances: Tolerances, key: string): number {
  const tol = tolerances[key as keyof Tolerances] as { tolerancePct: number; materialPct?: number };
  return tol.materialPct ?? 2 * tol.tolerancePct;
}

/** The core: one SPRT walk per check, then the gate's walk over the pairs. */
export function decideGate(inputs: readonly CheckInput[], setup: DecisionSetup): GateDecision {
  const rule = sprtRule(inputs.filter((i) => i.base.gating).length);
  const noiseAlpha = GATE_FALSE_NOISY / Math.max(1, inputs.filter((i) => i.base.gating && i.relative).length);
  const judged: JudgedCheck[] = inputs.map((input) => {
    let sdLog = sdLogFor(setup.model, setup.tolerances, input.base.test, input.key);
    const m = materialLog(input.materialPct, input.rate ? 'higher' : input.base.worse);
    let evidence: Evidence[] = [];
    // Pool the runs' spread only with a measured σ: an assumption has no weight to pool
    // with, and 1-2 df of runs alone would swing the bounds from gate to gate.
    let df = dfFor(setup.model, input.base.test, input.key);
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
    const prior = df > 0 ? { df } : undefined;
    if (input.relative) {
      const values = speed ?? input.relative;
      evidence = relativeEvidence(values.baseline, values.candidate, input.base.worse, sdLog, prior, input.relative.pairs, speed?.extraVariance);
    } else if (input.rate) evidence = rateEvidence(input.rate.baseline, input.rate.candidate, input.rate.ignoreBelowPct, sdLog, m);
    const noiseCheck = input.relative ? { sigmaLog: Math.max(sdLog, Math.abs(m) / NOISE_THAT_MATTERS), alpha: noiseAlpha } : undefined;
    return {
      input,
      sdLog,
      m,
      evidence,
      ...(prior ? { prior } : {}),
      ...(noiseCheck ? { noiseCheck } : {}),
      path: sprtPath(evidence, m, rule, setup.minPairs, noiseCheck),
      ...(speed ? { speed } : {}),
      ...(speedSkipped ? { speedSkipped } : {}),
    };
  });
  const pairs = Math.max(0, ...judged.map((j) => j.evidence.length));
  const gating = judged.filter((j) => j.input.base.gating);
  const gate = gateWalk(
    gating.map((j) => j.path),
    pairs,
    setup.minPairs,
  );
  return { rule, judged, gate, pairs };
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
  const sum = (xs: readonly RateCount[]) => xs.slice(0, step).reduce((a, x) => ({ events: a.events + x.events, requests: a.requests + x.requests }), { events: 0, requests: 0 });
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

function checkReason(j: JudgedCheck, at: CheckPath, step: number, rule: SprtRule, delta: string, minPairs: number): string {
  const tol = `${j.input.base.tolerancePct}% tolerance`;
  const mat = `${j.input.materialPct}% material regression`;
  const e = j.evidence[step - 1];
  if (e?.healthy) return `${delta}; both sides at or below the healthy level, so it passes whatever the change`;
  const l = at.llr[at.llr.length - 1] ?? 0;
  const lr = `Λ ${l.toFixed(2)}`;
  if (at.outcome === 'noisy') return `${delta} after ${plural(at.decidedAt!, 'pair')}: undecidable at this noise (${noiseFigures(j, at.decidedAt!)})`;
  if (at.outcome === 'fail') return `${delta} after ${plural(at.decidedAt!, 'pair')}: evidence for the ${mat} (${lr} ≥ ${rule.upper.toFixed(2)}), beyond the ${tol}`;
  if (at.outcome === 'pass') return `${delta} after ${plural(at.decidedAt!, 'pair')}: evidence of no change beyond the ${tol} (${lr} ≤ ${rule.lower.toFixed(2)})`;
  if (step < minPairs) return `${delta} after ${plural(step, 'pair')}: not judged before the minimum of ${plural(minPairs, 'pair')} (${lr})`;
  return `${delta} after ${plural(step, 'pair')}: undecided between no change and the ${mat} (${rule.lower.toFixed(2)} < ${lr} < ${rule.upper.toFixed(2)})`;
}

/** A check whose runs rejected the noise model, with the figures that show it (verdict.json's `decision.noisy`). */
export type NoisyCheck = NonNullable<Decision['noisy']>[number];

function noisyCheck(j: JudgedCheck, step: number): NoisyCheck | null {
  const e = j.evidence[step - 1];
  if (!e?.spread || !j.noiseCheck || e.spread.df < 1) return null;
  const ratio = e.spread.ss / j.noiseCheck.sigmaLog ** 2;
  return {
    metric: j.input.base.metric,
    test: j.input.base.test,
    sdPct: round2(Math.sqrt(e.spread.ss / e.spread.df) * 100),
    df: e.spread.df,
    modelSdPct: round2(j.noiseCheck.sigmaLog * 100),
    p: Number(chiSquareSf(ratio, e.spread.df).toPrecision(2)),
    level: Number(j.noiseCheck.alpha.toPrecision(2)),
  };
}

const round2 = (x: number) => Math.round(x * 100) / 100;

function noiseFigures(j: JudgedCheck, step: number): string {
  const n = noisyCheck(j, step);
  if (!n) return 'its runs vary more than the noise model allows';
  return `its pair differences vary ${n.sdPct}% per run (${n.df} df), the model ${n.modelSdPct}%: χ² p = ${n.p} < ${n.level}`;
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
  const { rule, gate } = g;
  const step = Math.max(1, gate.stopAt);
  const confidence = setup.tolerances.confidence;
  const checks: Check[] = g.judged.map((j) => {
    const { base, blocked } = j.input;
    if (blocked) return { ...base, baseline: blocked.baseline, candidate: blocked.candidate, deltaPct: null, interval: null, method: 'none', verdict: 'inconclusive', reason: blocked.reason };
    const at = pathAt(j.path, step);
    const e = j.evidence[Math.min(step, j.evidence.length) - 1];
    const deltaPct = deltaOf(j, e);
    const shown = deltaPct === null ? NEW_RATE : fmtPct(deltaPct);
    let verdict: Check['verdict'] = at.outcome === 'undecided' || at.outcome === 'noisy' ? 'inconclusive' : at.outcome;
    let reason = checkReason(j, at, Math.min(step, j.evidence.length), rule, shown, setup.minPairs);
    if (!base.gating && verdict !== 'pass') {
      verdict = 'warn';
      reason = `${reason} (context only: ${j.input.contextOnly ?? 'configured as non-gating'})`;
    }
    if (base.gating && j.input.blockers.length && verdict === 'pass') {
      verdict = 'inconclusive';
      reason = `${reason}, but it cannot pass: ${j.input.blockers.join('; ')}`;
    }
    const values = valuesAt(j, step);
    return { ...base, ...values, deltaPct, interval: e ? intervalOf(j, e, confidence) : null, method: 'sprt', verdict, reason, ...speedRecord(j, step) };
  });

  const gating = checks.filter((c) => c.gating);
  let verdict: Verdict;
  let next: 'stop' | 'repeat' = 'stop';
  let stopReason: string;
  let suggestedMorePairs: number | undefined;
  const noisy = gate.outcome === 'noisy' ? g.judged.filter((j) => j.input.base.gating && pathAt(j.path, gate.stopAt).outcome === 'noisy').map((j) => noisyCheck(j, gate.stopAt)).filter((n): n is NoisyCheck => n !== null) : [];
  if (gate.outcome === 'fail') {
    verdict = 'fail';
    const failed = gating.filter((c) => c.verdict === 'fail').map((c) => `${c.metric} (${c.test})`);
    stopReason = `${failed.join(', ')} crossed the fail bound after ${plural(gate.stopAt, 'pair')}`;
  } else if (!gating.length) {
    verdict = 'inconclusive';
    stopReason = 'no gating check could be computed from these runs';
  } else if (problems.length || gating.some((c) => c.method === 'none') || (gate.outcome === 'pass' && gating.some((c) => c.verdict !== 'pass'))) {
    verdict = 'inconclusive';
    stopReason = 'some runs cannot be judged, so the gate cannot pass (see the problems)';
  } else if (gate.outcome === 'noisy') {
    // The SPRT's error rates were worked out at the model's noise; runs that reject the
    // model void them, and at several times that noise more pairs would not decide within
    // maxRepeats. Stop, and say what to fix.
    verdict = 'inconclusive';
    const which = noisy.map((n) => `${n.metric} (${n.test}) ${n.sdPct}% per run against ${n.modelSdPct}% (χ² p = ${n.p})`).join('; ');
    stopReason = `the runs vary more than the noise model allows after ${plural(gate.stopAt, 'pair')}: ${which}; the stated error rates do not hold at this noise, so the gate cannot judge. Find what disturbed the bench, or recalibrate (loadgate calibrate) if this is its usual noise`;
  } else if (gate.outcome === 'pass') {
    verdict = 'pass';
    stopReason = `every gating check crossed the pass bound by pair ${gate.stopAt}`;
  } else if (g.pairs < setup.maxPairs) {
    verdict = 'inconclusive';
    next = 'repeat';
    stopReason = g.pairs < setup.minPairs ? `${plural(g.pairs, 'pair')} of the minimum ${setup.minPairs}: another pair is needed` : `undecided after ${plural(g.pairs, 'pair')} of at most ${setup.maxPairs}: another pair is needed`;
  } else {
    verdict = 'inconclusive';
    suggestedMorePairs = Math.max(
      ...g.judged
        .filter((j) => j.input.base.gating && j.path.outcome === 'undecided' && j.evidence.length)
        .map((j) => {
          const last = j.evidence[j.evidence.length - 1] as Evidence;
          // last.variance · k is the per-pair variance; with a speed fit it also scales up the
          // slope's share, which does not shrink with pairs: an estimate on the long side.
          return morePairs(last, j.path.llr[j.path.llr.length - 1] ?? 0, last.variance * j.evidence.length, j.m, rule);
        }),
      1,
    );
    stopReason = `undecided at maxRepeats (${plural(g.pairs, 'pair')}); about ${plural(suggestedMorePairs, 'more pair')} would likely decide it`;
  }

  const decision: Decision = {
    rule: 'sprt',
    alpha: rule.alpha * rule.gatingChecks,
    alphaPerCheck: rule.alpha,
    beta: rule.beta,
    gatingChecks: rule.gatingChecks,
    noiseModel: {
      path: modelPath,
      kind: setup.model.kind,
      ...(setup.model.measuredAt ? { measuredAt: setup.model.measuredAt } : {}),
      ...(setup.model.n !== undefined ? { n: setup.model.n } : {}),
      assumed: setup.model.assumed,
    },
    pairs: g.pairs,
    minRepeats: setup.minPairs,
    maxRepeats: setup.maxPairs,
    stopReason,
    ...(suggestedMorePairs !== undefined ? { suggestedMorePairs } : {}),
    ...(noisy.length ? { noisy } : {}),
    detectable: detectable(g, setup),
  };
  return { checks, verdict, next, decision };
}

/** How the machine's speed entered a check (verdict.json's `speed`), at the pair the gate stopped. */
function speedRecord(j: JudgedCheck, step: number): Pick<Check, 'speed'> {
  if (j.speed) {
    const { fit, probes } = j.speed;
    const raw = { baseline: mean(j.input.relative!.baseline.slice(0, step)), candidate: mean(j.input.relative!.candidate.slice(0, step)) };
    // The noise the evidence was judged at: the fit's, or more where the runs' own spread pooled above it.
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
 * What the gate could detect: for each gating relative check, the probability that its
 * material regression fails within maxRepeats pairs, at the noise it was judged with
 * (a seeded simulation through the same SPRT walk).
 */
function detectable(g: GateDecision, setup: DecisionSetup): Decision['detectable'] {
  // At one machine speed the slope's uncertainty (the gate's last extra variance) stays
  // in every simulated gate as well: it does not shrink with pairs.
  const judgedAs = (j: JudgedCheck) => ({
    ...(j.prior ? { prior: j.prior } : {}),
    ...(j.noiseCheck ? { noiseCheck: j.noiseCheck } : {}),
    ...(j.speed?.extraVariance.length ? { extraVariance: j.speed.extraVariance[j.speed.extraVariance.length - 1] } : {}),
  });
  return g.judged
    .filter((j) => j.input.base.gating && j.input.relative)
    .map((j) => ({
      metric: j.input.base.metric,
      test: j.input.base.test,
      materialPct: j.input.materialPct,
      probabilityFail: Math.round(probabilityFail(j.sdLog, j.m, j.m, g.rule, setup.minPairs, setup.maxPairs, 1000, 9, judgedAs(j)) * 1000) / 1000,
    }));
}
