import type { RunResult } from '../results/schema.ts';
import { InputError } from '../util/errors.ts';

export type RunMode = 'sequential' | 'duet';

/**
 * How the runs ran, read from the completed runs themselves: duet when every one is one
 * side of a duet, sequential when none is. A mix is refused: its pairs would be judged
 * against the wrong noise. Runs that never completed (crashed, or never started) carry no
 * numbers and say nothing of the mode; with none completed, the config's mode stands.
 */
export function runsMode(baseline: readonly RunResult[], candidate: readonly RunResult[], expected?: RunMode): RunMode {
  const ran = [...baseline, ...candidate].filter((r) => r.status === 'completed');
  const duets = ran.filter((r) => r.duet).length;
  if (duets && duets < ran.length) {
    throw new InputError(
      `${duets} of the ${ran.length} completed runs ran in a duet and the others alone; compare runs of one mode (the run results' "duet" field)`,
    );
  }
  const mode: RunMode = !ran.length ? (expected ?? 'sequential') : duets ? 'duet' : 'sequential';
  if (expected && mode !== expected) {
    throw new InputError(
      `the runs ran in ${mode} mode, the config judges ${expected} (mode: ${expected}); a noise model of one mode says nothing of the other: set mode: ${mode}, or compare runs of ${expected} mode`,
    );
  }
  return mode;
}

/**
 * Duets whose other half is missing or ran in the same slot: a duet's ratio is only free of
 * the machine's speed when both sides ran together, one in each slot.
 */
export function unpairedDuets(baseline: readonly RunResult[], candidate: readonly RunResult[]): string[] {
  const problems: string[] = [];
  for (const b of baseline) {
    if (!b.duet || b.status !== 'completed') continue;
    const partner = candidate.find((c) => c.test.name === b.test.name && c.repeat === b.repeat);
    if (!partner) problems.push(`the baseline's duet run of test "${b.test.name}" #${b.repeat + 1} has no candidate run beside it`);
    else if (partner.duet?.slot === b.duet.slot) problems.push(`the duet of test "${b.test.name}" #${b.repeat + 1} has both sides in slot ${b.duet.slot}`);
  }
  return problems;
}
