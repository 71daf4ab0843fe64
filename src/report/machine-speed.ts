import type { TestComparison } from '../results/comparison.ts';
import { geometricMeanAt } from '../util/stats.ts';
import type { Check } from '../results/verdict-schema.ts';
import type { RunResult } from '../results/schema.ts';

type Sides = Pick<TestComparison, 'name' | 'baseline' | 'candidate'>;

const round2 = (x: number) => Math.round(x * 100) / 100;

/**
 * The Setup row that says how fast the machine ran for each side (the local bench's CPU
 * speed probe, src/bench/local/speed-probe.ts): whether one side's runs met a slower
 * machine. It gives the one figure the decision uses, each side's geometric mean of its
 * runs' probe times (verdict.json's check `speed`, the How the gate decided section's "Machine speed"
 * line), so the report cannot call one side faster by one average and slower by another.
 * When the noise model's speed fit was not applied to a check, the row says why: that
 * check is judged as measured, and only the pair order cancels the machine's speed.
 */
export function machineSpeedRow(tests: readonly Sides[], checks: readonly Check[] = []): string[] | undefined {
  // The check the decision weighed the machine's speed for: the figure is over its test's runs.
  const checked = checks.find((c) => c.speed?.adjusted) ?? checks.find((c) => c.speed && c.gating) ?? checks.find((c) => c.speed);
  const over = checked ? tests.filter((t) => t.name === checked.test) : tests;
  // Only completed runs are judged (src/compare/compare-runs.ts), so only theirs count here.
  const probes = (runs: readonly RunResult[]) => runs.flatMap((r) => (r.status === 'completed' && r.speedProbe ? [r.speedProbe] : []));
  const b = probes(over.flatMap((t) => t.baseline));
  const c = probes(over.flatMap((t) => t.candidate));
  if (!b.length || !c.length) return undefined;
  const workloads = new Set([...b, ...c].map((p) => p.workload));
  if (workloads.size > 1) return ['Machine speed (CPU probe)', `not comparable: the runs used different probe workloads (${[...workloads].sort().join(', ')})`];
  const speed = checked?.speed;
  const geometric = (side: typeof b) =>
    round2(
      geometricMeanAt(
        side.map((p) => p.cpuMsMedian),
        side.length,
      ),
    );
  const [mb, mc] = speed?.adjusted ? [speed.baselineProbeMs, speed.candidateProbeMs] : [geometric(b), geometric(c)];
  // The How the gate decided section's own arithmetic on the same rounded figures, so both show one percentage.
  const diff = (mc / mb - 1) * 100;
  const per = (side: typeof b) => side.map((p) => p.cpuMsMedian.toFixed(1)).join(', ');
  const which =
    Math.abs(diff) < 0.05
      ? 'the same speed for both sides'
      : `the candidate's runs on a ${Math.abs(diff).toFixed(1)} % ${diff > 0 ? 'slower' : 'faster'} machine`;
  let fit = '';
  if (checked && speed?.adjusted === true) fit = `; ${checked.metric} (${checked.test}) is judged at one machine speed (see How the gate decided)`;
  else if (checked && speed?.adjusted === false)
    fit = `; the noise model's speed fit was not applied to ${checked.metric} (${checked.test}), which is judged as measured: ${speed.why}`;
  return [
    'Machine speed (CPU probe)',
    `a fixed workload took ${mb} ms of CPU in the baseline's runs and ${mc} ms in the candidate's (geometric means of the runs' medians: ${per(b)} and ${per(c)}): ${which}${fit}`,
  ];
}
