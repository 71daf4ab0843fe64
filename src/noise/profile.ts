import { createHash } from 'node:crypto';
import { RATE_METRICS, RELATIVE_METRICS } from '../results/judged-metrics.ts';
import type { GateConfig, Tolerances } from '../config/schema.ts';
import type { NoiseProfile } from './schema.ts';

/** One gating check a config will produce: test × metric. */
export interface GatingMetric {
  test: string;
  testType: 'bounded' | 'unbounded';
  key: string;
  worse: 'lower' | 'higher';
  rate: boolean;
}

/** The gating checks of a config, in the order compare produces them. */
export function gatingMetrics(config: Pick<GateConfig, 'tests' | 'tolerances'>): GatingMetric[] {
  const out: GatingMetric[] = [];
  const tests = [...config.tests].sort((a, b) => a.name.localeCompare(b.name));
  for (const test of tests) {
    for (const m of RELATIVE_METRICS) {
      if (m.appliesTo.includes(test.type) && m.gatesIn.includes(test.type) && config.tolerances[m.key].gating) {
        out.push({ test: test.name, testType: test.type, key: m.key, worse: m.worse, rate: false });
      }
    }
    for (const m of RATE_METRICS) {
      if (config.tolerances[m.key].gating) out.push({ test: test.name, testType: test.type, key: m.key, worse: 'higher', rate: true });
    }
  }
  return out;
}

const hash16 = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);

/** The hardware fields of an AWS bench that change what a run measures (src/aws/presets.ts fills the rest from the preset). */
const AWS_HARDWARE = [
  'appInstanceType',
  'appCount',
  'agentInstanceType',
  'agentCount',
  'proxyInstanceType',
  'dbInstanceType',
  'dbCount',
  'openSearchCount',
] as const;

/**
 * The bench a model is measured on, as the config names it: the kind, and on AWS the
 * preset with every hardware field the config sets over it; on the local bench the CPU
 * lists of the target and the engine. Region, budget and dataset source are left out:
 * they do not change the machines.
 */
function benchShape(bench: GateConfig['bench']): Record<string, string | number> {
  if (bench.kind === 'local') return { kind: 'local', targetCpus: bench.local.targetCpus, engineCpus: bench.local.engineCpus };
  const shape: Record<string, string | number> = { kind: 'aws', preset: bench.aws.preset };
  for (const key of AWS_HARDWARE) {
    const value = bench.aws[key];
    if (value !== undefined) shape[key] = value;
  }
  return shape;
}

/**
 * The profile a noise model belongs to: the config's name, a hash of its tests (the load
 * shapes) and gating metric set, each test's own hash, and the bench. A model measured
 * under other load shapes or on other machines says nothing about these; the loader
 * compares each test's own hash, so a check or test added since leaves the rest valid.
 */
export function noiseProfile(config: Pick<GateConfig, 'name' | 'tests' | 'tolerances' | 'bench'>): NoiseProfile {
  const metrics = gatingMetrics(config)
    .map((m) => `${m.test}.${m.key}`)
    .sort();
  const tests = Object.fromEntries([...config.tests].sort((a, b) => a.name.localeCompare(b.name)).map((t) => [t.name, hash16(t)]));
  return { name: config.name, hash: hash16({ tests: config.tests, metrics }), metrics, tests, bench: benchShape(config.bench) };
}

/** z(0.975) = 1.959963984540054 (scipy.stats.norm.ppf(0.975), scipy 1.x). */
const Z975 = 1.959963984540054;

/**
 * Without a measured figure, the run-to-run spread the tolerances imply: the noise floor
 * (relative metrics) or the tolerance (rates) read as the ±95 % band of the difference
 * of two runs, as the seed reports use "±5 % usual variance". So σ = ln(1 + floor) / (1.96·√2).
 */
export function assumedSdLog(tolerances: Tolerances, key: string): number {
  const tol = tolerances[key as keyof Tolerances] as { noiseFloorPct?: number; tolerancePct: number };
  const floor = tol.noiseFloorPct ?? tol.tolerancePct;
  return Math.max(Math.log1p(floor / 100), 1e-3) / (Z975 * Math.SQRT2);
}

/**
 * The assumed σ as a noise model file states it: per run, or in a duet model per duet (the
 * difference of two runs, √2 times it), as the model's measured entries are.
 */
export function assumedEntrySdLog(config: GateConfig, key: string): number {
  return assumedSdLog(config.tolerances, key) * (config.mode === 'duet' ? Math.SQRT2 : 1);
}
