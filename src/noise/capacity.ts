import type { RunResult } from '../results/schema.ts';
import { median } from '../util/stats.ts';
import { workloadName } from './speed.ts';
import type { CapacityEntry } from './schema.ts';

/**
 * The capacity a calibration found, per unbounded test: the median supported users of its
 * converged, completed runs (per side in a duet), with the median of the machine's speed at
 * set-up when every run's bench recorded one of the same workload. What a later gate with
 * no run of its own starts its search from (src/bench/capacity-hints.ts).
 */
export function measuredCapacity(runs: readonly RunResult[]): CapacityEntry[] {
  const byTest = new Map<string, RunResult[]>();
  for (const r of runs) {
    if (r.test.type !== 'unbounded' || r.status !== 'completed' || r.problems.length || !r.converged || !r.supportedUsers || r.disturbed) continue;
    if (r.target.cpuQuota !== undefined) continue;
    byTest.set(r.test.name, [...(byTest.get(r.test.name) ?? []), r]);
  }
  return [...byTest.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([test, judged]) => {
      const users = Math.round(median(judged.map((r) => r.supportedUsers as number)) * 100) / 100;
      const probes = judged.map((r) => r.bench.setupProbe);
      const workloads = new Set(probes.map((p) => (p ? workloadName(p.workload) : '')));
      const probe =
        probes.every((p) => p) && workloads.size === 1
          ? { workload: probes[0]?.workload as string, cpuMs: Math.round(median(probes.map((p) => p?.cpuMsMedian as number)) * 100) / 100 }
          : undefined;
      const versions = [...new Set(judged.map((r) => r.target.version))].sort().join(', ');
      return {
        test,
        users,
        kind: 'measured' as const,
        runs: judged.length,
        ...(probe ? { probe } : {}),
        source: `median supported users of ${judged.length} converged runs of ${versions}${probe ? ', with the machine speed at set-up' : ''}`,
      };
    });
}
