import type { Tolerances } from '../config/schema.ts';
import { assumedModel, type NoiseModel } from '../noise/model.ts';
import type { RunResult } from '../results/schema.ts';
import { runsMode, unpairedDuets, type RunMode } from './mode.ts';
import { InputError } from '../util/errors.ts';
import { fmtDelta } from '../report/format.ts';
import { judge, materialPctOf, type CheckBase, type CheckInput, type Judgement } from './decision.ts';
import type { ErrorRates } from './sequential.ts';
import { atCap, groupByTest, runLabel, singleCpuQuota, singleVersion, testProblems } from './group.ts';
import { timingDeltas } from './handler-deltas.ts';
import type { Comparison, TestComparison } from '../results/comparison.ts';
import { RATE_METRICS, RELATIVE_METRICS, type RateMetric, type RelativeMetric } from '../results/judged-metrics.ts';
import type { RunProbes } from './speed-adjust.ts';
import { mean } from '../util/stats.ts';
import { disturbedDuets, disturbedLines, nothingLeft, undisturbed, type DisturbedDuet } from './disturbed.ts';
import { sideBuild, VERDICT_SCHEMA_VERSION, type Check, type Decision, type Verdict } from '../results/verdict-schema.ts';

/** How the decision is set up: the noise model and the pair limits (the config's repeats and maxRepeats). */
export interface CompareSetup {
  model?: NoiseModel;
  /** The config's `noiseModel` as written, for verdict.json. */
  modelPath?: string | null;
  minPairs?: number;
  maxPairs?: number;
  /** The config's mode; the runs must have run in it. */
  mode?: RunMode;
  /** The config's error rates; 1 % and 1 % when absent. */
  errorRates?: ErrorRates;
}

/** Grouping and shape checks, then the metrics per check, then the sequential decision. */
export function compareRuns(
  baselineRuns: readonly RunResult[],
  candidateRuns: readonly RunResult[],
  tolerances: Tolerances,
  setup: CompareSetup = {},
): Comparison {
  if (!baselineRuns.length) throw new InputError('no baseline run results given (--baseline <run.json>...)');
  if (!candidateRuns.length) throw new InputError('no candidate run results given (--candidate <run.json>...)');
  const baselineVersion = singleVersion(baselineRuns, 'baseline');
  const candidateVersion = singleVersion(candidateRuns, 'candidate');
  singleCpuQuota(baselineRuns, 'baseline');
  singleCpuQuota(candidateRuns, 'candidate');
  // A disturbed duet's runs are named in the verdict and judged nowhere (disturbed.ts).
  const disturbed = disturbedDuets(baselineRuns, candidateRuns);
  const grouped: GroupedRuns = { baseline: groupByTest(undisturbed(baselineRuns)), candidate: groupByTest(undisturbed(candidateRuns)) };
  const testType = testTypes(baselineRuns, candidateRuns);
  const mode = runsMode(baselineRuns, candidateRuns, setup.mode);
  const globalProblems: string[] = mode === 'duet' ? unpairedDuets(undisturbed(baselineRuns), undisturbed(candidateRuns)) : [];
  oneChatServer(baselineRuns, candidateRuns);
  const { tests, inputs } = compareTests(testType, grouped, disturbed, tolerances);
  const allProblems = [...globalProblems, ...tests.flatMap((t) => t.problems)];
  const j = decide(inputs, allProblems, tolerances, setup);

  return {
    verdict: {
      schemaVersion: VERDICT_SCHEMA_VERSION,
      verdict: j.verdict,
      summary: summarize(j.verdict, j.checks, allProblems, j.next, j.decision),
      baseline: { version: baselineVersion, runs: baselineRuns.length, ...sideBuild(baselineRuns) },
      candidate: { version: candidateVersion, runs: candidateRuns.length, ...sideBuild(candidateRuns) },
      mode,
      ...(disturbed.length ? { disturbed: disturbedLines(disturbed) } : {}),
      problems: allProblems,
      checks: j.checks,
      next: j.next,
      decision: j.decision,
    },
    tests,
  };
}

/** Each side's undisturbed runs by test name. */
interface GroupedRuns {
  baseline: Map<string, RunResult[]>;
  candidate: Map<string, RunResult[]>;
}

