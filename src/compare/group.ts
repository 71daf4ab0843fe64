import type { Tolerances } from '../config/schema.ts';
import type { RunResult, Timing } from '../results/schema.ts';
import type { TimingDelta } from '../results/comparison.ts';
import { InputError } from '../util/errors.ts';
import { pctChange } from '../util/stats.ts';

/**
 * Grouping and shape checks: which runs belong together, and what stops a run from
 * being judged. No decision is made here.
 */

export function groupByTest(runs: readonly RunResult[]): Map<string, RunResult[]> {
  const groups = new Map<string, RunResult[]>();
  for (const run of runs) {
    const list = groups.get(run.test.name) ?? [];
    list.push(run);
    groups.set(run.test.name, list);
  }
  // Pair order: the sequential decision replays the runs as they were scheduled.
  for (const list of groups.values()) list.sort((a, b) => a.repeat - b.repeat);
  return groups;
}

export function singleVersion(runs: readonly RunResult[], side: string): string {
  const versions = [...new Set(runs.map((r) => r.target.version))].sort();
  if (versions.length !== 1) {
    throw new InputError(`the ${side} runs are of ${versions.length} versions (${versions.join(', ')}); pass the runs of one version per side`);
  }
  return versions[0] as string;
}

/**
 * The CPU quota one side's runs were measured under (undefined: none). Runs of one side
 * under different quotas are different benches, as runs of two versions are.
 */
export function singleCpuQuota(runs: readonly RunResult[], side: string): number | undefined {
  const quotas = [...new Set(runs.map((r) => r.target.cpuQuota))];
  if (quotas.length > 1) {
    const named = quotas.map((q) => (q === undefined ? 'none' : String(q))).sort();
    throw new InputError(`the ${side} runs were measured under ${quotas.length} different CPU quotas (${named.join(', ')}); pass the runs of one CPU quota per side`);
  }
  return quotas[0];
}

/** Test parameters that must agree between sides for a comparison to mean anything. */
export function loadShape(run: RunResult): string {
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
export function atCap(run: RunResult): boolean {
  return run.test.type === 'unbounded' && run.supportedUsers !== undefined && run.supportedUsers >= run.test.maxUsers - run.test.usersIncrement;
}

export function runLabel(run: RunResult): string {
  return `${run.target.version} ${run.test.name} #${run.repeat}`;
}

/** Problems that stop a run from being judged. */
export function runProblems(run: RunResult): string[] {
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

/** Problems of one test's two sides: missing sides, unequal load shapes, bad runs, duplicate repeats. */
export function testProblems(name: string, bRuns: readonly RunResult[], cRuns: readonly RunResult[]): string[] {
  const problems: string[] = [];
  if (!bRuns.length) problems.push(`test "${name}" has no baseline runs`);
  if (!cRuns.length) problems.push(`test "${name}" has no candidate runs`);
  const shapes = new Set([...bRuns, ...cRuns].map(loadShape));
  if (shapes.size > 1) problems.push(`test "${name}" was run with different parameters on the two sides, so the load is not comparable`);
  for (const run of [...bRuns, ...cRuns]) problems.push(...runProblems(run));
  const repeats = (runs: readonly RunResult[]) => new Set(runs.map((r) => r.repeat)).size !== runs.length;
  if (repeats(bRuns) || repeats(cRuns)) problems.push(`test "${name}" has two runs with the same repeat index on one side`);
  return problems;
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
