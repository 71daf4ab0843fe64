import { z } from 'zod';
import type { VerdictFile } from '../results/verdict-schema.ts';
import { MAX_REPEATS } from '../inputs/patterns.ts';

/**
 * What to do about an inconclusive gate, said in the check run and the report PR: re-run
 * with more repeats (the workflow_dispatch link and the one-line `gh` command with every
 * input filled in), or have a named approver override. The text only names versions and
 * logins that were validated at the boundary.
 */
export interface NextStepsContext {
  serverUrl: string;
  owner: string;
  repo: string;
  /** The calling workflow's file (from GITHUB_WORKFLOW_REF): where workflow_dispatch lives. */
  workflowFile?: string | undefined;
  /** GitHub logins allowed to override (LOADGATE_APPROVERS). */
  approvers: readonly string[];
}

/**
 * The gate's own hint, when it gives one: verdict.json's `decision.suggestedMorePairs`
 * (how many more baseline/candidate pairs would likely decide) and `decision.maxRepeats`.
 * Read leniently: older verdict files have neither, and the text then falls back to
 * doubling the repeats.
 */
const decisionHints = z.object({
  decision: z.object({ suggestedMorePairs: z.number().int().min(1).optional(), maxRepeats: z.number().int().min(1).optional() }).loose().optional(),
}).loose();

/** Repeats per test of the gate that ran, and the repeats the re-run should ask for. */
export function suggestedRepeats(verdict: VerdictFile): { ran: number; next: number } {
  const tests = Math.max(1, new Set(verdict.checks.map((c) => c.test)).size);
  const ran = Math.max(1, Math.round(Math.min(verdict.baseline.runs, verdict.candidate.runs) / tests));
  const hints = decisionHints.safeParse(verdict);
  const decision = hints.success ? hints.data.decision : undefined;
  const limit = Math.min(MAX_REPEATS, decision?.maxRepeats ?? MAX_REPEATS);
  const wanted = decision?.suggestedMorePairs !== undefined ? ran + decision.suggestedMorePairs : Math.max(3, ran * 2);
  return { ran, next: Math.min(limit, wanted) };
}

export function nextStepsMarkdown(verdict: VerdictFile, ctx: NextStepsContext): string[] {
  if (verdict.verdict !== 'inconclusive') return [];
  const repo = `${ctx.owner}/${ctx.repo}`;
  const { ran, next } = suggestedRepeats(verdict);
  const broken = verdict.problems.length > 0;
  const workflow = ctx.workflowFile ?? '<the loadgate workflow file>';
  const command = `gh workflow run ${workflow} --repo ${repo} -f candidate=${verdict.candidate.version} -f baseline=${verdict.baseline.version} -f repeats=${broken ? ran : next}`;
  const link = ctx.workflowFile ? `[Run workflow](${ctx.serverUrl}/${repo}/actions/workflows/${ctx.workflowFile})` : 'Actions → the loadgate workflow → Run workflow';
  const rerun = broken
    ? `1. **Fix the cause above and re-run** with the same ${ran} repeat${ran === 1 ? '' : 's'}: a run that could not be judged is not noise, so more repeats will not help. ${link} with these inputs, or:`
    : `1. **Re-run with more repeats** (${ran} → ${next} per side; more interleaved runs narrow the interval until it lies inside or beyond the tolerance). ${link} with these inputs, or:`;
  const approvers = ctx.approvers.length ? ctx.approvers.map((a) => `@${a}`).join(', ') : 'an approver on the tag ruleset\'s bypass list';
  return [
    '### What to do now',
    '',
    'The gate could not decide, so the release tag stays blocked until one of these happens:',
    '',
    rerun,
    '',
    '   ```sh',
    `   ${command}`,
    '   ```',
    '',
    `   Expect about ${broken ? 1 : Number((next / ran).toFixed(1))}× this gate's duration and AWS cost (docs/github.md, "Cost and duration").`,
    `2. **Override**: ${approvers} may accept the risk and create the release tag anyway (bypassing the tag ruleset), recording the reason in the report pull request.`,
  ];
}