/** Every test given, with the type of its first run: one whose every duet was disturbed still has its checks, blocked. */
function testTypes(baselineRuns: readonly RunResult[], candidateRuns: readonly RunResult[]): Map<string, RunResult['test']['type']> {
  const testType = new Map<string, RunResult['test']['type']>();
  for (const r of [...baselineRuns, ...candidateRuns]) if (!testType.has(r.test.name)) testType.set(r.test.name, r.test.type);
  return testType;
}

/** Two chat servers are two products, not a baseline and its candidate: bad input, not a judgement. */
function oneChatServer(baselineRuns: readonly RunResult[], candidateRuns: readonly RunResult[]): void {
  const systems = (runs: readonly RunResult[]) => [...new Set(runs.map((r) => r.target.system))].sort().join(' and ');
  if (new Set([...baselineRuns, ...candidateRuns].map((r) => r.target.system)).size > 1) {
    throw new InputError(
      `the runs are of different chat servers (target.system: baseline ${systems(baselineRuns)}, candidate ${systems(candidateRuns)}); compare runs of one chat server`,
    );
  }
}

/** One comparison per test, in name order, and the check inputs of each; a test whose runs disagree on its type is bad input. */
function compareTests(
  testType: ReadonlyMap<string, RunResult['test']['type']>,
  grouped: GroupedRuns,
  disturbed: readonly DisturbedDuet[],
  tolerances: Tolerances,
): { tests: TestComparison[]; inputs: CheckInput[] } {
  const inputs: CheckInput[] = [];
  const tests: TestComparison[] = [];
  for (const name of [...testType.keys()].sort()) {
    const bRuns = grouped.baseline.get(name) ?? [];
    const cRuns = grouped.candidate.get(name) ?? [];
    const type = (bRuns[0] ?? cRuns[0])?.test.type ?? testType.get(name)!;
    for (const run of [...bRuns, ...cRuns]) {
      if (run.test.type !== type) {
        throw new InputError(`test "${name}" is ${type} in one run and ${run.test.type} in ${runLabel(run)}; compare runs of the same test type`);
      }
    }
    const comparison: TestComparison = {
      name,
      type,
      baseline: bRuns,
      candidate: cRuns,
      problems: [...nothingLeft(name, disturbed, { baseline: bRuns, candidate: cRuns }), ...testProblems(name, bRuns, cRuns)],
      api: timingDeltas(bRuns, cRuns, (r) => r.api, tolerances.listing),
      store: timingDeltas(bRuns, cRuns, (r) => r.store, tolerances.listing),
      notMeasured: [],
    };
    tests.push(comparison);
    inputs.push(...checkInputs(comparison, tolerances));
  }
  return { tests, inputs };
}

/** The sequential decision over every check; `problems` gains a line when no gating check could be computed. */
function decide(inputs: readonly CheckInput[], problems: string[], tolerances: Tolerances, setup: CompareSetup): Judgement {
  const j = judge(
    inputs,
    {
      model: setup.model ?? assumedModel(),
      tolerances,
      minPairs: setup.minPairs ?? 1,
      maxPairs: Math.max(setup.maxPairs ?? 3, setup.minPairs ?? 1),
      ...(setup.errorRates ? { errorRates: setup.errorRates } : {}),
    },
    problems,
    setup.modelPath ?? null,
  );
  if (!j.checks.some((ch) => ch.gating)) problems.push('no gating check could be computed from these runs');
  return j;
}

/**
 * Metric extraction: one CheckInput per metric of a test, with its values in pair order,
 * or why it cannot be judged. Only completed runs carry numbers worth judging; a crashed
 * or invalid run's partial data could fake a regression or hide one. Their problems
 * still block a pass.
 */
function checkInputs(t: TestComparison, tolerances: Tolerances): CheckInput[] {
  const judged: JudgedRuns = {
    baseline: t.baseline.filter((r) => r.status === 'completed'),
    candidate: t.candidate.filter((r) => r.status === 'completed'),
  };
  const relative = RELATIVE_METRICS.filter((metric) => metric.appliesTo.includes(t.type)).flatMap(
    (metric) => relativeInput(t, metric, tolerances, judged) ?? [],
  );
  const rates = RATE_METRICS.map((metric) => rateInput(t, metric, tolerances, judged));
  return [...relative, ...rates];
}

