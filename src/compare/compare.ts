import type { Tolerances } from '../config/schema.ts';
import type { RunResult, Timing } from '../results/schema.ts';
import { InputError } from '../util/errors.ts';
import { decideRate, decideRelative, fmtPct } from './decide.ts';
import { RATE_METRICS, RELATIVE_METRICS } from './metrics.ts';
import { mean, pctChange } from './stats.ts';
import { VERDICT_SCHEMA_VERSION, type Check, type Verdict, type VerdictFile } from './verdict-schema.ts';

/** A per-handler (or per-store-method) change worth listing. */
export interface TimingDelta {
  name: string;
  field: 'avgMs' | 'p99Ms';
  baselineMs: number;
  candidateMs: number;
  deltaMs: number;
  deltaPct: number;
}

export interface TestComparison {
  name: string;
  type: RunResult['test']['type'];
  baseline: RunResult[];
  candidate: RunResult[];
  problems: string[];
  api: { worsened: TimingDelta[]; improved: TimingDelta[] };
  store: { worsened: TimingDelta[]; improved: TimingDelta[] };
  /** Metrics neither side measured (e.g. stack in use on a Python target). */
  notMeasured: string[];
}

export interface Comparison {
  verdict: VerdictFile;
  tests: TestComparison[];
}

function groupByTest(runs: readonly RunResult[]): Map<string, RunResult[]> {
  const groups = new Map<string, RunResult[]>();
  for (const run of runs) {
    const list = groups.get(run.test.name) ?? [];
    list.push(run);
    groups.set(run.test.name, list);
  }
  for (const list of groups.values()) list.sort((a, b) => a.repeat - b.repeat);
  return groups;
}

function singleVersion(runs: readonly RunResult[], side: string): string {
  const versions = [...new Set(runs.map((r) => r.target.version))].sort();
  if (versions.length !== 1) {
    throw new InputError(`the ${side} runs are of ${versions.length} versions (${versions.join(', ')}); pass the runs of one version per side`);
  }
  return versions[0] as string;
}

/** Test parameters that must agree between sides for a comparison to mean anything. */
function loadShape(run: RunResult): string {
  const { name: _name, ...params } = run.test;
  if (params.type === 'unbounded') {
    return JSON.stringify({ ...params, health: params.health.map((h) => [h.query, h.threshold]) });
  }
  return JSON.stringify(params);
}

/**
 * An unbounded run that stayed healthy up to its user cap (its mean is within one step of
 * maxUsers): supported users is then only a lower bound.
 */
function atCap(run: RunResult): boolean {
  return run.test.type === 'unbounded' && run.supportedUsers !== undefined && run.supportedUsers >= run.test.maxUsers - run.test.usersIncrement;
}

function runLabel(run: RunResult): string {
  return `${run.target.version} ${run.test.name} #${run.repeat}`;
}

/** Count-weighted mean timing per name across runs, so repeats merge into one row. */
function mergeTimings(runs: readonly RunResult[], pick: (r: RunResult) => Timing[]): Map<string, Timing> {
  const acc = new Map<string, { count: number; avg: number; p99: number; w: number }>();
  for (const run of runs) {
    for (const t of pick(run)) {
      const a = acc.get(t.name) ?? { count: 0, avg: 0, p99: 0, w: 0 };
      const w = Math.max(t.count, 1e-9);
      a.count += t.count;
      a.avg += t.avgMs * w;
      a.p99 += t.p99Ms * w;
      a.w += w;
      acc.set(t.name, a);
    }
  }
  const out = new Map<string, Timing>();
  for (const [name, a] of acc) out.set(name, { name, count: a.count, avgMs: a.avg / a.w, p99Ms: a.p99 / a.w });
  return out;
}

