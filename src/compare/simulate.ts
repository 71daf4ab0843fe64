import type { GateConfig } from '../config/schema.ts';
import { sdLogFor, type NoiseModel } from '../noise/model.ts';
import { gatingMetrics, type GatingMetric } from '../noise/profile.ts';
import { decideGate, materialPctOf, type CheckInput, type DecisionSetup } from './decision.ts';
import { RELATIVE_METRICS } from '../results/judged-metrics.ts';
import { seededRandom } from '../util/random.ts';
import { candidateFirst, DEFAULT_ERROR_RATES, errorRatesOf, gaussian, runSlot, type ErrorRates } from './sequential.ts';
import { probeSdLog, speedFitUnclear } from '../noise/speed.ts';

/**
 * `loadgate simulate`: synthetic run pairs with lognormal per-run noise at the noise
 * model's σ, through decideGate (the function compareRuns calls), so the error rates and
 * runs it prints are those of the gate itself.
 */

export interface SimulationCase {
  label: string;
  /** The metric the change is applied to ("test.metric"), or null for all unchanged. */
  metric: string | null;
  /** True change in the bad direction, %. */
  changePct: number;
  /** Per-run drift in the bad direction, % per run slot, on every relative metric. */
  driftPct: number;
  /**
   * The sd (%) of a change in the machine's speed from one pair to the next, shared by
   * both sides' runs of the pair and by every relative metric (a slower machine serves
   * fewer users, slower). 0 for every case but `step`.
   */
  stepPct?: number;
  /** The bench's true noise as a multiple of the model's, in this case alone (a bench noisier than calibrated). */
  noiseScale?: number;
  /**
   * The sd (%) of a per-run factor shared by every metric of one run and by neither its
   * partner nor its speed probe: a machine-speed change within a pair that nothing models.
   */
  sharedPct?: number;
  /** Duets: every relative metric reads this % better in slot a than in slot b, for the same build. */
  slotBiasPct?: number;
  kind: 'none' | 'tolerance' | 'material' | 'beyond' | 'drift' | 'step';
  /** Which bench the case assumes: the model's, or one the model does not describe (noisier, a shared factor, a slot effect). */
  bench: 'model' | 'noisier' | 'shared' | 'slots';
}

export interface SimulationRow extends SimulationCase {
  pass: number;
  fail: number;
  inconclusive: number;
  meanPairs: number;
  maxPairs: number;
}

/** The metric the material-loss rows of supported users carry. */
export const SUPPORTED_USERS = 'unbounded.supportedUsers';

/** One row of a simulation: a case (kind), a metric (null for no change) and a bench (the model by default). */
export function simulationRow(
  rows: readonly SimulationRow[],
  kind: SimulationRow['kind'],
  metric: string | null,
  bench: SimulationRow['bench'] = 'model',
): SimulationRow | undefined {
  return rows.find((r) => r.kind === kind && r.bench === bench && r.metric === metric);
}

export interface SimulationOptions {
  trials: number;
  seed: number;
  /** Run order within pairs: the gate's ABBA BAAB, or the old candidate-always-second. */
  order?: 'abba' | 'ab';
  /** Drift for the drift case, % per run. */
  driftPct?: number;
  /** Speed steps between pairs for the step case, sd in % (see SimulationCase.stepPct). */
  stepPct?: number;
  /** The bench's true noise as a multiple of the model's (1: the model is right). */
  noiseScale?: number;
  /** Apply noiseScale to this gating metric only ("test.metric"); all when absent. */
  noiseScaleMetric?: string;
  /**
   * For checks whose model has a speed fit: the true slope as a multiple of the fitted one
   * (1: the fit is right; 0: the probe says nothing about the metric; 2: the metric follows
   * the machine's speed twice as steeply as fitted). See syntheticInputs.
   */
  slopeScale?: number;
  /** Only the cases this keeps: a question about a few rows can afford more trials. */
  only?: (c: SimulationCase) => boolean;
}

