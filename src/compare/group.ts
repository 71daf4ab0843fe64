import type { RunResult } from '../results/schema.ts';
import { InputError } from '../util/errors.ts';

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
    throw new InputError(
      `the ${side} runs were measured under ${quotas.length} different CPU quotas (${named.join(', ')}); pass the runs of one CPU quota per side`,
    );
  }
  return quotas[0];
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
export function atCap(run: RunResult): boolean {
  return run.test.type === 'unbounded' && run.supportedUsers !== undefined && run.supportedUsers >= run.test.maxUsers - run.test.usersIncrement;
}

export function runLabel(run: RunResult): string {
  return `${run.target.version} ${run.test.name} #${run.repeat}`;
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