/** Worsened/improved lists, skipping changes under either listing threshold (as the seed tooling does). */
export function timingDeltas(
  baseline: readonly RunResult[],
  candidate: readonly RunResult[],
  pick: (r: RunResult) => Timing[],
  listing: Tolerances['listing'],
): { worsened: TimingDelta[]; improved: TimingDelta[] } {
  const b = mergeTimings(baseline, pick);
  const c = mergeTimings(candidate, pick);
  const worsened: TimingDelta[] = [];
  const improved: TimingDelta[] = [];
  for (const [name, bt] of b) {
    const ct = c.get(name);
    if (!ct) continue;
    for (const field of ['avgMs', 'p99Ms'] as const) {
      const baselineMs = bt[field];
      const candidateMs = ct[field];
      if (!(baselineMs > 0)) continue;
      const deltaMs = candidateMs - baselineMs;
      const deltaPct = pctChange(baselineMs, candidateMs);
      if (Math.abs(deltaPct) < listing.minDeltaPct || Math.abs(deltaMs) < listing.minDeltaMs) continue;
      (deltaMs > 0 ? worsened : improved).push({ name, field, baselineMs, candidateMs, deltaMs, deltaPct });
    }
  }
  const byMagnitude = (x: TimingDelta, y: TimingDelta) =>
    Math.abs(y.deltaPct) - Math.abs(x.deltaPct) || x.name.localeCompare(y.name) || x.field.localeCompare(y.field);
  return { worsened: worsened.sort(byMagnitude), improved: improved.sort(byMagnitude) };
}

/** Problems that stop a run from being judged. */
function runProblems(run: RunResult): string[] {
  const problems: string[] = [];
  if (run.status !== 'completed') {
    const why = run.problems.length ? `: ${run.problems.join('; ')}` : '';
    problems.push(`${runLabel(run)} ${run.status === 'invalid' ? 'is invalid' : run.status}${why}`);
  } else {
    for (const p of run.problems) problems.push(`${runLabel(run)}: ${p}`);
  }
  if (run.generator?.saturated && run.status === 'completed') {
    problems.push(`${runLabel(run)}: the load generator saturated, so the bench, not the target, may have been the bottleneck`);
  }
  return problems;
}

/** A check that cannot be judged; never passes. */
function blockedCheck(base: Omit<Check, 'verdict' | 'reason' | 'deltaPct' | 'interval' | 'method'>, reason: string): Check {
  return { ...base, deltaPct: null, interval: null, method: 'none', verdict: 'inconclusive', reason };
}