/**
 * The default speed step between pairs, sd in %. Measured on the local bench: a CPU
 * probe timed beside ten unbounded runs explained supported users' spread from 8.2 % down
 * to 4.7 % per run, so the machine's own speed moved them by about √(8.2² − 4.7²) ≈ 6.7 %.
 * That speed also moves within pairs; putting all of it between pairs is the case the
 * pair differences cancel completely, so this row shows the best case, not the typical one.
 */
const DEFAULT_STEP_PCT = 6.7;

/** The robustness rows: every residual this many times the model's, and an unmodelled per-run factor of this sd (%). */
const NOISIER_SCALE = 1.5;
const DEFAULT_SHARED_PCT = 6;
/** The duet rows' slot effect: slot a this % faster than slot b (other agents, ports, databases). */
const DEFAULT_SLOT_BIAS_PCT = 3;

/** A probe time on the local bench's scale; only its log differences matter. */
const SIMULATED_PROBE_MS = 60;

export function simulationCases(config: GateConfig, driftPct: number, stepPct = DEFAULT_STEP_PCT, sharedPct = DEFAULT_SHARED_PCT): SimulationCase[] {
  const relative = gatingMetrics(config).filter((g) => !g.rate);
  const none: SimulationCase = { label: 'no change', metric: null, changePct: 0, driftPct: 0, kind: 'none', bench: 'model' };
  const cases: SimulationCase[] = [none];
  const material = (g: GatingMetric) => materialPctOf(config.tolerances, g.key);
  for (const [kind, factor] of [
    ['tolerance', 0],
    ['material', 1],
    ['beyond', 1.5],
  ] as const) {
    for (const g of relative) {
      const changePct = kind === 'tolerance' ? config.tolerances[g.key as 'apiAvg'].tolerancePct : material(g) * factor;
      cases.push({ label: `${kind === 'beyond' ? '1.5 × material' : kind}`, metric: `${g.test}.${g.key}`, changePct, driftPct: 0, kind, bench: 'model' });
    }
  }
  cases.push({ label: `no change, drift ${driftPct}%/run`, metric: null, changePct: 0, driftPct, kind: 'drift', bench: 'model' });
  cases.push({ label: `no change, speed steps ${stepPct}% between pairs`, metric: null, changePct: 0, driftPct: 0, stepPct, kind: 'step', bench: 'model' });
  // Benches the model does not describe: the stated error rates must still hold.
  const unmodelled: [SimulationCase['bench'], string, Partial<SimulationCase>][] = [
    ['noisier', `noise ${NOISIER_SCALE}× the model`, { noiseScale: NOISIER_SCALE }],
    ['shared', `a shared per-run factor of ${sharedPct}%`, { sharedPct }],
  ];
  if (config.mode === 'duet') unmodelled.push(['slots', `slot a ${DEFAULT_SLOT_BIAS_PCT}% faster`, { slotBiasPct: DEFAULT_SLOT_BIAS_PCT }]);
  for (const [bench, label, extra] of unmodelled) {
    cases.push({ ...none, label: `no change, ${label}`, bench, ...extra });
    for (const g of relative)
      cases.push({ label: `material, ${label}`, metric: `${g.test}.${g.key}`, changePct: material(g), driftPct: 0, kind: 'material', bench, ...extra });
  }
  return cases;
}

/** How the synthetic runs vary: run order within pairs, and the true noise against the model's. */
interface SyntheticNoise {
  order: 'abba' | 'ab';
  noiseScale: number;
  noiseScaleMetric?: string;
  slopeScale?: number;
}

