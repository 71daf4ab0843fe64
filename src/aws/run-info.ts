import { z } from 'zod';
import { InputError, formatIssuePath } from '../util/errors.ts';

/**
 * The gate run a bench belongs to: it names the bench, its state key and its
 * tags. From CLI flags, falling back to the GitHub Actions run context.
 */
const runInfoSchema = z.strictObject({
  repository: z.string().regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'expected owner/name'),
  runId: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'expected a run ID of letters, digits, dots, dashes or underscores'),
  runAttempt: z.coerce.number().int().min(1),
  commitSha: z.string().regex(/^[0-9a-f]{7,40}$/, 'expected a git commit hash'),
});
export type RunInfo = z.output<typeof runInfoSchema>;

/**
 * The run's fields of the GitHub Actions context. The caller passes the parsed context
 * (src/github/actions-context.ts), which has these fields; they are declared here so the
 * AWS code does not reach up into the publishing layer.
 */
export interface RunContext {
  /** owner/name */
  repository: string | undefined;
  runId: string | undefined;
  runAttempt: number | undefined;
  sha: string | undefined;
}

/** Flags win over the Actions context; missing values are an InputError naming both. */
export function readRunInfo(flags: { repository?: string; runId?: string; runAttempt?: string; commit?: string }, context: Partial<RunContext>): RunInfo {
  const result = runInfoSchema.safeParse({
    repository: flags.repository ?? context.repository,
    runId: flags.runId ?? context.runId,
    runAttempt: flags.runAttempt ?? context.runAttempt ?? 1,
    commitSha: flags.commit ?? context.sha,
  });
  if (!result.success) {
    const flagOf: Record<string, string> = {
      repository: '--repository (or GITHUB_REPOSITORY)',
      runId: '--run-id (or GITHUB_RUN_ID)',
      runAttempt: '--run-attempt (or GITHUB_RUN_ATTEMPT)',
      commitSha: '--commit (or GITHUB_SHA)',
    };
    const lines = result.error.issues.map((i) => `${flagOf[String(i.path[0])] ?? formatIssuePath(i.path)}: ${i.message}`);
    throw new InputError(`the run this bench belongs to is incomplete:\n${lines.join('\n')}`, lines);
  }
  return result.data;
}

/** One Terraform state per run attempt, so concurrent gates never share a lock or a bench. */
export function stateKey(run: RunInfo): string {
  return `loadgate/${run.repository}/${run.runId}/${run.runAttempt}/terraform.tfstate`;
}

/**
 * The bench name every resource starts with: lg-<run id>-<attempt>, lower case,
 * at most 25 characters (OpenSearch domain names allow 28, IAM role names get a
 * role suffix).
 */
export function benchName(run: RunInfo): string {
  const id = run.runId
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  const suffix = `-${run.runAttempt}`;
  const base = `lg-${id}`.slice(0, 25 - suffix.length).replace(/-+$/, '');
  return `${base}${suffix}`;
}
