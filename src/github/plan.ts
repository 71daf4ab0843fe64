import type { GateConfig, TestSpec } from '../config/schema.ts';
import { describeDuration, formatDuration } from '../util/duration.ts';
import type { BenchKind } from '../inputs/patterns.ts';
import { escapeCell, escapeInline } from './markdown.ts';

/** What a gate is about to do, posted on the check run when it starts. */
export interface GatePlan {
  baseline: string;
  candidate: string;
  bench: BenchKind;
  repeats: number;
  tests: { name: string; type: TestSpec['type']; description: string; maxSeconds: number }[];
  /** Upper bound: unbounded tests count at their maxDuration. */
  estimatedSeconds: number;
  baselineReason?: string | undefined;
}

/**
 * Fixed costs around the runs. Local: install/check components and seed the dataset,
 * plus a target restart per run. AWS: terraform apply and destroy of the bench.
 */
const SETUP_SECONDS: Record<BenchKind, number> = { local: 600, aws: 1800 };
const PER_RUN_SECONDS: Record<BenchKind, number> = { local: 60, aws: 300 };

function describeTest(test: TestSpec): { description: string; maxSeconds: number } {
  if (test.type === 'bounded') {
    return { description: `${test.users} users for ${formatDuration(test.duration)} (ramp-up ${formatDuration(test.rampUp)})`, maxSeconds: test.duration };
  }
  return {
    description: `up to ${test.maxUsers} users, +${test.usersIncrement}/−${test.usersDecrement} every ${formatDuration(test.restTime)}, ${test.health.filter((h) => h.enabled).length} health queries, at most ${formatDuration(test.maxDuration)}`,
    maxSeconds: test.maxDuration,
  };
}

export function planGate(config: GateConfig, choice: { baseline: string; candidate: string; tests: string[]; repeats: number; bench: BenchKind; baselineReason?: string | undefined }): GatePlan {
  const selected = config.tests.filter((t) => choice.tests.length === 0 || choice.tests.includes(t.name));
  const tests = selected.map((t) => ({ name: t.name, type: t.type, ...describeTest(t) }));
  const runs = 2 * choice.repeats;
  const estimatedSeconds = SETUP_SECONDS[choice.bench] + tests.reduce((sum, t) => sum + runs * (t.maxSeconds + PER_RUN_SECONDS[choice.bench]), 0);
  return { ...choice, tests, estimatedSeconds };
}

export function planMarkdown(plan: GatePlan): string {
  const lines = [
    '## loadgate: running',
    '',
    `Baseline **${escapeInline(plan.baseline)}** vs candidate **${escapeInline(plan.candidate)}** on the **${plan.bench}** bench, ${plan.repeats} run${plan.repeats === 1 ? '' : 's'} per side per test, interleaved.`,
  ];
  if (plan.baselineReason) lines.push('', `Baseline choice: ${escapeInline(plan.baselineReason)}`);
  lines.push('', '| Test | Type | Load |', '|---|---|---|', ...plan.tests.map((t) => `| ${escapeCell(t.name)} | ${t.type} | ${escapeCell(t.description)} |`));
  lines.push('', `Estimated duration: up to ${describeDuration(Math.ceil(plan.estimatedSeconds / 60) * 60)} (unbounded tests counted at their maximum).`);
  return lines.join('\n');
}
