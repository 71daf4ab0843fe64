import { InputError } from '../util/errors.ts';

/**
 * What each GitHub call needs, so a refusal can say which permission or setting is
 * missing instead of echoing "Resource not accessible by integration".
 */
const OPERATIONS = {
  'repos.get': { permission: 'metadata: read', doing: 'reading the repository' },
  'repos.listTags': { permission: 'contents: read', doing: 'listing tags' },
  'repos.compareCommitsWithBasehead': { permission: 'contents: read', doing: 'comparing the baseline and candidate tags' },
  'repos.listCommits': { permission: 'contents: read', doing: 'listing the commits that touched a file' },
  'git.listMatchingRefs': { permission: 'contents: read', doing: 'listing tag refs' },
  'git.getRef': { permission: 'contents: read', doing: 'reading a ref' },
  'git.getTag': { permission: 'contents: read', doing: 'reading an annotated tag' },
  'git.getCommit': { permission: 'contents: read', doing: 'reading a commit' },
  'git.getTree': { permission: 'contents: read', doing: 'reading a tree' },
  'git.createBlob': { permission: 'contents: write', doing: 'uploading a report file (blob)' },
  'git.createTree': { permission: 'contents: write', doing: 'creating the report tree' },
  'git.createCommit': { permission: 'contents: write', doing: 'committing the report' },
  'git.createRef': { permission: 'contents: write', doing: 'creating the report branch' },
  'git.updateRef': { permission: 'contents: write', doing: 'moving the report branch' },
  'checks.create': { permission: 'checks: write', doing: 'creating the check run' },
  'checks.update': { permission: 'checks: write', doing: 'updating the check run' },
  'checks.listForRef': { permission: 'checks: read', doing: 'listing check runs of the commit' },
  'pulls.list': { permission: 'pull-requests: read', doing: 'looking for the report pull request' },
  'pulls.create': { permission: 'pull-requests: write', doing: 'opening the report pull request' },
  'pulls.update': { permission: 'pull-requests: write', doing: 'updating the report pull request' },
} as const;
export type OperationName = keyof typeof OPERATIONS;

/** A GitHub refusal explained. It is an InputError: the fix is in the workflow or settings. */
export class GitHubApiError extends InputError {
  constructor(
    message: string,
    readonly operation: OperationName,
    readonly status: number | undefined,
  ) {
    super(message);
    this.name = 'GitHubApiError';
  }
}

/** The parts of an Octokit RequestError we read; anything else is rethrown as is. */
interface RequestErrorLike {
  status: number;
  message: string;
  response?: { headers?: Record<string, string | number | undefined>; data?: unknown };
}

function isRequestError(error: unknown): error is RequestErrorLike {
  return typeof error === 'object' && error !== null && typeof (error as { status?: unknown }).status === 'number';
}

function githubMessage(error: RequestErrorLike): string {
  const data = error.response?.data as { message?: unknown; errors?: unknown } | undefined;
  const base = typeof data?.message === 'string' ? data.message : error.message;
  const details = Array.isArray(data?.errors)
    ? data.errors.map((e) => (typeof e === 'string' ? e : typeof e === 'object' && e && 'message' in e ? String(e.message) : '')).filter(Boolean)
    : [];
  return details.length ? `${base}: ${details.join('; ')}` : base;
}

function isRateLimited(error: RequestErrorLike): boolean {
  const headers = error.response?.headers ?? {};
  return (
    error.status === 429 ||
    ((error.status === 403 || error.status === 429) && (String(headers['x-ratelimit-remaining']) === '0' || /rate limit/i.test(githubMessage(error))))
  );
}

function resetTime(error: RequestErrorLike): string {
  const reset = Number(error.response?.headers?.['x-ratelimit-reset']);
  return Number.isFinite(reset) && reset > 0 ? `it resets at ${new Date(reset * 1000).toISOString()}` : 'wait for it to reset';
}

export interface ExplainContext {
  /** owner/name, to say which repository could not be found. */
  repository: string;
  /** Says what a 404 means for this call (e.g. "tag v1.2.3 does not exist"). */
  notFound?: string;
  /** Values that must never appear in a message (the token). */
  secrets?: readonly string[];
}

