import { z } from 'zod';
import type { GitHubClient } from './client.ts';
import { explainGitHubError, GitHubApiError, type OperationName } from './errors.ts';

/**
 * The GitHub calls loadgate makes, one method each, every response parsed with zod for
 * only the fields we use. Callers get typed data or a GitHubApiError that says what to fix.
 */

const repoSchema = z.object({ default_branch: z.string().min(1), full_name: z.string(), html_url: z.string() });
const gitObjectSchema = z.object({ sha: z.string().min(1), type: z.string() });
const refSchema = z.object({ ref: z.string(), object: gitObjectSchema });
const annotatedTagSchema = z.object({ sha: z.string(), tag: z.string(), object: gitObjectSchema });
const commitSchema = z.object({ sha: z.string().min(1), tree: z.object({ sha: z.string().min(1) }) });
const treeEntrySchema = z.object({ path: z.string(), mode: z.string(), type: z.string(), sha: z.string() });
const treeSchema = z.object({ sha: z.string().min(1), truncated: z.boolean(), tree: z.array(treeEntrySchema) });
const blobSchema = z.object({ sha: z.string().min(1) });
const checkRunSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  head_sha: z.string(),
  status: z.string(),
  conclusion: z.string().nullable(),
  html_url: z.string().nullable(),
  details_url: z.string().nullable().optional(),
  /** loadgate marks its own check runs, so a workflow job that happens to share the name is never taken for one. */
  external_id: z.string().nullable().optional(),
  output: z.object({ annotations_count: z.number().int().nonnegative() }).optional(),
});
const checkRunListSchema = z.object({ total_count: z.number(), check_runs: z.array(checkRunSchema) });
const pullSchema = z.object({
  number: z.number().int(),
  html_url: z.string(),
  state: z.string(),
  title: z.string(),
  body: z.string().nullable(),
  head: z.object({ ref: z.string() }),
  base: z.object({ ref: z.string() }),
  /** Set when the pull request was merged; pulls.list has no `merged` field. */
  merged_at: z.string().nullable().optional(),
});
// GET /repos/{owner}/{repo}/compare/{basehead} (operation repos/compare-commits-with-basehead,
// schema commit-comparison) and GET /repos/{owner}/{repo}/commits (repos/list-commits, schema
// commit), in GitHub's OpenAPI description (@octokit/openapi api.github.com.json): only the fields used.
const listedCommitSchema = z.object({
  sha: z.string().min(1),
  html_url: z.string(),
  commit: z.object({ message: z.string(), author: z.object({ name: z.string().optional(), date: z.string().optional() }).nullable() }),
});
const comparisonSchema = z.object({
  html_url: z.string(),
  status: z.enum(['diverged', 'ahead', 'behind', 'identical']),
  total_commits: z.number().int().nonnegative(),
  commits: z.array(listedCommitSchema),
  files: z
    .array(
      z.object({
        filename: z.string(),
        status: z.string(),
        additions: z.number().int(),
        deletions: z.number().int(),
        previous_filename: z.string().optional(),
      }),
    )
    .optional(),
});
export type ListedCommit = z.output<typeof listedCommitSchema>;
export type Comparison = z.output<typeof comparisonSchema>;

const tagListSchema = z.array(z.object({ name: z.string(), commit: z.object({ sha: z.string() }) }));
const refListSchema = z.array(refSchema);

export type Repository = z.output<typeof repoSchema>;
export type GitRef = z.output<typeof refSchema>;
export type GitCommit = z.output<typeof commitSchema>;
export type CheckRun = z.output<typeof checkRunSchema>;
export type PullRequest = z.output<typeof pullSchema>;

export type CheckConclusion = 'success' | 'failure' | 'action_required';

export interface CheckRunOutput {
  title: string;
  summary: string;
  text?: string;
  annotations?: CheckAnnotation[];
}

export interface CheckAnnotation {
  path: string;
  start_line: number;
  end_line: number;
  annotation_level: 'notice' | 'warning' | 'failure';
  title: string;
  message: string;
}

export interface TreeWrite {
  path: string;
  mode: '100644';
  type: 'blob';
  /** null deletes the path from the base tree. */
  sha: string | null;
}

/** Most tags listed by pick-baseline: 10 pages of 100. */
const MAX_TAG_PAGES = 10;

export class GitHubRepoApi {
  constructor(
    readonly client: GitHubClient,
    readonly owner: string,
    readonly repo: string,
    private readonly secrets: readonly string[] = [],
  ) {}

  get repository(): string {
    return `${this.owner}/${this.repo}`;
  }