/** One gate's checks with synthetic values for `pairs` pairs. */
export function syntheticInputs(
  metrics: readonly GatingMetric[],
  c: SimulationCase,
  setup: DecisionSetup,
  config: GateConfig,
  pairs: number,
  noise: SyntheticNoise,
  random: () => number,
): CheckInput[] {
  // One speed per pair for the whole gate (the step case), and one factor per run shared by
  // all its metrics (the shared case); drawn only where used.
  const speed = Array.from({ length: pairs }, () => (c.stepPct ? Math.log1p(c.stepPct / 100) * gaussian(random) : 0));
  const perRun = (): number[] => Array.from({ length: pairs }, () => (c.sharedPct ? Math.log1p(c.sharedPct / 100) * gaussian(random) : 0));
  const sharedB = perRun();
  const sharedC = perRun();
  return metrics.map((g) => {
    const label = RELATIVE_METRICS.find((m) => m.key === g.key)?.label ?? g.key;
    const tol = config.tolerances[g.key as 'apiAvg'];
    const base = { id: `${g.test}.${g.key}`, metric: label, test: g.test, unit: '', tolerancePct: tol.tolerancePct, worse: g.worse, gating: true };
    const input: CheckInput = {
      base,
      key: g.key,
      materialPct: materialPctOf(config.tolerances, g.key),
      ...(tol.weight !== undefined ? { weight: tol.weight } : {}),
      blockers: [],
    };
    if (g.rate) {
      // Healthy error and timeout rates: they pass at once, but count in the error budget.
      const none = Array.from({ length: pairs }, () => ({ events: 0, requests: 10000 }));
      return { ...input, rate: { baseline: none, candidate: none, ignoreBelowPct: 0.025 } };
    }
    const entry = setup.model.file?.entries.find((e) => e.test === g.test && e.metric === g.key);
    // With a speed fit, each run's machine speed is drawn at the probe's spread behind the
    // fit and moves the value along the true slope, with the fit's residual noise on top;
    // the decision sees the probe and adjusts by the fitted slope, as on the bench. Without
    // one, the model's σ is all noise.
    // (A fit whose slope is unclear is not used by the decision, so its runs are drawn as measured.)
    const fit = entry?.kind === 'measured' && entry.speed && !speedFitUnclear(entry.speed) ? entry.speed : undefined;
    // The bench's true noise: the model's, or a multiple of it (a bench noisier than calibrated).
    const scaled = !noise.noiseScaleMetric || noise.noiseScaleMetric === base.id;
    // Each side's own noise, as the decision reads the model: a duet model's σ is a duet's
    // log ratio, so each side draws 1/√2 of it (sdLogFor).
    const sd = (fit?.sdLog ?? sdLogFor(setup.model, config.tolerances, g.test, g.key)) * (scaled ? noise.noiseScale : 1) * (c.noiseScale ?? 1);
    const probes = fit ? { baseline: [] as number[], candidate: [] as number[], workload: fit.workload } : undefined;
    // Probes at the speeds the fit was measured at: outside them the decision would not apply it.
    const probeMs = fit?.probeMs ? Math.sqrt(fit.probeMs.min * fit.probeMs.max) : SIMULATED_PROBE_MS;
    // Drawn per check (not shared by a test's checks): only a mis-fitted slope leaves any of
    // it in the judged values, and then each check carries its own share.
    const runSpeed = (): number => (fit ? probeSdLog(fit) * gaussian(random) : 0);
    // Log changes in the bad direction: up for latencies, down for supported users.
    const bad = (pct: number) => (g.worse === 'higher' ? Math.log1p(pct / 100) : Math.log1p(-pct / 100));
    const effect = c.metric === base.id ? bad(c.changePct) : 0;
    const drift = bad(c.driftPct);
    const b: number[] = [];
    const k: number[] = [];
    // A duet's slots swap in the pairs' counterbalanced order (run/gate.ts runSteps): the side that would run first takes slot a.
    const candidateInA = Array.from({ length: pairs }, (_, p) => candidateFirst(p));
    // A slower pair (speed < 0) is worse on every metric: fewer users, longer times.
    const dir = g.worse === 'higher' ? -1 : 1;
    // The bench's slot effect: the one the model measured (ln(a/b) of the metric), plus the case's bias the model does not know.
    const slotBias = (entry?.slotEffect?.logRatio ?? 0) + (c.slotBiasPct ? dir * Math.log1p(c.slotBiasPct / 100) : 0);
    for (let p = 0; p < pairs; p++) {
      const slotB = noise.order === 'abba' ? runSlot(p, 'baseline') : 2 * p;
      const slotC = noise.order === 'abba' ? runSlot(p, 'candidate') : 2 * p + 1;
      const slow = dir * (speed[p] as number);
      const xb = runSpeed();
      const xc = runSpeed();
      const slope = (fit?.slope ?? 0) * (noise.slopeScale ?? 1);
      const inA = candidateInA[p] as boolean;
      b.push(Math.exp(drift * slotB + slow + dir * (sharedB[p] as number) + slope * xb + (inA ? 0 : slotBias) + sd * gaussian(random)));
      k.push(Math.exp(effect + drift * slotC + slow + dir * (sharedC[p] as number) + slope * xc + (inA ? slotBias : 0) + sd * gaussian(random)));
      probes?.baseline.push(probeMs * Math.exp(xb));
      probes?.candidate.push(probeMs * Math.exp(xc));
    }
    return { ...input, relative: { baseline: b, candidate: k, ...(probes ? { probes } : {}), ...(config.mode === 'duet' ? { candidateInA } : {}) } };
  });
}