/** The completed runs of each side: the only ones judged. */
interface JudgedRuns {
  baseline: RunResult[];
  candidate: RunResult[];
}

const noJudgeableRuns = (judged: JudgedRuns): boolean => !judged.baseline.length || !judged.candidate.length;
const notJudged = (t: TestComparison): string => `no completed runs on both sides: ${t.problems.join('; ')}`;

/** One relative metric's input; none when it is not gating and cannot be judged, or neither side measured it. */
function relativeInput(t: TestComparison, metric: RelativeMetric, tolerances: Tolerances, judged: JudgedRuns): CheckInput | undefined {
  const { baseline: bJudged, candidate: cJudged } = judged;
  const tol = tolerances[metric.key];
  const gating = tol.gating && metric.gatesIn.includes(t.type);
  const base: CheckBase = {
    id: `${t.name}.${metric.key}`,
    metric: metric.label,
    test: t.name,
    unit: metric.unit,
    tolerancePct: tol.tolerancePct,
    worse: metric.worse,
    gating,
  };
  const input: CheckInput = {
    base,
    key: metric.key,
    materialPct: materialPctOf(tolerances, metric.key),
    ...(tol.weight !== undefined ? { weight: tol.weight } : {}),
    blockers: [...t.problems],
    ...(tol.gating && !gating ? { contextOnly: `not gating in ${t.type} tests, where the load differs by design` } : {}),
  };
  const block = (reason: string, baseline: number | null, candidate: number | null): CheckInput => ({ ...input, blocked: { reason, baseline, candidate } });
  if (noJudgeableRuns(judged)) return gating ? block(notJudged(t), null, null) : undefined;
  const bVals = bJudged.map(metric.extract);
  const cVals = cJudged.map(metric.extract);
  const bOk = bVals.filter((v): v is number => v !== undefined);
  const cOk = cVals.filter((v): v is number => v !== undefined);
  const bMean = bOk.length ? mean(bOk) : null;
  const cMean = cOk.length ? mean(cOk) : null;
  if (!bOk.length && !cOk.length) {
    if (metric.key === 'supportedUsers') return block('no run reported supported users', null, null);
    t.notMeasured.push(metric.label);
    return undefined;
  }
  if (bOk.length < bVals.length || cOk.length < cVals.length) {
    return block(`missing in some ${bOk.length < bVals.length ? 'baseline' : 'candidate'} runs, so the sides cannot be compared`, bMean, cMean);
  }
  if ([...bOk, ...cOk].some((v) => !(v > 0))) return block('a value is zero, so no relative change can be computed', bMean, cMean);
  if (metric.key === 'supportedUsers') input.blockers.push(...capacityBlockers(judged));
  // Every judged run has a value here (checked above), so repeats and probes line up with the values.
  const probes = runProbes(bJudged, cJudged);
  // Duets: the slot beside each baseline run, so the decision can weigh the bench's slot effect.
  const slots = bJudged.every((r) => r.duet) ? { candidateInA: bJudged.map((r) => r.duet?.slot === 'b') } : {};
  return {
    ...input,
    relative: {
      baseline: bOk,
      candidate: cOk,
      pairs: { baseline: bJudged.map((r) => r.repeat), candidate: cJudged.map((r) => r.repeat) },
      ...probes,
      ...slots,
    },
  };
}

/** Why supported users cannot pass: a run that did not converge, or a baseline at its cap. */
function capacityBlockers({ baseline, candidate }: JudgedRuns): string[] {
  const blockers: string[] = [];
  for (const run of [...baseline, ...candidate]) {
    if (run.converged === false) blockers.push(`${runLabel(run)} did not converge (the coordinator hit its maximum duration before equilibrium)`);
  }
  // A baseline that reached maxUsers only gives a lower bound: the true loss is at
  // least the one measured, so a fail stands but a pass cannot be trusted.
  for (const run of baseline) {
    if (atCap(run))
      blockers.push(`${runLabel(run)} reached maxUsers (${(run.test as { maxUsers: number }).maxUsers}), so its ceiling is unknown; raise maxUsers`);
  }
  return blockers;
}