export function compareRuns(baselineRuns: readonly RunResult[], candidateRuns: readonly RunResult[], tolerances: Tolerances): Comparison {
  if (!baselineRuns.length) throw new InputError('no baseline run results given (--baseline <run.json>...)');
  if (!candidateRuns.length) throw new InputError('no candidate run results given (--candidate <run.json>...)');
  const baselineVersion = singleVersion(baselineRuns, 'baseline');
  const candidateVersion = singleVersion(candidateRuns, 'candidate');
  const b = groupByTest(baselineRuns);
  const c = groupByTest(candidateRuns);
  const globalProblems: string[] = [];
  const systems = new Set([...baselineRuns, ...candidateRuns].map((r) => r.target.system));
  if (systems.size > 1) globalProblems.push(`the runs are of different target systems (${[...systems].sort().join(', ')})`);

  const names = [...new Set([...b.keys(), ...c.keys()])].sort();
  const checks: Check[] = [];
  const tests: TestComparison[] = [];

  for (const name of names) {
    const bRuns = b.get(name) ?? [];
    const cRuns = c.get(name) ?? [];
    const type = (bRuns[0] ?? cRuns[0])!.test.type;
    for (const run of [...bRuns, ...cRuns]) {
      if (run.test.type !== type) {
        throw new InputError(`test "${name}" is ${type} in one run and ${run.test.type} in ${runLabel(run)}; compare runs of the same test type`);
      }
    }
    const problems: string[] = [];
    if (!bRuns.length) problems.push(`test "${name}" has no baseline runs`);
    if (!cRuns.length) problems.push(`test "${name}" has no candidate runs`);
    const shapes = new Set([...bRuns, ...cRuns].map(loadShape));
    if (shapes.size > 1) problems.push(`test "${name}" was run with different parameters on the two sides, so the load is not comparable`);
    for (const run of [...bRuns, ...cRuns]) problems.push(...runProblems(run));
    const repeats = (runs: RunResult[]) => new Set(runs.map((r) => r.repeat)).size !== runs.length;
    if (repeats(bRuns) || repeats(cRuns)) problems.push(`test "${name}" has two runs with the same repeat index on one side`);

    const comparison: TestComparison = {
      name,
      type,
      baseline: bRuns,
      candidate: cRuns,
      problems,
      api: timingDeltas(bRuns, cRuns, (r) => r.api, tolerances.listing),
      store: timingDeltas(bRuns, cRuns, (r) => r.store, tolerances.listing),
      notMeasured: [],
    };
    tests.push(comparison);

    // Only completed runs carry numbers worth judging; a crashed or invalid run's partial
    // data could fake a regression or hide one. Their problems still block a pass.
    const bJudged = bRuns.filter((r) => r.status === 'completed');
    const cJudged = cRuns.filter((r) => r.status === 'completed');
    const noJudgeableRuns = !bJudged.length || !cJudged.length;

    for (const metric of RELATIVE_METRICS) {
      if (!metric.appliesTo.includes(type)) continue;
      const tol = tolerances[metric.key];
      const gating = tol.gating && metric.gatesIn.includes(type);
      const base = {
        id: `${name}.${metric.key}`,
        metric: metric.label,
        test: name,
        unit: metric.unit,
        tolerancePct: tol.tolerancePct,
        worse: metric.worse,
        gating,
      };
      if (noJudgeableRuns) {
        if (gating) checks.push(blockedCheck({ ...base, baseline: null, candidate: null }, `no completed runs on both sides: ${problems.join('; ')}`));
        continue;
      }
      const bVals = bJudged.map(metric.extract);
      const cVals = cJudged.map(metric.extract);
      const bOk = bVals.filter((v): v is number => v !== undefined);
      const cOk = cVals.filter((v): v is number => v !== undefined);
      const bMean = bOk.length ? mean(bOk) : null;
      const cMean = cOk.length ? mean(cOk) : null;
      if (!bOk.length && !cOk.length) {
        if (metric.key === 'supportedUsers') {
          checks.push({ ...blockedCheck({ ...base, baseline: null, candidate: null }, 'no run reported supported users') });
        } else {
          comparison.notMeasured.push(metric.label);
        }
        continue;
      }
      if (bOk.length < bVals.length || cOk.length < cVals.length) {
        const side = bOk.length < bVals.length ? 'baseline' : 'candidate';
        checks.push(blockedCheck({ ...base, baseline: bMean, candidate: cMean }, `missing in some ${side} runs, so the sides cannot be compared`));
        continue;
      }
      if (bOk.some((v) => !(v > 0))) {
        checks.push(blockedCheck({ ...base, baseline: bMean, candidate: cMean }, 'the baseline value is zero, so no relative change can be computed'));
        continue;
      }
      const d = decideRelative(bOk, cOk, tol.tolerancePct, tol.noiseFloorPct, metric.worse, tolerances.confidence);
      let verdict = d.verdict;
      let reason = d.reason;
      if (!gating && (verdict === 'fail' || verdict === 'inconclusive')) {
        verdict = 'warn';
        reason = `${reason} (context only: ${tol.gating ? `not gating in ${type} tests, where the load differs by design` : 'configured as non-gating'})`;
      }
      const blockers = [...problems];
      if (metric.key === 'supportedUsers') {
        for (const run of [...bJudged, ...cJudged]) {
          if (run.converged === false) blockers.push(`${runLabel(run)} did not converge (the coordinator hit its maximum duration before equilibrium)`);
        }
        // A baseline that reached maxUsers only gives a lower bound: the true loss is at
        // least the one measured, so a fail stands but a pass cannot be trusted.
        for (const run of bJudged) {
          if (atCap(run)) blockers.push(`${runLabel(run)} reached maxUsers (${(run.test as { maxUsers: number }).maxUsers}), so its ceiling is unknown; raise maxUsers`);
        }
      }
      if (gating && blockers.length && verdict === 'pass') {
        verdict = 'inconclusive';
        reason = `${reason}, but it cannot pass: ${blockers.join('; ')}`;
      }
      checks.push({
        ...base,
        baseline: bMean,
        candidate: cMean,
        deltaPct: d.deltaPct,
        interval: d.interval ? [d.interval.low, d.interval.high] : null,
        method: d.method,
        verdict,
        reason,
      });
    }

    for (const metric of RATE_METRICS) {
      const tol = tolerances[metric.key];
      const base = {
        id: `${name}.${metric.key}`,
        metric: metric.label,
        test: name,
        unit: '% of requests',
        tolerancePct: tol.tolerancePct,
        worse: 'higher' as const,
        gating: tol.gating,
      };
      const counts = (runs: RunResult[]) => runs.map((r) => ({ events: metric.events(r), requests: r.totals.requests }));
      const rate = (runs: RunResult[]) => {
        const req = runs.reduce((s, r) => s + r.totals.requests, 0);
        return req ? (100 * runs.reduce((s, r) => s + metric.events(r), 0)) / req : null;
      };
      if (noJudgeableRuns) {
        checks.push(blockedCheck({ ...base, baseline: rate(bJudged), candidate: rate(cJudged) }, `no completed runs on both sides: ${problems.join('; ')}`));
        continue;
      }
      const noRequests = [...bJudged, ...cJudged].filter((r) => r.totals.requests === 0);
      if (noRequests.length) {
        checks.push(
          blockedCheck(
            { ...base, baseline: rate(bJudged), candidate: rate(cJudged) },
            `no requests were recorded in ${noRequests.map(runLabel).join(', ')}: the load never reached the target`,
          ),
        );
        continue;
      }
      const d = decideRate(counts(bJudged), counts(cJudged), tol.tolerancePct, tol.ignoreBelowPct, tolerances.confidence);
      let verdict = d.verdict;
      let reason = d.reason;
      if (!tol.gating && (verdict === 'fail' || verdict === 'inconclusive')) {
        verdict = 'warn';
        reason = `${reason} (context only: configured as non-gating)`;
      }
      if (tol.gating && problems.length && verdict === 'pass') {
        verdict = 'inconclusive';
        reason = `${reason}, but it cannot pass: ${problems.join('; ')}`;
      }
      checks.push({
        ...base,
        baseline: rate(bJudged),
        candidate: rate(cJudged),
        deltaPct: d.deltaPct,
        interval: d.interval ? [d.interval.low, d.interval.high] : null,
        method: d.method,
        verdict,
        reason,
      });
    }
  }

  const allProblems = [...globalProblems, ...tests.flatMap((t) => t.problems)];
  const gatingChecks = checks.filter((ch) => ch.gating);
  let verdict: Verdict;
  if (gatingChecks.some((ch) => ch.verdict === 'fail')) verdict = 'fail';
  else if (allProblems.length || gatingChecks.some((ch) => ch.verdict === 'inconclusive') || !gatingChecks.length) verdict = 'inconclusive';
  else verdict = 'pass';
  if (!gatingChecks.length) allProblems.push('no gating check could be computed from these runs');

  return {
    verdict: {
      schemaVersion: VERDICT_SCHEMA_VERSION,
      verdict,
      summary: summarize(verdict, checks, allProblems),
      baseline: { version: baselineVersion, runs: baselineRuns.length },
      candidate: { version: candidateVersion, runs: candidateRuns.length },
      problems: allProblems,
      checks,
    },
    tests,
  };
}

function summarize(verdict: Verdict, checks: readonly Check[], problems: readonly string[]): string {
  const failed = checks.filter((c) => c.gating && c.verdict === 'fail');
  const unsure = checks.filter((c) => c.gating && c.verdict === 'inconclusive');
  const describe = (c: Check) => `${c.metric} (${c.test}) ${c.deltaPct === null ? 'not judged' : fmtPct(c.deltaPct)}`;
  if (verdict === 'fail') return `Regression: ${failed.map(describe).join(', ')}`;
  if (verdict === 'inconclusive') {
    if (problems.length) return `Cannot judge: ${problems[0]}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}`;
    return `Cannot judge: ${unsure.map(describe).join(', ')}`;
  }
  const users = checks.filter((c) => c.id.endsWith('.supportedUsers') && c.deltaPct !== null);
  const tail = users.length ? `; supported users ${users.map((c) => fmtPct(c.deltaPct as number)).join(', ')}` : '';
  return `No regression beyond tolerance in ${checks.filter((c) => c.gating).length} gating checks${tail}`;
}