export function simulate(config: GateConfig, model: NoiseModel, options: SimulationOptions): SimulationRow[] {
  const setup = decisionSetupOf(config, model);
  const metrics = gatingMetrics(config);
  const random = seededRandom(options.seed);
  const noise: SyntheticNoise = {
    order: options.order ?? 'abba',
    noiseScale: options.noiseScale ?? 1,
    ...(options.noiseScaleMetric ? { noiseScaleMetric: options.noiseScaleMetric } : {}),
    ...(options.slopeScale !== undefined ? { slopeScale: options.slopeScale } : {}),
  };
  const cases = simulationCases(config, options.driftPct ?? 3, options.stepPct ?? DEFAULT_STEP_PCT);
  return cases.filter(options.only ?? (() => true)).map((c) => {
    const counts = { pass: 0, fail: 0, inconclusive: 0 };
    let pairsSum = 0;
    let pairsMax = 0;
    for (let t = 0; t < options.trials; t++) {
      const g = decideGate(syntheticInputs(metrics, c, setup, config, setup.maxPairs, noise, random), setup);
      counts[g.gate.outcome === 'undecided' ? 'inconclusive' : g.gate.outcome]++;
      pairsSum += g.gate.stopAt;
      pairsMax = Math.max(pairsMax, g.gate.stopAt);
    }
    const pct = (n: number) => (100 * n) / options.trials;
    return {
      ...c,
      pass: pct(counts.pass),
      fail: pct(counts.fail),
      inconclusive: pct(counts.inconclusive),
      meanPairs: pairsSum / options.trials,
      maxPairs: pairsMax,
    };
  });
}

/** The decision set-up a config gives a simulated gate: its model, tolerances, pairs and error rates. */
export function decisionSetupOf(config: GateConfig, model: NoiseModel): DecisionSetup {
  return { model, tolerances: config.tolerances, minPairs: config.repeats, maxPairs: config.maxRepeats, errorRates: errorRatesOf(config) };
}

/**
 * The decision's goals, per row: at the model's noise, no change passes ≥ 96 % and fails
 * within the gate's false-fail rate (1 % by default), a material regression (and 1.5 × it)
 * fails ≥ 95 % and passes within its false-pass rate; on a bench the model does not describe (noisier, an
 * unmodelled shared factor, a slot effect, a drift or a step), no change fails and a
 * material regression passes within the same rates, while inconclusive may rise. A line
 * per miss.
 */