/** One rate metric's input: the events and requests of each run, or why they cannot be judged. */
function rateInput(t: TestComparison, metric: RateMetric, tolerances: Tolerances, judged: JudgedRuns): CheckInput {
  const { baseline: bJudged, candidate: cJudged } = judged;
  const tol = tolerances[metric.key];
  const base: CheckBase = {
    id: `${t.name}.${metric.key}`,
    metric: metric.label,
    test: t.name,
    unit: '% of requests',
    tolerancePct: tol.tolerancePct,
    worse: 'higher',
    gating: tol.gating,
  };
  const input: CheckInput = {
    base,
    key: metric.key,
    materialPct: materialPctOf(tolerances, metric.key),
    ...(tol.weight !== undefined ? { weight: tol.weight } : {}),
    blockers: [...t.problems],
  };
  const rate = (runs: RunResult[]) => {
    const req = runs.reduce((s, r) => s + r.totals.requests, 0);
    return req ? (100 * runs.reduce((s, r) => s + metric.events(r), 0)) / req : null;
  };
  if (noJudgeableRuns(judged)) return { ...input, blocked: { reason: notJudged(t), baseline: rate(bJudged), candidate: rate(cJudged) } };
  const noRequests = [...bJudged, ...cJudged].filter((r) => r.totals.requests === 0);
  if (noRequests.length) {
    const reason = `no requests were recorded in ${noRequests.map(runLabel).join(', ')}: the load never reached the target`;
    return { ...input, blocked: { reason, baseline: rate(bJudged), candidate: rate(cJudged) } };
  }
  const counts = (runs: RunResult[]) => runs.map((r) => ({ events: metric.events(r), requests: r.totals.requests }));
  return { ...input, rate: { baseline: counts(bJudged), candidate: counts(cJudged), ignoreBelowPct: tol.ignoreBelowPct } };
}

/**
 * The speed probe's CPU ms per run, when every run of both sides carries one of the same
 * workload and interpreter (the local bench records it; others do not), with the hosts the
 * runs ran on.
 */
function runProbes(baseline: readonly RunResult[], candidate: readonly RunResult[]): { probes: RunProbes } | { noProbes: string } {
  const all = [...baseline, ...candidate];
  const without = all.filter((r) => !r.speedProbe);
  if (without.length === all.length) return { noProbes: 'no run carries a speed probe' };
  if (without.length) return { noProbes: `${without.map(runLabel).join(', ')} ${without.length === 1 ? 'carries' : 'carry'} no speed probe` };
  const workloads = [...new Set(all.map((r) => r.speedProbe!.workload))].sort();
  if (workloads.length > 1) return { noProbes: `the runs' speed probes ran different workloads or interpreters (${workloads.join('; ')})` };
  const ms = (runs: readonly RunResult[]) => runs.map((r) => r.speedProbe!.cpuMsMedian);
  // The hosts the runs name, so a speed fit measured on another machine is not applied to them.
  const hosts = new Map(
    all.flatMap((r) =>
      r.bench.host ? [[`${r.bench.host.cpuModel}\n${r.bench.host.cores}`, { cpuModel: r.bench.host.cpuModel, cores: r.bench.host.cores }] as const] : [],
    ),
  );
  return {
    probes: { baseline: ms(baseline), candidate: ms(candidate), workload: workloads[0] as string, ...(hosts.size ? { machines: [...hosts.values()] } : {}) },
  };
}

function summarize(verdict: Verdict, checks: readonly Check[], problems: readonly string[], next: 'stop' | 'repeat', decision: Decision): string {
  const { stopReason } = decision;
  const failed = checks.filter((c) => c.gating && c.verdict === 'fail');
  const unsure = checks.filter((c) => c.gating && c.verdict === 'inconclusive');
  const describe = (c: Check) => `${c.metric} (${c.test}) ${fmtDelta(c)}`;
  if (verdict === 'fail') return `Regression: ${failed.map(describe).join(', ')}`;
  if (verdict === 'inconclusive') {
    if (problems.length) return `Cannot judge: ${problems[0]}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}`;
    if (next === 'repeat') return `Undecided so far: ${stopReason}`;
    return `Cannot judge: ${unsure.map(describe).join(', ')}; ${stopReason}`;
  }
  const users = checks.filter((c) => c.id.endsWith('.supportedUsers') && c.deltaPct !== null);
  const tail = users.length ? `; supported users ${users.map(fmtDelta).join(', ')}` : '';
  return `No regression beyond tolerance in ${checks.filter((c) => c.gating).length} gating checks${tail}`;
}
