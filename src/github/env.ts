import { z } from 'zod';
import { InputError, formatIssuePath } from '../util/errors.ts';
import type { ActionsContext } from './actions-context.ts';
import type { NextStepsContext } from './next-steps.ts';

/**
 * What `publish` and `pick-baseline` need from Actions, parsed once at the boundary:
 * the repository, run, commit and API URLs from the run context (`@actions/github`,
 * see actions-context.ts), the token and loadgate's settings from the environment.
 * Outside Actions the same variables can be set by hand (tests point GITHUB_API_URL
 * at the stand-in).
 */
const WORKFLOW_REF = /^[A-Za-z0-9-]+\/[A-Za-z0-9._-]+\/\.github\/workflows\/([A-Za-z0-9._-]+\.ya?ml)@\S+$/;
// GitHub logins: alphanumerics and single inner hyphens, at most 39 characters.
const GITHUB_LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;

const actionsEnvSchema = z.object({
  GITHUB_TOKEN: z.string().min(1, 'is empty; pass the workflow token as env GITHUB_TOKEN: ${{ github.token }}'),
  GITHUB_ACTIONS: z.string().optional(),
  GITHUB_STEP_SUMMARY: z.string().optional(),
  /** Spacing of write calls; GitHub asks for 1 s. Lower only for a stand-in or a GHES that allows it. */
  LOADGATE_GITHUB_WRITE_INTERVAL_MS: z.coerce.number().int().min(0).max(60_000).optional(),
  /** Set by the runner: owner/repo/.github/workflows/<file>@<ref> of the (calling) workflow. */
  GITHUB_WORKFLOW_REF: z.string().regex(WORKFLOW_REF, 'expected owner/repo/.github/workflows/<file>.yml@<ref>').optional(),
  /** Who may override an inconclusive gate: GitHub logins, comma-separated (the workflow's approvers input). */
  LOADGATE_APPROVERS: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim().replace(/^@/, ''))
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(GITHUB_LOGIN, 'expected GitHub logins, comma-separated')).max(20))
    .optional(),
});

export interface GitHubEnv {
  token: string;
  owner: string;
  repo: string;
  apiUrl: string;
  serverUrl: string;
  runId: string | undefined;
  sha: string | undefined;
  /** True inside a GitHub Actions (or act) job. */
  inActions: boolean;
  stepSummaryFile: string | undefined;
  writeIntervalMs: number | undefined;
  /** The calling workflow's file name, where workflow_dispatch re-runs the gate. */
  workflowFile: string | undefined;
  approvers: string[];
}

export function readGitHubEnv(context: ActionsContext, env: NodeJS.ProcessEnv = process.env): GitHubEnv {
  // Empty strings are unset variables as far as Actions is concerned.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = actionsEnvSchema.safeParse(present);
  const lines = result.success ? [] : result.error.issues.map((i) => `env ${formatIssuePath(i.path)}: ${i.message}`);
  if (!context.repository) lines.push('env GITHUB_REPOSITORY: is missing; expected owner/name');
  if (!result.success || !context.repository) throw new InputError(`the GitHub environment is incomplete:\n${lines.join('\n')}`, lines);
  const e = result.data;
  const [owner, repo] = context.repository.split('/') as [string, string];
  return {
    token: e.GITHUB_TOKEN,
    owner,
    repo,
    apiUrl: context.apiUrl,
    serverUrl: context.serverUrl,
    runId: context.runId,
    sha: context.sha,
    inActions: e.GITHUB_ACTIONS === 'true',
    stepSummaryFile: e.GITHUB_STEP_SUMMARY,
    writeIntervalMs: e.LOADGATE_GITHUB_WRITE_INTERVAL_MS,
    workflowFile: e.GITHUB_WORKFLOW_REF ? WORKFLOW_REF.exec(e.GITHUB_WORKFLOW_REF)?.[1] : undefined,
    approvers: e.LOADGATE_APPROVERS ?? [],
  };
}

/** The caller workflow's path in its repository (GITHUB_WORKFLOW_REF names the caller of a reusable workflow), or undefined. */
export function callerWorkflowPath(workflowRef: string | undefined): string | undefined {
  const file = workflowRef ? WORKFLOW_REF.exec(workflowRef)?.[1] : undefined;
  return file ? `.github/workflows/${file}` : undefined;
}

/** The workflow run's page, the fallback details link of the check run. */
export function nextStepsContext(env: GitHubEnv): NextStepsContext {
  return { serverUrl: env.serverUrl, owner: env.owner, repo: env.repo, workflowFile: env.workflowFile, approvers: env.approvers, runId: env.runId };
}

export function runUrl(env: GitHubEnv): string | undefined {
  return env.runId ? `${env.serverUrl}/${env.owner}/${env.repo}/actions/runs/${env.runId}` : undefined;
}