  private async call<S extends z.ZodType>(
    operation: OperationName,
    schema: S,
    request: () => Promise<{ data: unknown }>,
    notFound?: string,
  ): Promise<z.output<S>> {
    let data: unknown;
    try {
      data = (await request()).data;
    } catch (error) {
      throw explainGitHubError(operation, error, { repository: this.repository, secrets: this.secrets, ...(notFound ? { notFound } : {}) });
    }
    const parsed = schema.safeParse(data);
    if (!parsed.success) {
      const where = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).slice(0, 5);
      throw new GitHubApiError(
        `GitHub answered ${operation} with an unexpected shape (${where.join('; ')}); is GITHUB_API_URL a GitHub API?`,
        operation,
        undefined,
      );
    }
    return parsed.data;
  }

  /** A 404 is an answer here ("no such ref"), not an error. */
  private async maybe<T>(promise: Promise<T>): Promise<T | null> {
    try {
      return await promise;
    } catch (error) {
      if (error instanceof GitHubApiError && error.status === 404) return null;
      throw error;
    }
  }

  private get repoParams() {
    return { owner: this.owner, repo: this.repo };
  }

  getRepository(): Promise<Repository> {
    return this.call('repos.get', repoSchema, () => this.client.rest.repos.get(this.repoParams));
  }

  /** `ref` without the leading "refs/", e.g. "heads/main" or "tags/v1.2.3"; null when absent. */
  findRef(ref: string): Promise<GitRef | null> {
    return this.maybe(this.call('git.getRef', refSchema, () => this.client.rest.git.getRef({ ...this.repoParams, ref })));
  }

  /** The commit a tag points at, through an annotated tag object if there is one. */
  async resolveTagCommit(tag: string): Promise<string> {
    const ref = await this.call(
      'git.getRef',
      refSchema,
      () => this.client.rest.git.getRef({ ...this.repoParams, ref: `tags/${tag}` }),
      `tag ${tag} does not exist in ${this.repository}; push it first or pass --sha`,
    );
    let object = ref.object;
    // Annotated tags can point at tags; a handful of hops is plenty.
    for (let hops = 0; object.type === 'tag' && hops < 5; hops++) {
      const sha = object.sha;
      object = (await this.call('git.getTag', annotatedTagSchema, () => this.client.rest.git.getTag({ ...this.repoParams, tag_sha: sha }))).object;
    }
    if (object.type !== 'commit') throw new GitHubApiError(`tag ${tag} points at a ${object.type}, not a commit; tag a commit`, 'git.getTag', undefined);
    return object.sha;
  }

  async listTagNames(): Promise<string[]> {
    const names: string[] = [];
    for (let page = 1; page <= MAX_TAG_PAGES; page++) {
      const tags = await this.call('repos.listTags', tagListSchema, () => this.client.rest.repos.listTags({ ...this.repoParams, per_page: 100, page }));
      names.push(...tags.map((t) => t.name));
      if (tags.length < 100) break;
    }
    return names;
  }

  async listMatchingTagNames(prefix = ''): Promise<string[]> {
    const refs = await this.call('git.listMatchingRefs', refListSchema, () =>
      this.client.rest.git.listMatchingRefs({ ...this.repoParams, ref: `tags/${prefix}` }),
    );
    return refs.map((r) => r.ref.replace(/^refs\/tags\//, ''));
  }

  /**
   * The commits from `base` to `head` (tags or SHAs) and the files they changed. GitHub
   * lists at most 250 commits and 300 files in one comparison; `total_commits` says how
   * many there were.
   */
  compareCommits(base: string, head: string): Promise<Comparison> {
    return this.call(
      'repos.compareCommitsWithBasehead',
      comparisonSchema,
      () => this.client.rest.repos.compareCommitsWithBasehead({ ...this.repoParams, basehead: `${base}...${head}`, per_page: 250 }),
      `${base} or ${head} is not a tag or commit of ${this.repository}`,
    );
  }

  /** The newest commits reachable from `head` that touched `path` (one page). */
  listCommitsTouching(path: string, head: string, perPage = 100): Promise<ListedCommit[]> {
    return this.call('repos.listCommits', z.array(listedCommitSchema), () =>
      this.client.rest.repos.listCommits({ ...this.repoParams, sha: head, path, per_page: perPage }),
    );
  }

  getCommit(sha: string): Promise<GitCommit> {
    return this.call('git.getCommit', commitSchema, () => this.client.rest.git.getCommit({ ...this.repoParams, commit_sha: sha }));
  }

  async listTreePaths(treeSha: string, under: string): Promise<string[]> {
    const tree = await this.call('git.getTree', treeSchema, () => this.client.rest.git.getTree({ ...this.repoParams, tree_sha: treeSha, recursive: 'true' }));
    if (tree.truncated)
      throw new GitHubApiError(
        `the tree of ${this.repository} is too large to list in one call; loadgate cannot clean up ${under} safely`,
        'git.getTree',
        undefined,
      );
    return tree.tree.filter((e) => e.type === 'blob' && e.path.startsWith(`${under}/`)).map((e) => e.path);
  }

  async createBlob(content: Buffer): Promise<string> {
    const blob = await this.call('git.createBlob', blobSchema, () =>
      this.client.rest.git.createBlob({ ...this.repoParams, content: content.toString('base64'), encoding: 'base64' }),
    );
    return blob.sha;
  }

  async createTree(baseTree: string, entries: TreeWrite[]): Promise<string> {
    const tree = await this.call('git.createTree', treeSchema, () =>
      this.client.rest.git.createTree({ ...this.repoParams, base_tree: baseTree, tree: entries }),
    );
    return tree.sha;
  }

  async createCommit(message: string, tree: string, parents: string[]): Promise<GitCommit> {
    return this.call('git.createCommit', commitSchema, () => this.client.rest.git.createCommit({ ...this.repoParams, message, tree, parents }));
  }

  createBranch(branch: string, sha: string): Promise<GitRef> {
    return this.call('git.createRef', refSchema, () => this.client.rest.git.createRef({ ...this.repoParams, ref: `refs/heads/${branch}`, sha }));
  }

  /**
   * Fast-forward only by default: a branch someone moved meanwhile is an error, not
   * overwritten. `force` is for a report branch whose pull request was merged.
   */
  moveBranch(branch: string, sha: string, force = false): Promise<GitRef> {
    return this.call('git.updateRef', refSchema, () => this.client.rest.git.updateRef({ ...this.repoParams, ref: `heads/${branch}`, sha, force }));
  }

  createCheckRun(params: {
    name: string;
    headSha: string;
    status: 'in_progress' | 'completed';
    conclusion?: CheckConclusion;
    detailsUrl?: string;
    externalId?: string;
    output: CheckRunOutput;
  }): Promise<CheckRun> {
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    return this.call('checks.create', checkRunSchema, () =>
      this.client.rest.checks.create({
        ...this.repoParams,
        name: params.name,
        head_sha: params.headSha,
        status: params.status,
        started_at: now,
        ...(params.conclusion ? { conclusion: params.conclusion, completed_at: now } : {}),
        ...(params.detailsUrl ? { details_url: params.detailsUrl } : {}),
        ...(params.externalId ? { external_id: params.externalId } : {}),
        output: params.output,
      }),
    );
  }

  updateCheckRun(
    id: number,
    params: {
      status?: 'in_progress' | 'completed';
      conclusion?: CheckConclusion;
      detailsUrl?: string;
      externalId?: string;
      startedAt?: boolean;
      output?: CheckRunOutput;
    },
  ): Promise<CheckRun> {
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    return this.call(
      'checks.update',
      checkRunSchema,
      () =>
        this.client.rest.checks.update({
          ...this.repoParams,
          check_run_id: id,
          ...(params.status ? { status: params.status } : {}),
          ...(params.startedAt ? { started_at: now } : {}),
          ...(params.conclusion ? { conclusion: params.conclusion, completed_at: now } : {}),
          ...(params.detailsUrl ? { details_url: params.detailsUrl } : {}),
          ...(params.externalId ? { external_id: params.externalId } : {}),
          ...(params.output ? { output: params.output } : {}),
        }),
      `check run ${id} does not exist in ${this.repository}; pass the id printed by \`publish --mode start\` or leave --check-run-id out`,
    );
  }

  async listCheckRuns(sha: string, name: string): Promise<CheckRun[]> {
    const list = await this.call('checks.listForRef', checkRunListSchema, () =>
      this.client.rest.checks.listForRef({ ...this.repoParams, ref: sha, check_name: name, filter: 'all', per_page: 100 }),
    );
    return list.check_runs;
  }

  /** Every pull request from `branch` into `base`, open or closed, newest first. */
  async listPulls(branch: string, base: string): Promise<PullRequest[]> {
    const pulls = await this.call('pulls.list', z.array(pullSchema), () =>
      this.client.rest.pulls.list({
        ...this.repoParams,
        state: 'all',
        head: `${this.owner}:${branch}`,
        base,
        sort: 'created',
        direction: 'desc',
        per_page: 30,
      }),
    );
    return pulls.filter((p) => p.head.ref === branch).sort((a, b) => b.number - a.number);
  }

  createPull(params: { branch: string; base: string; title: string; body: string }): Promise<PullRequest> {
    return this.call('pulls.create', pullSchema, () =>
      this.client.rest.pulls.create({ ...this.repoParams, head: params.branch, base: params.base, title: params.title, body: params.body }),
    );
  }

  /** `reopen` turns a closed, unmerged pull request back to open. */
  updatePull(number: number, params: { title: string; body: string; reopen?: boolean }): Promise<PullRequest> {
    return this.call('pulls.update', pullSchema, () =>
      this.client.rest.pulls.update({
        ...this.repoParams,
        pull_number: number,
        title: params.title,
        body: params.body,
        ...(params.reopen ? { state: 'open' as const } : {}),
      }),
    );
  }
}
