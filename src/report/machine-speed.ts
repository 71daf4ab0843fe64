import { median } from '../compare/stats.ts';
import type { RunResult } from '../results/schema.ts';

/**
 * The Setup row that says how fast the machine ran for each side (the local bench's CPU
 * speed probe, src/bench/local/speed-probe.ts): whether one side's runs met a slower
 * machine. Checks with a speed fit in the noise model are judged at one speed (the
 * Decision section's "Machine speed" line, with each side's geometric mean over its
 * runs); the others only have the pair order, which cancels it on average but not in any
 * one gate.
 */
export function machineSpeedRow(baseline: readonly RunResult[], candidate: readonly RunResult[]): string[] | undefined {
  const probes = (runs: readonly RunResult[]) => runs.flatMap((r) => (r.speedProbe ? [r.speedProbe] : []));
  const b = probes(baseline);
  const c = probes(candidate);
  if (!b.length || !c.length) return undefined;
  const workloads = new Set([...b, ...c].map((p) => p.workload));
  if (workloads.size > 1) return ['Machine speed (CPU probe)', `not comparable: the runs used different probe workloads (${[...workloads].sort().join(', ')})`];
  const mb = median(b.map((p) => p.cpuMsMedian));
  const mc = median(c.map((p) => p.cpuMsMedian));
  const diff = (100 * (mc - mb)) / mb;
  const per = (runs: typeof b) => runs.map((p) => p.cpuMsMedian.toFixed(1)).join(', ');
  const which = Math.abs(diff) < 0.05 ? 'the same speed for both sides' : `the candidate's runs on a ${Math.abs(diff).toFixed(1)} % ${diff > 0 ? 'slower' : 'faster'} machine`;
  return [
    'Machine speed (CPU probe)',
    `a fixed workload took ${mb.toFixed(1)} ms of CPU during the baseline's runs (${per(b)}) and ${mc.toFixed(1)} ms during the candidate's (${per(c)}), median per run: ${which}`,
  ];
}

