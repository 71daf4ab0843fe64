import type { GateConfig, TestSpec } from '../config/schema.ts';
import { buildPlan, renderPlanText } from '../aws/bench-plan.ts';
import type { DbSource } from '../aws/cost.ts';
import { describeDuration, formatDuration } from '../util/duration.ts';
import type { BenchKind } from '../inputs/patterns.ts';
import { escapeCell, escapeInline } from './markdown.ts';

/** The AWS bench's part of the plan, from src/aws/bench-plan.ts (what `loadgate plan` prints). */
export type AwsPlanSummary =
  | {
      preset: string;
      region: string;
      resources: { role: string; resource: string; type: string; count: number }[];
      totalUsd: number;
      pricesAsOf: string;
      pricesRegion: string;
      totalSec: number;
      maxCostUsd: number | null;
      withinBudget: boolean;
      /** `loadgate plan`'s text, shown folded. */
      text: string;
    }
  | { error: string };

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
  aws?: AwsPlanSummary | undefined;
}

/**
 * Fixed costs around the runs on the local bench: install/check components and seed the
 * dataset, plus a target restart per run. The AWS bench's duration comes from its plan.
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

/** Where the dataset comes from, as `loadgate plan` decides it from the config. */
function dbSourceOf(config: GateConfig): DbSource {
  const db = config.bench.aws.database;
  return db?.snapshotIdentifier ? 'snapshot' : db?.dumpUrl ? 'dump' : 'empty';
}

/**
 * The AWS plan for the tests and repeats this gate runs. A plan that cannot be built
 * (an unpriced instance type, say) is reported in the check run rather than stopping it:
 * provisioning refuses such a bench with the same message.
 */
function awsPlanFor(config: GateConfig, tests: readonly TestSpec[], repeats: number, maxCost: number | null): AwsPlanSummary {
  try {
    const plan = buildPlan({ ...config, tests: [...tests], repeats }, { dbSource: dbSourceOf(config), ...(maxCost !== null ? { maxCostUsd: maxCost } : {}) });
    return {
      preset: plan.preset,
      region: plan.region,
      resources: plan.resources.map((r) => ({ role: r.role, resource: r.resource, type: r.type, count: r.count })),
      totalUsd: plan.cost.totalUsd,
      pricesAsOf: plan.cost.pricesAsOf,
      pricesRegion: plan.cost.pricesRegion,
      totalSec: plan.duration.totalSec,
      maxCostUsd: plan.maxCostUsd,
      withinBudget: plan.withinBudget,
      text: renderPlanText(plan),
    };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

export function planGate(
  config: GateConfig,
  choice: {
    baseline: string;
    candidate: string;
    tests: string[];
    repeats: number;
    bench: BenchKind;
    baselineReason?: string | undefined;
    maxCost?: number | null | undefined;
  },
): GatePlan {
  const selected = config.tests.filter((t) => choice.tests.length === 0 || choice.tests.includes(t.name));
  const tests = selected.map((t) => ({ name: t.name, type: t.type, ...describeTest(t) }));
  const runs = 2 * choice.repeats;
  const { maxCost, ...rest } = choice;
  const aws = choice.bench === 'aws' ? awsPlanFor(config, selected, choice.repeats, maxCost ?? null) : undefined;
  const estimatedSeconds =
    aws && !('error' in aws)
      ? aws.totalSec
      : SETUP_SECONDS[choice.bench] + tests.reduce((sum, t) => sum + runs * (t.maxSeconds + PER_RUN_SECONDS[choice.bench]), 0);
  return { ...rest, tests, estimatedSeconds, ...(aws ? { aws } : {}) };
}

/**
 * What continuing a gate by `more` pairs costs at most, from the same plan: on AWS a new
 * bench (provisioning and teardown included) for the extra pairs, each at its cap; on the
 * local bench the time alone. Undefined when the plan cannot be built.
 */
export function continuationEstimate(
  config: GateConfig,
  tests: readonly string[],
  bench: BenchKind,
  more: number,
): { bench: BenchKind; seconds: number; costUsd: number | null } | undefined {
  const plan = planGate({ ...config, maxRepeats: more }, { baseline: 'earlier', candidate: 'continued', tests: [...tests], repeats: more, bench });
  if (bench === 'local') return { bench, seconds: plan.estimatedSeconds, costUsd: null };
  if (!plan.aws || 'error' in plan.aws) return undefined;
  return { bench, seconds: plan.aws.totalSec, costUsd: plan.aws.totalUsd };
}

function awsMarkdown(aws: AwsPlanSummary): string[] {
  if ('error' in aws) return ['', `**AWS plan unavailable:** ${escapeInline(aws.error)}`];
  const usd = (v: number) => `$${v.toFixed(2)}`;
  const budget =
    aws.maxCostUsd === null
      ? 'no max-cost set'
      : aws.withinBudget
        ? `worst case within the max-cost of ${usd(aws.maxCostUsd)}`
        : `**worst case over the max-cost of ${usd(aws.maxCostUsd)} (max-cost caps the worst case): provisioning will refuse it**`;
  // The plan text never holds a backtick fence (names are validated), but make sure.
  const text = aws.text.replace(/`{3,}/g, "'''");
  return [
    '',
    `### AWS bench: preset ${escapeInline(aws.preset)} in ${escapeInline(aws.region)}`,
    '',
    '| Role | Count | Type | Terraform resource |',
    '|---|---:|---|---|',
    ...aws.resources.map((r) => `| ${escapeCell(r.role)} | ${r.count} | ${escapeCell(r.type)} | ${escapeCell(r.resource)} |`),
    '',
    `Worst-case cost: **${usd(aws.totalUsd)}**, every pair maxRepeats allows (on-demand ${escapeInline(aws.pricesRegion)} prices as of ${escapeInline(aws.pricesAsOf)}), ${budget}; the full plan gives the expected cost.`,
    '',
    '<details><summary>Full plan (<code>loadgate plan</code>)</summary>',
    '',
    '```text',
    text,
    '```',
    '',
    '</details>',
  ];
}

export function planMarkdown(plan: GatePlan): string {
  const lines = [
    '## loadgate: running',
    '',
    `Baseline **${escapeInline(plan.baseline)}** vs candidate **${escapeInline(plan.candidate)}** on the **${plan.bench}** bench, ${plan.repeats} run${plan.repeats === 1 ? '' : 's'} per side per test, interleaved.`,
  ];
  if (plan.baselineReason) lines.push('', `Baseline choice: ${escapeInline(plan.baselineReason)}`);
  lines.push('', '| Test | Type | Load |', '|---|---|---|', ...plan.tests.map((t) => `| ${escapeCell(t.name)} | ${t.type} | ${escapeCell(t.description)} |`));
  const counted =
    plan.aws && !('error' in plan.aws)
      ? 'provisioning, both sides of every run with unbounded tests at their maximum, and teardown'
      : 'unbounded tests counted at their maximum';
  lines.push('', `Estimated duration: up to ${describeDuration(Math.ceil(plan.estimatedSeconds / 60) * 60)} (${counted}).`);
  if (plan.aws) lines.push(...awsMarkdown(plan.aws));
  return lines.join('\n');
}
