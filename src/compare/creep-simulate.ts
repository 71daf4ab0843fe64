import type { GateConfig } from '../config/schema.ts';
import { recordOf, type HistoryRecord } from '../history/record.ts';
import { seriesOf } from '../history/series.ts';
import { otavaChangePoints, type OtavaSeries } from '../history/otava.ts';
import type { NoiseModel } from '../noise/model.ts';
import { gatingMetrics } from '../noise/profile.ts';
import { VERDICT_SCHEMA_VERSION, type VerdictFile } from '../results/verdict-schema.ts';
import type { Creep } from '../results/creep-schema.ts';
import { seededRandom } from '../util/random.ts';
import { judgeCreep, needsDirect } from './creep.ts';
import { decideGate, judge, type CheckInput, type DecisionSetup } from './decision.ts';
import { decisionSetupOf, SUPPORTED_USERS, syntheticInputs, type SimulationCase } from './simulate.ts';

/**
 * The creep check in simulation, through the gate's own decision: a chain of releases,
 * each gated against the one before with synthetic runs at the noise model's σ (simulate.ts
 * syntheticInputs, decideGate and judge, stopping where the live loop stops), each gate's
 * record appended to a history, and at every release the creep check judged from the
 * anchor (the chain's first release) as the gate judges it: chained through the records,
 * and when that cannot decide, by one synthetic anchor-against-candidate pair at half of
 * each error rate.
 */

export interface ChainOptions {
  trials: number;
  seed: number;
  /** Each release's true change of supported users in the bad direction, %: [2, 2, …] loses 2 % a release. */
  stepsPct: readonly number[];
}

/** One release of a simulated chain. */
export interface ChainRelease {
  step: VerdictFile['verdict'];
  creep: Creep['verdict'];
  /** Whether the creep check needed the direct pair. */
  direct: boolean;
}

const release = (k: number) => `r${k}`;
const pct = (change: number) => 100 * change;

/** The checks' values cut to the first `pairs` pairs: what the live loop had when it stopped. */
function upTo(inputs: readonly CheckInput[], pairs: number): CheckInput[] {
  return inputs.map((c) => ({
    ...c,
    ...(c.relative
      ? {
          relative: {
            ...c.relative,
            baseline: c.relative.baseline.slice(0, pairs),
            candidate: c.relative.candidate.slice(0, pairs),
            ...(c.relative.candidateInA ? { candidateInA: c.relative.candidateInA.slice(0, pairs) } : {}),
          },
        }
      : {}),
    ...(c.rate ? { rate: { ...c.rate, baseline: c.rate.baseline.slice(0, pairs), candidate: c.rate.candidate.slice(0, pairs) } } : {}),
  }));
}

/** A synthetic gate's verdict, as compareRuns would write it, for a loss of `changePct` % of supported users. */
export function syntheticGate(
  config: GateConfig,
  setup: DecisionSetup,
  changePct: number,
  baseline: string,
  candidate: string,
  random: () => number,
): VerdictFile {
  const c: SimulationCase = { label: 'chain step', metric: SUPPORTED_USERS, changePct, driftPct: 0, kind: 'material', bench: 'model' };
  const inputs = syntheticInputs(gatingMetrics(config), c, setup, config, setup.maxPairs, { order: 'abba', noiseScale: 1 }, random);
  const stop = decideGate(inputs, setup).gate.stopAt;
  const j = judge(upTo(inputs, stop), setup, [], null);
  return {
    schemaVersion: VERDICT_SCHEMA_VERSION,
    verdict: j.verdict,
    summary: '',
    baseline: { version: baseline, runs: stop },
    candidate: { version: candidate, runs: stop },
    mode: config.mode,
    problems: [],
    checks: j.checks,
    next: j.next,
    decision: j.decision,
  };
}

/** One chain: every release's step verdict and creep verdict. */
export function simulateChain(
  config: GateConfig,
  model: NoiseModel,
  stepsPct: readonly number[],
  random: () => number,
): { releases: ChainRelease[]; records: HistoryRecord[] } {
  const setup = decisionSetupOf(config, model);
  const half: DecisionSetup = {
    ...setup,
    errorRates: { falseFail: (setup.errorRates?.falseFail ?? 0.01) / 2, falsePass: (setup.errorRates?.falsePass ?? 0.01) / 2 },
  };
  const records: HistoryRecord[] = [];
  const releases: ChainRelease[] = [];
  let kept = 1;
  stepsPct.forEach((stepPct, i) => {
    kept *= 1 - stepPct / 100;
    const step = syntheticGate(config, setup, stepPct, release(i), release(i + 1), random);
    let creep = judgeCreep(step, { setting: release(0), history: records }, config.tolerances.confidence);
    const direct = step.verdict === 'pass' && needsDirect(creep);
    if (direct) {
      const measured = syntheticGate(config, half, pct(1 - kept), release(0), release(i + 1), random);
      creep = judgeCreep(step, { setting: release(0), history: records, direct: { verdict: measured, report: 'creep-anchor' } }, config.tolerances.confidence);
    }
    releases.push({ step: step.verdict, creep: creep.verdict === 'skipped' ? 'pass' : creep.verdict, direct });
    records.push(
      recordOf(
        { ...step, creep },
        {
          product: config.target.system,
          profile: config.name,
          bench: { kind: config.bench.kind, versions: {} },
          date: new Date(Date.UTC(2026, 0, 1 + i)).toISOString(),
          report: 'README.md',
        },
      ),
    );
  });
  return { releases, records };
}