/** Turns a failed call into a GitHubApiError that names the missing permission or setting. */
export function explainGitHubError(operation: OperationName, error: unknown, context: ExplainContext): Error {
  if (!isRequestError(error)) return error instanceof Error ? error : new Error(String(error));
  const { permission, doing } = OPERATIONS[operation];
  const said = githubMessage(error);
  const prefix = `GitHub refused ${operation} (${doing}) with ${error.status} "${said}"`;
  let hint: string;
  if (error.status === 401) {
    hint = 'the token is missing, expired or revoked; pass `GITHUB_TOKEN: ${{ github.token }}` in the step env, or renew the personal/App token';
  } else if (isRateLimited(error)) {
    hint = `the API rate limit is exhausted (${resetTime(error)}); re-run after the reset, space gates out, or use a GitHub App token, which has a higher limit`;
  } else if (error.status === 403 && operation === 'pulls.create' && /not permitted to create or approve pull requests/i.test(said)) {
    hint =
      'enable "Allow GitHub Actions to create and approve pull requests" under Settings → Actions → General → Workflow permissions ' +
      '(if it is greyed out, enable it in the organization settings first), or give publish a GitHub App token';
  } else if (error.status === 403 && operation.startsWith('checks.') && /created it/i.test(said)) {
    hint =
      "the check run was created by another GitHub App (an earlier gate posted through app-client-id, or through the workflow's own token); only that App may change it, so loadgate posts a new one";
  } else if (error.status === 403) {
    hint =
      `the token lacks \`${permission}\`; grant it in the job's \`permissions:\` block (see docs/github.md). ` +
      'Workflows triggered from forks always get a read-only token, and "Workflow permissions: read" in the repository or organization settings needs the explicit job grant';
  } else if (error.status === 404) {
    hint =
      context.notFound ??
      `either the repository ${context.repository} does not exist or the token cannot see it (GitHub answers 404 instead of 403 for private repositories); check GITHUB_REPOSITORY and that the token has \`${permission}\``;
  } else if (error.status === 409 && /empty/i.test(said)) {
    hint = 'the repository has no commits yet; push a default branch first';
  } else if (
    (error.status === 422 || error.status === 409) &&
    (operation === 'git.createRef' || operation === 'git.updateRef') &&
    /rule|protect|update failed/i.test(said)
  ) {
    hint =
      'a branch ruleset or branch protection blocks writes to perf-report/*; exclude that pattern from the ruleset or add GitHub Actions to its bypass list';
  } else if (error.status === 422 && operation === 'pulls.create' && /no commits between/i.test(said)) {
    hint =
      'the report branch holds nothing the default branch lacks (the same report is already merged, or the branch was reset); ' +
      'delete the perf-report branch if it is stale and re-run the publish job';
  } else if (error.status === 422 && operation === 'pulls.create' && /already exists/i.test(said)) {
    hint = 'a pull request for the report branch exists that loadgate could not see; check that the token has `pull-requests: read` and re-run the publish job';
  } else if (error.status === 422 && operation === 'pulls.update' && /state cannot be changed|force-pushed|recreated|deleted/i.test(said)) {
    hint = 'GitHub will not reopen this closed pull request because its branch was deleted or rewritten; loadgate opens a new one instead';
  } else if (error.status === 422 && operation.startsWith('checks.') && /no commit found/i.test(said)) {
    hint = 'the commit is not in this repository; pass the SHA of the candidate tag (was the tag pushed?)';
  } else if (error.status === 422) {
    hint =
      'GitHub rejected the request as invalid; this is a loadgate bug or a setting outside loadgate (the message above says which), please report it with the log';
  } else if (error.status >= 500) {
    hint = 'GitHub is failing; loadgate already retried, so re-run the job later (https://www.githubstatus.com)';
  } else {
    hint = `check that the token has \`${permission}\``;
  }
  return new GitHubApiError(redact(`${prefix}: ${hint}`, context.secrets ?? []), operation, error.status);
}

/** Replaces every secret value in text; secrets shorter than 4 characters are not searched. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join('***');
  return out;
}