export function goalShortfalls(rows: readonly SimulationRow[], rates: ErrorRates = DEFAULT_ERROR_RATES): string[] {
  const out: string[] = [];
  const [falseFail, falsePass] = [100 * rates.falseFail, 100 * rates.falsePass];
  for (const r of rows) {
    const name = `${r.label}${r.metric ? ` on ${r.metric}` : ''}`;
    // A change beyond the material one must fail at least as reliably as the material one.
    const regression = r.kind === 'material' || r.kind === 'beyond';
    const atModel = r.bench === 'model' && (r.kind === 'none' || regression);
    if (r.kind === 'none' || r.kind === 'drift' || r.kind === 'step') {
      if (r.fail > falseFail) out.push(`${name}: fail ${r.fail.toFixed(1)}% > ${falseFail}%`);
      if (atModel && r.pass < 96) out.push(`${name}: pass ${r.pass.toFixed(1)}% < 96%`);
    }
    if (regression) {
      if (r.pass > falsePass) out.push(`${name}: pass ${r.pass.toFixed(1)}% > ${falsePass}%`);
      if (atModel && r.fail < 95) out.push(`${name}: fail ${r.fail.toFixed(1)}% < 95%`);
    }
  }
  return out;
}

/** An unchanged release's gate, by the same Monte Carlo: its expected pairs and how often it ends inconclusive. */
export interface NoChangeOutcome {
  meanPairs: number;
  inconclusivePct: number;
}

export function noChangeOutcome(config: GateConfig, model: NoiseModel, trials = 400, seed = 1): NoChangeOutcome {
  const setup = decisionSetupOf(config, model);
  const metrics = gatingMetrics(config);
  const random = seededRandom(seed);
  const none = simulationCases(config, 0)[0] as SimulationCase;
  let sum = 0;
  let undecided = 0;
  for (let t = 0; t < trials; t++) {
    const g = decideGate(syntheticInputs(metrics, none, setup, config, setup.maxPairs, { order: 'abba', noiseScale: 1 }, random), setup).gate;
    sum += g.stopAt;
    if (g.outcome === 'undecided') undecided++;
  }
  return { meanPairs: sum / trials, inconclusivePct: (100 * undecided) / trials };
}

/** What becomes of the gates that end inconclusive at maxRepeats: continued, or started over. */
export interface AfterInconclusive {
  label: string;
  metric: string | null;
  /** The gate as configured. */
  once: SimulationRow;
  /** The same gates continued by `extra` more pairs: one sequential test over every pair. */
  continued: SimulationRow;
  /** The inconclusive ones run again from nothing, an independent gate of the same length. */
  restarted: { pass: number; fail: number; inconclusive: number; meanPairs: number };
}

/**
 * An inconclusive gate continued, against one started over, for no change and a material
 * loss of supported users. Continuing keeps the stated error rates: Ville's bound holds at
 * whatever pair the test stops. Starting over gives the undecided gates a second, independent
 * chance to fail wrongly, and throws away the pairs already run.
 */
export function afterInconclusive(config: GateConfig, model: NoiseModel, extra: number, options: SimulationOptions): AfterInconclusive[] {
  const once = simulate(config, model, options);
  const continued = simulate({ ...config, maxRepeats: config.maxRepeats + extra }, model, options);
  const out: AfterInconclusive[] = [];
  for (const [kind, metric, label] of [
    ['none', null, 'no change'],
    ['material', SUPPORTED_USERS, 'material loss of supported users'],
  ] as const) {
    const a = simulationRow(once, kind, metric);
    const b = simulationRow(continued, kind, metric);
    if (!a || !b) continue;
    const i = a.inconclusive / 100;
    out.push({
      label,
      metric,
      once: a,
      continued: b,
      restarted: { pass: a.pass * (1 + i), fail: a.fail * (1 + i), inconclusive: a.inconclusive * i, meanPairs: a.meanPairs * (1 + i) },
    });
  }
  return out;
}

/** The config at loadgate's default error rates (1 % and 1 %), to set beside its own. */
export function atDefaultRates(config: GateConfig): GateConfig | null {
  const { falseFailPct, falsePassPct } = config.errorRates;
  return falseFailPct === 1 && falsePassPct === 1 ? null : { ...config, errorRates: { falseFailPct: 1, falsePassPct: 1 } };
}