export interface ChainRates {
  trials: number;
  /** Steps that passed, % of all steps. */
  stepsPassed: number;
  /** The first release whose cumulative true change is beyond the material change of supported users; null if none. */
  materialAt: number | null;
  /** Chains whose creep check failed at or before `materialAt`, %. */
  creepFailedByMaterial: number;
  /** Chains whose creep check failed at any release, %; and passed at every release, %. */
  creepFailedAny: number;
  creepPassedAll: number;
  /** Creep checks that needed the direct pair, % of the releases judged. */
  directPct: number;
}

/** The chain's rates over `trials` seeded chains. */
export function chainRates(config: GateConfig, model: NoiseModel, options: ChainOptions): ChainRates {
  const random = seededRandom(options.seed);
  const material = config.tolerances.supportedUsers.materialPct ?? 100 * (1 - (1 - config.tolerances.supportedUsers.tolerancePct / 100) ** 2);
  let kept = 1;
  const materialIndex = options.stepsPct.findIndex((s) => (kept *= 1 - s / 100) < 1 - material / 100);
  const materialAt = materialIndex < 0 ? null : materialIndex + 1;
  let steps = 0;
  let passed = 0;
  let failedBy = 0;
  let failedAny = 0;
  let passedAll = 0;
  let direct = 0;
  let judged = 0;
  for (let t = 0; t < options.trials; t++) {
    const { releases } = simulateChain(config, model, options.stepsPct, random);
    steps += releases.length;
    passed += releases.filter((r) => r.step === 'pass').length;
    const firstFail = releases.findIndex((r) => r.creep === 'fail');
    if (firstFail >= 0) failedAny++;
    if (firstFail >= 0 && materialAt !== null && firstFail + 1 <= materialAt) failedBy++;
    if (releases.every((r) => r.creep === 'pass')) passedAll++;
    judged += releases.length - 1;
    direct += releases.filter((r) => r.direct).length;
  }
  const share = (n: number, of: number) => (of ? (100 * n) / of : 0);
  return {
    trials: options.trials,
    stepsPassed: share(passed, steps),
    materialAt,
    creepFailedByMaterial: share(failedBy, options.trials),
    creepFailedAny: share(failedAny, options.trials),
    creepPassedAll: share(passedAll, options.trials),
    directPct: share(direct, judged),
  };
}

/** The supported-users series of a simulated chain, as the report draws it and Otava reads it. */
function chainSeries(config: GateConfig, records: readonly HistoryRecord[], candidate: string): number[] {
  const view = seriesOf(records, candidate, config.tolerances.confidence);
  const users = view.series.find((s) => s.id === SUPPORTED_USERS);
  return users ? users.points.map((p) => 1 + p.deltaPct / 100) : [];
}

export interface OtavaRates {
  trials: number;
  /** Chains in which Otava named the release of the real shift, among its change points, %; and named it alone, %. */
  named: number;
  namedAlone: number;
  /** Unchanged chains in which Otava named any release, %. */
  falseNamed: number;
  version: string;
}

/**
 * Otava on simulated chains' supported-users series: one with a real shift of `shiftPct` %
 * at release `at` among unchanged releases, and as many unchanged chains for its false
 * namings. One Otava call for all of them.
 */
export async function otavaRates(
  config: GateConfig,
  model: NoiseModel,
  python: string,
  options: { trials: number; seed: number; releases: number; at: number; shiftPct: number },
): Promise<OtavaRates | { unavailable: string }> {
  const random = seededRandom(options.seed);
  const steps = (shift: boolean) => Array.from({ length: options.releases }, (_, i) => (shift && i + 1 === options.at ? options.shiftPct : 0));
  const series: OtavaSeries[] = [];
  for (const shift of [true, false]) {
    for (let t = 0; t < options.trials; t++) {
      const { records } = simulateChain(config, model, steps(shift), random);
      series.push({
        id: `${shift ? 'shift' : 'none'}-${t}`,
        values: chainSeries(config, records, release(options.releases)),
        minMagnitude: config.tolerances.supportedUsers.tolerancePct / 100,
      });
    }
  }
  const answer = await otavaChangePoints(python, series);
  if ('unavailable' in answer) return answer;
  const points = (id: string) => (answer.changePoints[id] ?? []).map((c) => c.index);
  let named = 0;
  let alone = 0;
  let falseNamed = 0;
  for (let t = 0; t < options.trials; t++) {
    const found = points(`shift-${t}`);
    if (found.includes(options.at)) named++;
    if (found.length === 1 && found[0] === options.at) alone++;
    if (points(`none-${t}`).length) falseNamed++;
  }
  const share = (n: number) => (100 * n) / options.trials;
  return { trials: options.trials, named: share(named), namedAlone: share(alone), falseNamed: share(falseNamed), version: answer.version };
}
