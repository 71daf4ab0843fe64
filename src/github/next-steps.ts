import { z } from 'zod';
import type { VerdictFile } from '../results/verdict-schema.ts';
import { MAX_REPEATS } from '../inputs/patterns.ts';
import { formatDuration } from '../util/duration.ts';

/**
 * What to do about an inconclusive gate, said in the check run and the report PR:
 * continue it (the same sequential test goes on from the pairs already measured, up to a
 * new cap: its error bounds do not depend on where it stops), with the workflow_dispatch
 * link, the one-line `gh` command with every input filled in and what the extra pairs
 * cost at most; or have a named approver override. A gate that could not judge a run is
 * re-run after its cause is fixed instead. The text only names versions, ids and logins
 * that were validated at the boundary.
 */
export interface NextStepsContext {
  serverUrl: string;
  owner: string;
  repo: string;
  /** The calling workflow's file (from GITHUB_WORKFLOW_REF): where workflow_dispatch lives. */
  workflowFile?: string | undefined;
  /** GitHub logins allowed to override (LOADGATE_APPROVERS). */
  approvers: readonly string[];
  /** This gate's workflow run id: what a continuation names as continue-from. */
  runId?: string | undefined;
  /** What `more` extra pairs cost at most, from the plan; undefined when it cannot be planned. */
  estimate?: ((more: number) => ContinuationEstimate | undefined) | undefined;
  /**
   * The most extra pairs one continuation can run (on AWS, what the workflow's run jobs hold
   * at the runners' limit); undefined: no limit but MAX_REPEATS. The advice never asks for
   * more than the workflow accepts.
   */
  mostMorePairs?: number | undefined;
}

/** The worst case of a continuation (every extra pair at its cap): a new AWS bench's cost, or none on the local bench. */
export interface ContinuationEstimate {
  bench: 'local' | 'aws';
  seconds: number;
  /** null on the local bench. */
  costUsd: number | null;
}

/**
 * The gate's own hint, when it gives one: verdict.json's `decision.suggestedMorePairs`
 * (how many more baseline/candidate pairs would likely decide) and `decision.pairs`.
 * Read leniently: older verdict files have neither.
 */
const decisionHints = z
  .object({
    decision: z
      .object({ suggestedMorePairs: z.number().int().min(1).optional(), pairs: z.number().int().min(0).optional() })
      .loose()
      .optional(),
  })
  .loose();

/**
 * Pairs per test the gate ran, and the cap a continuation should ask for: the gate's own
 * suggestion on top of what ran, else double (at least 3). MAX_REPEATS and what one
 * continuation can run (`mostMore`) bound it, not the earlier gate's maxRepeats: raising
 * that cap is what a continuation is for; a gate that needs more continues again.
 */
export function suggestedRepeats(verdict: VerdictFile, mostMore?: number): { ran: number; next: number } {
  const tests = Math.max(1, new Set(verdict.checks.map((c) => c.test)).size);
  const hints = decisionHints.safeParse(verdict);
  const decision = hints.success ? hints.data.decision : undefined;
  const fromRuns = Math.max(1, Math.round(Math.min(verdict.baseline.runs, verdict.candidate.runs) / tests));
  const ran = decision?.pairs && decision.pairs > 0 ? decision.pairs : fromRuns;
  const wanted = decision?.suggestedMorePairs !== undefined ? ran + decision.suggestedMorePairs : Math.max(3, ran * 2);
  return { ran, next: Math.min(MAX_REPEATS, wanted, mostMore === undefined ? MAX_REPEATS : ran + mostMore) };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function estimateText(estimate: ContinuationEstimate | undefined): string {
  if (!estimate) return 'Its cost is what `loadgate plan --max-repeats <the extra pairs>` prints for this config (docs/github.md, "Cost and duration").';
  const time = formatDuration(Math.round(estimate.seconds));
  if (estimate.bench === 'local') return `At most about ${time} on the local bench (no AWS cost).`;
  return `At most about $${(estimate.costUsd ?? 0).toFixed(2)} and ${time} (\`loadgate plan\`: a new AWS bench for the extra pairs, each at its cap, provisioning and teardown included).`;
}

function continueStep(verdict: VerdictFile, ctx: NextStepsContext, link: string, workflow: string, repo: string): string[] {
  const { ran, next } = suggestedRepeats(verdict, ctx.mostMorePairs);
  if (next <= ran) {
    return [
      `1. **No more pairs are available**: the gate already ran ${plural(ran, 'pair')}, the most a gate may (${MAX_REPEATS}). More of the same will not decide it; look at the report for what keeps it undecided, or override.`,
    ];
  }
  const more = next - ran;
  const runId = ctx.runId ?? '<this run id>';
  const command = `gh workflow run ${workflow} --repo ${repo} -f candidate=${verdict.candidate.version} -f baseline=${verdict.baseline.version} -f continue-from=${runId} -f max-repeats=${next}`;
  return [
    `1. **Continue this gate** with up to ${plural(more, 'more pair')} (${ran} → at most ${next} in all): the same sequential test goes on from the ${plural(ran, 'pair')} already measured, which are reused, and the report counts every pair. ${link} with these inputs, or:`,
    '',
    '   ```sh',
    `   ${command}`,
    '   ```',
    '',
    `   ${estimateText(ctx.estimate?.(more))}`,
  ];
}

function rerunStep(verdict: VerdictFile, link: string, workflow: string, repo: string): string[] {
  const { ran } = suggestedRepeats(verdict);
  const command = `gh workflow run ${workflow} --repo ${repo} -f candidate=${verdict.candidate.version} -f baseline=${verdict.baseline.version} -f repeats=${ran}`;
  return [
    `1. **Fix the cause above and re-run** with the same ${plural(ran, 'repeat')}: a run that could not be judged is not noise, so more repeats will not help. ${link} with these inputs, or:`,
    '',
    '   ```sh',
    `   ${command}`,
    '   ```',
    '',
    "   Expect about this gate's duration and AWS cost again.",
  ];
}

export function nextStepsMarkdown(verdict: VerdictFile, ctx: NextStepsContext): string[] {
  if (verdict.verdict !== 'inconclusive') return [];
  const repo = `${ctx.owner}/${ctx.repo}`;
  const workflow = ctx.workflowFile ?? '<the loadgate workflow file>';
  const link = ctx.workflowFile
    ? `[Run workflow](${ctx.serverUrl}/${repo}/actions/workflows/${ctx.workflowFile})`
    : 'Actions → the loadgate workflow → Run workflow';
  const first = verdict.problems.length > 0 ? rerunStep(verdict, link, workflow, repo) : continueStep(verdict, ctx, link, workflow, repo);
  const approvers = ctx.approvers.length ? ctx.approvers.map((a) => `@${a}`).join(', ') : "an approver on the tag ruleset's bypass list";
  return [
    '### What to do now',
    '',
    'The gate could not decide, so the release tag stays blocked until one of these happens:',
    '',
    ...first,
    `2. **Override**: ${approvers} may accept the risk and create the release tag anyway (bypassing the tag ruleset), recording the reason in the report pull request.`,
  ];
}
