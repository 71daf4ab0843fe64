import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OpenAPIBackend, ParsedRequest } from 'openapi-backend';
import { AppError, accountInstallation, appForJwt, createApp, isJwt, mintToken, repoInstallation, type App, type AppOptions } from './apps.ts';
import { GitError, GitStore, type TreeWriteEntry } from './git-store.ts';
import { importGitRepository } from './git-import.ts';
import { loadGitHubApi, type ServedOperation } from './spec.ts';

/**
 * A GitHub REST API stand-in on 127.0.0.1 for tests. Every request is matched and
 * validated against GitHub's OpenAPI description; a request GitHub's schema rejects is
 * answered 422 and recorded in `rejected`, and a route outside the served operations in
 * `unmatched`, so tests can fail on either. It keeps the state a repository would have
 * (git objects, refs, check runs, pull requests) and enforces token permissions and the
 * "Allow GitHub Actions to create and approve pull requests" setting the way GitHub does.
 * It serves further repositories on the same API (`addRepository`: a reports repository,
 * another product), each reachable only by the tokens GitHub would let reach it, and
 * GitHub Apps (apps.ts) that mint installation tokens scoped to their installation.
 */

type Access = 'none' | 'read' | 'write';
type Scope = 'checks' | 'contents' | 'pull-requests' | 'metadata' | 'administration';

export interface TokenSpec {
  permissions: Partial<Record<Scope, Access>>;
  /** A GITHUB_TOKEN of a workflow run (subject to the Actions PR setting). */
  actions?: boolean;
  /**
   * The repositories (owner/name) it reaches; absent: the stand-in's own repository only,
   * as a workflow's GITHUB_TOKEN reaches only the repository it runs in.
   */
  repositories?: string[];
  /** The GitHub App whose installation token it is; absent: GitHub Actions' (a GITHUB_TOKEN). */
  app?: { id: number; slug: string };
}

export interface StandinOptions {
  owner?: string;
  repo?: string;
  defaultBranch?: string;
  tokens?: Record<string, TokenSpec>;
  allowActionsToCreatePullRequests?: boolean;
  /** Tags created on the first commit: lightweight, or annotated when the name is listed in annotatedTags. */
  tags?: string[];
  /** GitHub Apps and their installations (apps.ts); each gets a key pair (`apps`). */
  apps?: AppOptions[];
  annotatedTags?: string[];
  rateLimit?: { limit: number; remaining: number; resetInSec: number };
  /**
   * Whether a completed check run can be set back to in progress, and its conclusion
   * changed. GitHub's reference does not say; reports differ, so both are switchable and
   * loadgate is tested against either answer.
   */
  completedCheckRunsMutable?: boolean;
}

export interface CheckRunRecord {
  id: number;
  name: string;
  head_sha: string;
  status: string;
  conclusion: string | null;
  started_at: string | null;
  completed_at: string | null;
  details_url: string | null;
  external_id: string | null;
  output: { title: string | null; summary: string | null; text: string | null };
  annotations: unknown[];
  /** How many create/update calls touched it. */
  writes: number;
  /** The GitHub App that created it: only that App may update it. */
  app: { id: number; slug: string };
}

export interface PullRecord {
  number: number;
  state: 'open' | 'closed';
  title: string;
  body: string | null;
  head: string;
  base: string;
  merged: boolean;
  /** Who opened it: the token's App (GitHub Actions for a GITHUB_TOKEN). */
  openedBy?: string;
  merged_at: string | null;
  closed_at: string | null;
  /** The head branch's commit when the pull request was closed: GitHub only reopens it if the branch still descends from it. */
  closedHead?: string | undefined;
}

export interface RequestRecord {
  operation: string | undefined;
  method: string;
  path: string;
  status: number;
}

interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

const WRITE_ALL: TokenSpec = { permissions: { checks: 'write', contents: 'write', 'pull-requests': 'write', metadata: 'read' }, actions: true };

/** The permission each operation needs, as GitHub documents for fine-grained and Actions tokens. */
const NEEDS: Record<ServedOperation, [Scope, Access]> = {
  'repos/get': ['metadata', 'read'],
  'repos/list-tags': ['contents', 'read'],
  'repos/compare-commits-with-basehead': ['contents', 'read'],
  'repos/list-commits': ['contents', 'read'],
  'git/get-ref': ['contents', 'read'],
  'git/create-ref': ['contents', 'write'],
  'git/update-ref': ['contents', 'write'],
  'git/list-matching-refs': ['contents', 'read'],
  'git/get-tag': ['contents', 'read'],
  'git/create-blob': ['contents', 'write'],
  'git/get-blob': ['contents', 'read'],
  'git/create-tree': ['contents', 'write'],
  'git/get-tree': ['contents', 'read'],
  'git/create-commit': ['contents', 'write'],
  'git/get-commit': ['contents', 'read'],
  'checks/create': ['checks', 'write'],
  'checks/update': ['checks', 'write'],
  'checks/get': ['checks', 'read'],
  'checks/list-for-ref': ['checks', 'read'],
  'pulls/list': ['pull-requests', 'read'],
  'pulls/create': ['pull-requests', 'write'],
  'pulls/update': ['pull-requests', 'write'],
  'pulls/get': ['pull-requests', 'read'],
  'repos/create-repo-ruleset': ['administration', 'write'],
  // Authenticated as the App (JWT) or, to revoke, by the token itself.
  'apps/get-repo-installation': ['metadata', 'none'],
  'apps/get-user-installation': ['metadata', 'none'],
  'apps/create-installation-access-token': ['metadata', 'none'],
  'apps/revoke-installation-access-token': ['metadata', 'none'],
};

const RANK: Record<Access, number> = { none: 0, read: 1, write: 2 };

/** GitHub Actions as an App: what a workflow's GITHUB_TOKEN creates check runs as. */
const GITHUB_ACTIONS_APP = { id: 15368, slug: 'github-actions' };

/** Operations an App calls as itself, with its JWT; the rest take a token. */
const APP_OPERATIONS: ReadonlySet<string> = new Set(['apps/get-repo-installation', 'apps/get-user-installation', 'apps/create-installation-access-token']);
const MAX_BODY_BYTES = 120 * 1024 * 1024;

function error(status: number, message: string, extra: Record<string, unknown> = {}): Reply {
  return { status, body: { message, documentation_url: 'https://docs.github.com/rest', status: String(status), ...extra } };
}

function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export class GitHubStandin {
  readonly git = new GitStore();
  readonly refs = new Map<string, string>();
  readonly checkRuns: CheckRunRecord[] = [];
  readonly pulls: PullRecord[] = [];
  /** Rulesets created through the API, as sent (docs/github.md's tag ruleset). */
  readonly rulesets: Record<string, unknown>[] = [];
  readonly requests: RequestRecord[] = [];
  /** Requests GitHub's schema rejects: a test that sees any has found a loadgate bug. */
  readonly rejected: { operation: string; errors: unknown }[] = [];
  readonly unmatched: { method: string; path: string }[] = [];
  readonly owner: string;
  readonly repo: string;
  readonly defaultBranch: string;
  tokens: Record<string, TokenSpec>;
  allowActionsToCreatePullRequests: boolean;
  completedCheckRunsMutable: boolean;
  rateLimit: { limit: number; remaining: number; resetInSec: number; resetAt?: number };
  /** Answers the next N calls of an operation with an error (for retry tests). */
  readonly faults = new Map<string, { status: number; times: number; message?: string }>();
  /** GitHub Apps (apps.ts), with their private keys. */
  readonly apps: App[];
  /** Installation tokens minted, in order: what each App got, for which repositories. */
  readonly minted: { app: string; repositories: string[]; permissions: Record<string, string>; atMs: number }[] = [];
  /** The other repositories served on this API, by owner/name. */
  private readonly others = new Map<string, GitHubStandin>();

  private server: Server | undefined;
  private api: OpenAPIBackend | undefined;
  private mocks = new Map<string, unknown>();
  private nextCheckRunId = 1000;
  url = '';

  constructor(options: StandinOptions = {}) {
    this.owner = options.owner ?? 'octo-org';
    this.repo = options.repo ?? 'chat-server';
    this.defaultBranch = options.defaultBranch ?? 'main';
    this.tokens = options.tokens ?? { 'test-token-0123456789': WRITE_ALL };
    this.allowActionsToCreatePullRequests = options.allowActionsToCreatePullRequests ?? true;
    this.completedCheckRunsMutable = options.completedCheckRunsMutable ?? true;
    // The window starts at the first request (see handle), so a test's set-up time cannot use it up.
    this.rateLimit = { ...(options.rateLimit ?? { limit: 5000, remaining: 5000, resetInSec: 3600 }) };
    const tree = this.git.createTree(undefined, [{ path: 'README.md', mode: '100644', type: 'blob', content: '# chat-server\n' }]);
    const first = this.git.writeCommit({ tree, parents: [], message: 'initial commit', date: '2024-01-01T00:00:00Z' });
    this.refs.set(`refs/heads/${this.defaultBranch}`, first);
    for (const tag of options.tags ?? []) this.addTag(tag, first, options.annotatedTags?.includes(tag) ?? false);
    this.apps = (options.apps ?? []).map(createApp);
  }

  get fullName(): string {
    return `${this.owner}/${this.repo}`;
  }

  /**
   * Another repository on the same API (the same tokens, Apps and server): a reports
   * repository, or a second product. Its state is read from the object returned.
   */
  addRepository(options: Omit<StandinOptions, 'tokens' | 'apps' | 'rateLimit'> & { owner: string; repo: string }): GitHubStandin {
    const other = new GitHubStandin({ ...options, tokens: {} });
    other.tokens = this.tokens;
    other.url = this.url;
    other.api = this.api;
    this.others.set(other.fullName, other);
    return other;
  }

  /** This repository or another one served here, by owner/name. */
  repository(fullName: string): GitHubStandin | undefined {
    return fullName === this.fullName ? this : this.others.get(fullName);
  }

  private hosted(account: string): string[] {
    return [this.fullName, ...this.others.keys()].filter((name) => name.startsWith(`${account}/`));
  }

  get repoHtmlUrl(): string {
    return `https://github.com/${this.owner}/${this.repo}`;
  }

  /**
   * Serves a local git repository's history, branches and tags under git's own SHAs: what a
   * checkout of it holds is then what the API says, SHA for SHA. Its branch of the stand-in's
   * default branch's name must exist.
   */
  importGit(dir: string): void {
    const { refs } = importGitRepository(this.git, dir);
    if (!refs.has(`refs/heads/${this.defaultBranch}`)) throw new Error(`${dir} has no branch ${this.defaultBranch}, the stand-in's default branch`);
    for (const [name, sha] of refs) this.refs.set(name, sha);
  }

  /** Adds a commit on the default branch and returns its SHA (for a candidate tag). */
  commitOnDefaultBranch(message: string, files: Record<string, string> = {}): string {
    const parent = this.refs.get(`refs/heads/${this.defaultBranch}`) as string;
    const base = this.git.commits.get(parent)?.tree;
    const writes: TreeWriteEntry[] = Object.entries(files).map(([path, content]) => ({ path, mode: '100644', type: 'blob', content }));
    const tree = this.git.createTree(base, writes);
    const sha = this.git.writeCommit({ tree, parents: [parent], message, date: now() });
    this.refs.set(`refs/heads/${this.defaultBranch}`, sha);
    return sha;
  }

  addTag(name: string, commit: string, annotated = false): void {
    const target = annotated ? this.git.writeTag({ tag: name, object: commit, type: 'commit', message: name }) : commit;
    this.refs.set(`refs/tags/${name}`, target);
  }

  branchHead(branch: string): string | undefined {
    return this.refs.get(`refs/heads/${branch}`);
  }

  /** The files on a branch, path → content; empty when the branch does not exist. */
  filesOnBranch(branch: string): Map<string, Buffer> {
    const head = this.branchHead(branch);
    return head ? this.git.filesAt(head) : new Map();
  }

  /** Closes a pull request without merging it, as a reviewer would. */
  closePull(number: number): void {
    const pull = this.pulls.find((p) => p.number === number);
    if (!pull) throw new Error(`no pull request #${number}`);
    pull.state = 'closed';
    pull.closed_at = now();
    pull.closedHead = this.branchHead(pull.head);
  }

  /** Merges a pull request with a merge commit on its base branch (no conflicts: the report directory is the PR's own). */
  mergePull(number: number, options: { deleteBranch?: boolean } = {}): string {
    const pull = this.pulls.find((p) => p.number === number);
    if (!pull || pull.state !== 'open') throw new Error(`no open pull request #${number}`);
    const head = this.branchHead(pull.head) as string;
    const base = this.branchHead(pull.base) as string;
    const tree = this.git.commits.get(head)?.tree as string;
    const merge = this.git.writeCommit({ tree, parents: [base, head], message: `Merge pull request #${number}`, date: now() });
    this.refs.set(`refs/heads/${pull.base}`, merge);
    pull.state = 'closed';
    pull.merged = true;
    pull.merged_at = now();
    pull.closed_at = pull.merged_at;
    if (options.deleteBranch) this.refs.delete(`refs/heads/${pull.head}`);
    return merge;
  }

  deleteBranch(branch: string): void {
    this.refs.delete(`refs/heads/${branch}`);
  }

  async start(): Promise<this> {
    this.api = await loadGitHubApi();
    for (const other of this.others.values()) other.api = this.api;
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: `stand-in error: ${(err as Error).message}` }));
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    for (const other of this.others.values()) other.url = this.url;
    return this;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async readBody(req: IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) throw new Error('request body too large');
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks);
  }

  /**
   * x-ratelimit-reset is whole epoch seconds; rounding up keeps the window at least
   * resetInSec long (rounding down made a 1 s window last anywhere from 0 to 1 s).
   */
  private windowEnd(): number {
    return Math.ceil(Date.now() / 1000 + this.rateLimit.resetInSec);
  }

  private rateHeaders(): Record<string, string> {
    const resetAt = (this.rateLimit.resetAt ??= this.windowEnd());
    return {
      'x-ratelimit-limit': String(this.rateLimit.limit),
      'x-ratelimit-remaining': String(Math.max(0, this.rateLimit.remaining)),
      'x-ratelimit-reset': String(resetAt),
      'x-ratelimit-resource': 'core',
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const raw = await this.readBody(req);
    const method = (req.method ?? 'GET').toLowerCase();
    let operation: string | undefined;
    const reply = await (async (): Promise<Reply> => {
      let body: unknown;
      if (raw.length) {
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          return error(400, 'Problems parsing JSON');
        }
      }
      const auth = String(req.headers.authorization ?? '');
      const token = /^(?:token|bearer) (.+)$/i.exec(auth)?.[1];
      // An App's JWT: only the App endpoints take it.
      let app: App | undefined;
      if (token && isJwt(token) && !this.tokens[token]) {
        try {
          app = appForJwt(this.apps, token);
        } catch (e) {
          if (e instanceof AppError) return error(e.status, e.message);
          throw e;
        }
      }
      const spec = token ? this.tokens[token] : undefined;
      if (!spec && !app) return error(401, 'Bad credentials');

      const resetAt = (this.rateLimit.resetAt ??= this.windowEnd());
      if (Date.now() / 1000 >= resetAt) {
        this.rateLimit.remaining = this.rateLimit.limit;
        this.rateLimit.resetAt = this.windowEnd();
      }
      if (this.rateLimit.remaining <= 0) {
        return { ...error(403, 'API rate limit exceeded for installation ID 1.'), headers: this.rateHeaders() };
      }
      this.rateLimit.remaining--;

      const api = this.api as OpenAPIBackend;
      const request = { method, path: url.pathname, query: url.search.slice(1), headers: req.headers as Record<string, string>, body };
      const matched = api.matchOperation(request);
      if (!matched) {
        this.unmatched.push({ method, path: url.pathname });
        return error(404, 'Not Found');
      }
      operation = matched.operationId as string;
      const validation = api.validateRequest(request, matched);
      if (!validation.valid) {
        this.rejected.push({ operation, errors: validation.errors });
        return error(422, 'Invalid request.', { errors: (validation.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''}`) });
      }
      const parsed = api.router.parseRequest(request, matched);
      if (APP_OPERATIONS.has(operation) !== (app !== undefined)) {
        return error(
          401,
          app ? 'A JSON web token cannot be used for this endpoint; use an installation token' : 'A JSON web token is required to access this endpoint.',
        );
      }
      if (app) return this.appDispatch(app, operation, parsed);
      const user = spec as TokenSpec;
      if (operation === 'apps/revoke-installation-access-token') {
        delete this.tokens[token as string];
        return { status: 204 };
      }
      const params = parsed.params as Record<string, string>;
      const target = this.repository(`${params.owner}/${params.repo}`);
      // A private repository the token cannot reach does not exist, for it.
      if (!target || !(user.repositories ?? [this.fullName]).includes(target.fullName)) return error(404, 'Not Found');
      const [scope, level] = NEEDS[operation as ServedOperation];
      if (RANK[user.permissions[scope] ?? (scope === 'metadata' ? 'read' : 'none')] < RANK[level]) {
        // GitHub hides private repositories from tokens without any access, and names the
        // problem for tokens that can see the repository but lack the permission.
        return error(403, 'Resource not accessible by integration');
      }
      const fault = this.faults.get(operation);
      if (fault && fault.times > 0) {
        fault.times--;
        return error(fault.status, fault.message ?? (fault.status >= 500 ? 'Server Error' : 'Injected error'));
      }
      const reply = target.dispatch(operation as ServedOperation, parsed, user);
      if (target !== this) target.requests.push({ operation, method, path: url.pathname, status: reply.status });
      return reply;
    })();
    this.requests.push({ operation, method, path: url.pathname, status: reply.status });
    const headers = { 'content-type': 'application/json; charset=utf-8', ...this.rateHeaders(), ...reply.headers };
    res.writeHead(reply.status, headers);
    res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
  }

  /** A schema-shaped example response of the operation, with our state laid over it. */
  private mock(operation: string, overlay: Record<string, unknown>): Record<string, unknown> {
    if (!this.mocks.has(operation)) this.mocks.set(operation, (this.api as OpenAPIBackend).mockResponseForOperation(operation).mock);
    const base = structuredClone(this.mocks.get(operation)) as Record<string, unknown>;
    const item = Array.isArray(base) ? (base[0] as Record<string, unknown>) : base;
    return { ...item, ...overlay };
  }

  /** The App endpoints, called with the App's JWT (apps.ts has GitHub's rules). */
  private appDispatch(app: App, operation: string, req: ParsedRequest): Reply {
    const params = req.params as Record<string, string>;
    const body = (req.requestBody ?? {}) as { repositories?: string[]; permissions?: Record<string, string> };
    const installationBody = (installation: App['installations'][number]) =>
      this.mock('apps/get-repo-installation', {
        id: installation.id,
        app_id: app.id,
        app_slug: app.slug,
        client_id: app.clientId,
        target_type: 'Organization',
        repository_selection: installation.repositories === 'all' ? 'all' : 'selected',
        permissions: app.permissions,
        account: { ...((this.mock('apps/get-repo-installation', {}).account as Record<string, unknown> | null) ?? {}), login: installation.account },
      });
    try {
      if (operation === 'apps/get-repo-installation') {
        // The repository must exist, too.
        if (!this.repository(`${params.owner}/${params.repo}`)) return error(404, 'Not Found');
        return { status: 200, body: installationBody(repoInstallation(app, params.owner as string, params.repo as string)) };
      }
      if (operation === 'apps/get-user-installation') return { status: 200, body: installationBody(accountInstallation(app, params.username as string)) };
      const minted = mintToken(app, Number(params.installation_id), body, (account) => this.hosted(account));
      // GitHub names the permissions with "_" (pull_requests); the token table as scopes ("pull-requests").
      const scopes = Object.fromEntries(Object.entries(minted.permissions).map(([k, v]) => [k.replaceAll('_', '-'), v])) as Partial<Record<Scope, Access>>;
      this.tokens[minted.token] = { permissions: scopes, repositories: minted.repositories, app: minted.app };
      this.minted.push({ app: app.slug, repositories: minted.repositories, permissions: minted.permissions, atMs: Date.now() });
      return {
        status: 201,
        body: {
          token: minted.token,
          expires_at: minted.expiresAt,
          permissions: minted.permissions,
          repository_selection: body.repositories ? 'selected' : 'all',
        },
      };
    } catch (e) {
      if (e instanceof AppError) return error(e.status, e.message);
      throw e;
    }
  }

  private dispatch(operation: ServedOperation, req: ParsedRequest, token: TokenSpec): Reply {
    const params = req.params as Record<string, string>;
    if (params.owner !== this.owner || params.repo !== this.repo) return error(404, 'Not Found');
    const body = (req.requestBody ?? {}) as Record<string, unknown>;
    const query = (req.query ?? {}) as Record<string, string>;
    try {
      switch (operation) {
        case 'repos/get':
          return {
            status: 200,
            body: this.mock(operation, {
              name: this.repo,
              full_name: `${this.owner}/${this.repo}`,
              default_branch: this.defaultBranch,
              html_url: this.repoHtmlUrl,
              private: true,
            }),
          };
        case 'repos/compare-commits-with-basehead':
          return this.compare(decodeURIComponent(params.basehead as string));
        case 'repos/list-commits':
          return this.listCommits(query.sha, query.path, Number(query.per_page ?? 30));
        case 'repos/list-tags':
          return { status: 200, body: this.listTags(Number(query.per_page ?? 30), Number(query.page ?? 1)) };
        case 'git/get-ref':
          return this.getRef(decodeURIComponent(params.ref as string));
        case 'git/list-matching-refs':
          return { status: 200, body: this.matchingRefs(decodeURIComponent(params.ref as string)) };
        case 'git/create-ref':
          return this.createRef(body.ref as string, body.sha as string);
        case 'git/update-ref':
          return this.updateRef(decodeURIComponent(params.ref as string), body.sha as string, body.force === true);
        case 'git/get-tag':
          return this.getTag(params.tag_sha as string);
        case 'git/create-blob': {
          const content = body.encoding === 'base64' ? Buffer.from(body.content as string, 'base64') : Buffer.from(body.content as string, 'utf8');
          const sha = this.git.writeBlob(content);
          return { status: 201, body: { sha, url: `${this.url}/repos/${this.owner}/${this.repo}/git/blobs/${sha}` } };
        }
        case 'git/get-blob': {
          const blob = this.git.blobs.get(params.file_sha as string);
          if (!blob) return error(404, 'Not Found');
          return { status: 200, body: this.mock(operation, { sha: params.file_sha, size: blob.length, content: blob.toString('base64'), encoding: 'base64' }) };
        }
        case 'git/create-tree': {
          const sha = this.git.createTree(body.base_tree as string | undefined, body.tree as TreeWriteEntry[]);
          return { status: 201, body: this.treeBody(sha, false) };
        }
        case 'git/get-tree':
          return this.getTree(params.tree_sha as string, query.recursive !== undefined);
        case 'git/create-commit':
          return this.createCommit(body);
        case 'git/get-commit': {
          const commit = this.git.commits.get(params.commit_sha as string);
          if (!commit) return error(404, 'Not Found');
          return { status: 200, body: this.commitBody(params.commit_sha as string) };
        }
        case 'checks/create':
          return this.createCheckRun(body, token.app ?? GITHUB_ACTIONS_APP);
        case 'checks/update':
          return this.updateCheckRun(Number(params.check_run_id), body, token.app ?? GITHUB_ACTIONS_APP);
        case 'checks/get': {
          const run = this.checkRuns.find((r) => r.id === Number(params.check_run_id));
          return run ? { status: 200, body: this.checkRunBody(run) } : error(404, 'Not Found');
        }
        case 'checks/list-for-ref':
          return this.listCheckRuns(decodeURIComponent(params.ref as string), query);
        case 'pulls/list':
          return { status: 200, body: this.listPulls(query) };
        case 'pulls/create':
          return this.createPull(body, token);
        case 'pulls/update':
          return this.updatePull(Number(params.pull_number), body);
        case 'pulls/get': {
          const pull = this.pulls.find((p) => p.number === Number(params.pull_number));
          return pull ? { status: 200, body: this.pullBody(pull) } : error(404, 'Not Found');
        }
        case 'repos/create-repo-ruleset': {
          this.rulesets.push(body);
          return {
            status: 201,
            body: this.mock(operation, { ...body, id: this.rulesets.length, source_type: 'Repository', source: `${this.owner}/${this.repo}` }),
          };
        }
        default:
          return error(404, 'Not Found');
      }
    } catch (err) {
      if (err instanceof GitError) return error(err.status, err.message);
      throw err;
    }
  }

  private refBody(ref: string, sha: string): Record<string, unknown> {
    const type = this.git.typeOf(sha) ?? 'commit';
    return {
      ref,
      node_id: 'REF_x',
      url: `${this.url}/repos/${this.owner}/${this.repo}/git/${ref}`,
      object: { sha, type, url: `${this.url}/repos/${this.owner}/${this.repo}/git/${type}s/${sha}` },
    };
  }

  private getRef(ref: string): Reply {
    const sha = this.refs.get(`refs/${ref}`);
    return sha ? { status: 200, body: this.refBody(`refs/${ref}`, sha) } : error(404, 'Not Found');
  }

  private matchingRefs(prefix: string): unknown[] {
    return [...this.refs.entries()].filter(([name]) => name.startsWith(`refs/${prefix}`)).map(([name, sha]) => this.refBody(name, sha));
  }

  private listTags(perPage: number, page: number): unknown[] {
    const tags = [...this.refs.entries()].filter(([name]) => name.startsWith('refs/tags/'));
    return tags.slice((page - 1) * perPage, page * perPage).map(([name, sha]) => {
      let target = sha;
      while (this.git.tags.has(target)) target = (this.git.tags.get(target) as { object: string }).object;
      const tag = name.slice('refs/tags/'.length);
      return {
        name: tag,
        commit: { sha: target, url: `${this.url}/repos/${this.owner}/${this.repo}/commits/${target}` },
        zipball_url: `${this.url}/repos/${this.owner}/${this.repo}/zipball/${tag}`,
        tarball_url: `${this.url}/repos/${this.owner}/${this.repo}/tarball/${tag}`,
        node_id: 'TAG_x',
      };
    });
  }

  private createRef(ref: string, sha: string): Reply {
    if (!/^refs\/(heads|tags)\/[^\s~^:?*[\\]+$/.test(ref) || ref.includes('..')) return error(422, `${ref} is not a valid ref name.`);
    if (this.refs.has(ref)) return error(422, 'Reference already exists');
    if (!this.git.typeOf(sha)) return error(422, 'Object does not exist');
    this.refs.set(ref, sha);
    return { status: 201, body: this.refBody(ref, sha) };
  }

  private isAncestor(ancestor: string, of: string): boolean {
    const queue = [of];
    const seen = new Set<string>();
    while (queue.length) {
      const sha = queue.shift() as string;
      if (sha === ancestor) return true;
      if (seen.has(sha)) continue;
      seen.add(sha);
      queue.push(...(this.git.commits.get(sha)?.parents ?? []));
    }
    return false;
  }

  private updateRef(ref: string, sha: string, force: boolean): Reply {
    const current = this.refs.get(`refs/${ref}`);
    if (!current) return error(422, 'Reference does not exist');
    if (!this.git.commits.has(sha)) return error(422, 'Object does not exist');
    if (!force && !this.isAncestor(current, sha)) return error(422, 'Update is not a fast forward');
    this.refs.set(`refs/${ref}`, sha);
    return { status: 200, body: this.refBody(`refs/${ref}`, sha) };
  }

  private getTag(sha: string): Reply {
    const tag = this.git.tags.get(sha);
    if (!tag) return error(404, 'Not Found');
    return {
      status: 200,
      body: this.mock('git/get-tag', {
        sha,
        tag: tag.tag,
        message: tag.message,
        object: { sha: tag.object, type: tag.type, url: `${this.url}/x` },
        url: `${this.url}/repos/${this.owner}/${this.repo}/git/tags/${sha}`,
      }),
    };
  }

  private treeBody(sha: string, recursive: boolean): Record<string, unknown> {
    const entries = recursive ? this.git.flatten(sha) : (this.git.trees.get(sha) ?? []).map((e) => ({ ...e, path: e.name }));
    return {
      sha,
      url: `${this.url}/repos/${this.owner}/${this.repo}/git/trees/${sha}`,
      truncated: false,
      tree: entries.map((e) => ({
        path: e.path,
        mode: e.type === 'tree' ? '040000' : e.mode,
        type: e.type,
        sha: e.sha,
        ...(e.type === 'blob' ? { size: this.git.blobs.get(e.sha)?.length ?? 0 } : {}),
      })),
    };
  }

  private getTree(sha: string, recursive: boolean): Reply {
    return this.git.trees.has(sha) ? { status: 200, body: this.treeBody(sha, recursive) } : error(404, 'Not Found');
  }

  /** A tag, branch or commit SHA as the commit it names (annotated tags peeled). */
  private commitish(name: string): string | undefined {
    let sha = this.refs.get(`refs/tags/${name}`) ?? this.refs.get(`refs/heads/${name}`) ?? name;
    for (let hops = 0; this.git.tags.has(sha) && hops < 5; hops++) sha = (this.git.tags.get(sha) as { object: string }).object;
    return this.git.commits.has(sha) ? sha : undefined;
  }

  private ancestors(sha: string): string[] {
    const seen: string[] = [];
    const queue = [sha];
    while (queue.length) {
      const next = queue.shift() as string;
      if (seen.includes(next)) continue;
      seen.push(next);
      queue.push(...((this.git.commits.get(next)?.parents ?? []) as string[]));
    }
    return seen;
  }

  /** A commit as repos/list-commits and the comparison list it (schema "commit"). */
  private listedCommit(sha: string, files?: Record<string, unknown>[]): Record<string, unknown> {
    const c = this.git.commits.get(sha) as { message: string; date: string; parents: string[] };
    const person = { name: 'loadgate-standin', email: 'standin@127.0.0.1', date: c.date };
    return this.mock('repos/list-commits', {
      sha,
      html_url: `${this.repoHtmlUrl}/commit/${sha}`,
      url: `${this.url}/repos/${this.owner}/${this.repo}/commits/${sha}`,
      commit: { ...(this.mock('repos/list-commits', {}).commit as Record<string, unknown>), message: c.message, author: person, committer: person },
      parents: c.parents.map((p) => ({ sha: p, url: `${this.url}/x`, html_url: `${this.repoHtmlUrl}/commit/${p}` })),
      ...(files ? { files } : {}),
    });
  }

  /** GitHub's comparison of base...head: head's commits that base lacks, oldest first, and the files that differ. */
  private compare(basehead: string): Reply {
    const [baseName, headName] = basehead.split('...');
    const base = this.commitish(baseName ?? '');
    const head = this.commitish(headName ?? '');
    if (!base || !head) return error(404, 'Not Found');
    const behind = new Set(this.ancestors(base));
    const range = this.ancestors(head)
      .filter((c) => !behind.has(c))
      .reverse();
    const before = this.git.filesAt(base);
    const after = this.git.filesAt(head);
    const files: Record<string, unknown>[] = [];
    for (const path of [...new Set([...before.keys(), ...after.keys()])].sort()) {
      const a = before.get(path)?.toString('utf8');
      const b = after.get(path)?.toString('utf8');
      if (a === b) continue;
      const linesA = a === undefined ? [] : a.split('\n');
      const linesB = b === undefined ? [] : b.split('\n');
      const additions = linesB.filter((l) => !linesA.includes(l)).length;
      const deletions = linesA.filter((l) => !linesB.includes(l)).length;
      const status = a === undefined ? 'added' : b === undefined ? 'removed' : 'modified';
      files.push({
        sha: 'f'.repeat(40),
        filename: path,
        status,
        additions,
        deletions,
        changes: additions + deletions,
        blob_url: `${this.repoHtmlUrl}/blob/${head}/${path}`,
        raw_url: `${this.repoHtmlUrl}/raw/${head}/${path}`,
        contents_url: `${this.url}/repos/${this.owner}/${this.repo}/contents/${path}`,
      });
    }
    return {
      status: 200,
      body: this.mock('repos/compare-commits-with-basehead', {
        html_url: `${this.repoHtmlUrl}/compare/${basehead}`,
        status: range.length ? 'ahead' : 'identical',
        ahead_by: range.length,
        behind_by: 0,
        total_commits: range.length,
        base_commit: this.listedCommit(base),
        merge_base_commit: this.listedCommit(base),
        commits: range.map((c) => this.listedCommit(c)),
        files,
      }),
    };
  }

  /** repos/list-commits from `sha` (default branch when absent), newest first, only those that changed `path` when given. */
  private listCommits(sha: string | undefined, path: string | undefined, perPage: number): Reply {
    const head = this.commitish(sha ?? this.defaultBranch);
    if (!head) return error(404, 'Not Found');
    const touched = (c: string): boolean => {
      if (path === undefined) return true;
      const parent = (this.git.commits.get(c)?.parents ?? [])[0] as string | undefined;
      const mine = this.git.filesAt(c).get(path);
      const theirs = parent ? this.git.filesAt(parent).get(path) : undefined;
      return mine === undefined ? theirs !== undefined : theirs === undefined || !mine.equals(theirs);
    };
    return {
      status: 200,
      body: this.ancestors(head)
        .filter(touched)
        .slice(0, perPage)
        .map((c) => this.listedCommit(c)),
    };
  }

  private commitBody(sha: string): Record<string, unknown> {
    const c = this.git.commits.get(sha) as { tree: string; parents: string[]; message: string; date: string };
    const person = { name: 'loadgate-standin', email: 'standin@127.0.0.1', date: c.date };
    return this.mock('git/get-commit', {
      sha,
      node_id: 'C_x',
      url: `${this.url}/repos/${this.owner}/${this.repo}/git/commits/${sha}`,
      html_url: `${this.repoHtmlUrl}/commit/${sha}`,
      message: c.message,
      author: person,
      committer: person,
      tree: { sha: c.tree, url: `${this.url}/repos/${this.owner}/${this.repo}/git/trees/${c.tree}` },
      parents: c.parents.map((p) => ({ sha: p, url: `${this.url}/x`, html_url: `${this.repoHtmlUrl}/commit/${p}` })),
    });
  }

  private createCommit(body: Record<string, unknown>): Reply {
    const tree = body.tree as string;
    const parents = (body.parents as string[] | undefined) ?? [];
    if (!this.git.trees.has(tree)) return error(422, 'Tree SHA does not exist');
    for (const p of parents) if (!this.git.commits.has(p)) return error(422, 'Parent SHA does not exist or is not a commit object');
    const sha = this.git.writeCommit({ tree, parents, message: body.message as string, date: now() });
    return { status: 201, body: this.commitBody(sha) };
  }

  private checkRunBody(run: CheckRunRecord): Record<string, unknown> {
    return this.mock('checks/get', {
      id: run.id,
      name: run.name,
      head_sha: run.head_sha,
      status: run.status,
      conclusion: run.conclusion,
      started_at: run.started_at,
      completed_at: run.completed_at,
      details_url: run.details_url,
      external_id: run.external_id,
      html_url: `${this.repoHtmlUrl}/runs/${run.id}`,
      app: { ...((this.mock('checks/get', {}).app as Record<string, unknown> | null) ?? {}), id: run.app.id, slug: run.app.slug },
      url: `${this.url}/repos/${this.owner}/${this.repo}/check-runs/${run.id}`,
      output: { ...run.output, annotations_count: run.annotations.length, annotations_url: `${this.url}/x` },
      pull_requests: [],
    });
  }

  private applyCheckRunWrite(run: CheckRunRecord, body: Record<string, unknown>): Reply | null {
    const status = body.status as string | undefined;
    const conclusion = body.conclusion as string | undefined;
    if ((status === 'completed' || body.completed_at) && !conclusion) {
      return error(422, 'Invalid request.', { errors: ['conclusion is required when status is completed'] });
    }
    // A frozen completed run still takes output and details, as GitHub answers 200.
    const frozen = run.status === 'completed' && !this.completedCheckRunsMutable;
    if (status && !frozen) {
      run.status = status;
      if (status !== 'completed') {
        run.conclusion = null;
        run.completed_at = null;
      }
    }
    if (conclusion && !frozen) {
      run.conclusion = conclusion;
      run.status = 'completed';
      run.completed_at = (body.completed_at as string | undefined) ?? now();
    }
    if (body.started_at) run.started_at = body.started_at as string;
    if (body.details_url) run.details_url = body.details_url as string;
    if (body.external_id) run.external_id = body.external_id as string;
    const output = body.output as { title?: string; summary?: string; text?: string; annotations?: unknown[] } | undefined;
    if (output) {
      run.output = { title: output.title ?? run.output.title, summary: output.summary ?? run.output.summary, text: output.text ?? run.output.text };
      // GitHub appends annotations across updates.
      run.annotations.push(...(output.annotations ?? []));
    }
    run.writes++;
    return null;
  }

  private createCheckRun(body: Record<string, unknown>, app: { id: number; slug: string }): Reply {
    const headSha = body.head_sha as string;
    if (!this.git.commits.has(headSha)) return error(422, `No commit found for SHA: ${headSha}`);
    const run: CheckRunRecord = {
      id: this.nextCheckRunId++,
      name: body.name as string,
      head_sha: headSha,
      status: 'queued',
      conclusion: null,
      started_at: now(),
      completed_at: null,
      details_url: null,
      external_id: null,
      output: { title: null, summary: null, text: null },
      annotations: [],
      writes: 0,
      app,
    };
    const failed = this.applyCheckRunWrite(run, body);
    if (failed) return failed;
    this.checkRuns.push(run);
    return { status: 201, body: this.checkRunBody(run) };
  }

  private updateCheckRun(id: number, body: Record<string, unknown>, app: { id: number; slug: string }): Reply {
    const run = this.checkRuns.find((r) => r.id === id);
    if (!run) return error(404, 'Not Found');
    // GitHub's answer to another App's update (its message quoted as GitHub words it).
    if (run.app.id !== app.id) return error(403, `Invalid app_id \`${app.id}\` - check run can only be modified by the GitHub App that created it.`);
    const copy = structuredClone(run);
    const failed = this.applyCheckRunWrite(copy, body);
    if (failed) return failed;
    Object.assign(run, copy);
    return { status: 200, body: this.checkRunBody(run) };
  }

  private resolveRef(ref: string): string | undefined {
    if (this.git.commits.has(ref)) return ref;
    const sha = this.refs.get(`refs/heads/${ref}`) ?? this.refs.get(`refs/tags/${ref}`) ?? this.refs.get(`refs/${ref}`);
    let target = sha;
    while (target && this.git.tags.has(target)) target = this.git.tags.get(target)?.object;
    return target;
  }

  private listCheckRuns(ref: string, query: Record<string, string>): Reply {
    const sha = this.resolveRef(ref);
    if (!sha) return error(422, `No commit found for SHA: ${ref}`);
    let runs = this.checkRuns.filter((r) => r.head_sha === sha && (!query.check_name || r.name === query.check_name));
    if ((query.filter ?? 'latest') === 'latest') {
      const latest = new Map<string, CheckRunRecord>();
      for (const r of runs) latest.set(r.name, r);
      runs = [...latest.values()];
    }
    runs = [...runs].reverse();
    return { status: 200, body: { total_count: runs.length, check_runs: runs.map((r) => this.checkRunBody(r)) } };
  }

  private pullBody(pull: PullRecord): Record<string, unknown> {
    const base = this.mock('pulls/get', {});
    const side = (ref: string) => ({
      ...(base.head as Record<string, unknown>),
      ref,
      sha: this.branchHead(ref) ?? '0'.repeat(40),
      label: `${this.owner}:${ref}`,
    });
    return {
      ...base,
      number: pull.number,
      id: pull.number + 5000,
      state: pull.state,
      title: pull.title,
      body: pull.body,
      merged: pull.merged,
      merged_at: pull.merged_at,
      closed_at: pull.closed_at,
      draft: false,
      html_url: `${this.repoHtmlUrl}/pull/${pull.number}`,
      url: `${this.url}/repos/${this.owner}/${this.repo}/pulls/${pull.number}`,
      head: side(pull.head),
      base: side(pull.base),
    };
  }

  private listPulls(query: Record<string, string>): unknown[] {
    const state = query.state ?? 'open';
    // GitHub sorts by creation, newest first, unless asked otherwise.
    const ordered = (query.direction ?? 'desc') === 'desc' ? [...this.pulls].reverse() : [...this.pulls];
    return ordered
      .filter((p) => state === 'all' || p.state === state)
      .filter((p) => !query.head || query.head === `${this.owner}:${p.head}` || query.head === p.head)
      .filter((p) => !query.base || query.base === p.base)
      .map((p) => this.pullBody(p));
  }

  private createPull(body: Record<string, unknown>, token: TokenSpec): Reply {
    if (token.actions && !this.allowActionsToCreatePullRequests) return error(403, 'GitHub Actions is not permitted to create or approve pull requests.');
    const head = String(body.head).replace(new RegExp(`^${this.owner}:`), '');
    const base = String(body.base);
    const headSha = this.branchHead(head);
    const baseSha = this.branchHead(base);
    if (!headSha) return error(422, 'Validation Failed', { errors: [{ resource: 'PullRequest', field: 'head', code: 'invalid' }] });
    if (!baseSha) return error(422, 'Validation Failed', { errors: [{ resource: 'PullRequest', field: 'base', code: 'invalid' }] });
    if (this.pulls.some((p) => p.state === 'open' && p.head === head && p.base === base)) {
      return error(422, 'Validation Failed', {
        errors: [{ resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${this.owner}:${head}.` }],
      });
    }
    if (this.isAncestor(headSha, baseSha))
      return error(422, 'Validation Failed', { errors: [{ resource: 'PullRequest', code: 'custom', message: `No commits between ${base} and ${head}` }] });
    const pull: PullRecord = {
      number: this.pulls.length + 1,
      state: 'open',
      title: String(body.title ?? ''),
      body: (body.body as string | undefined) ?? null,
      head,
      base,
      merged: false,
      merged_at: null,
      closed_at: null,
      openedBy: (token.app ?? GITHUB_ACTIONS_APP).slug,
    };
    this.pulls.push(pull);
    return { status: 201, body: this.pullBody(pull) };
  }

  private updatePull(number: number, body: Record<string, unknown>): Reply {
    const pull = this.pulls.find((p) => p.number === number);
    if (!pull) return error(404, 'Not Found');
    if (body.state === 'open' && pull.state === 'closed') {
      // GitHub's rules for reopening: never a merged pull request, and only while its
      // branch exists and still descends from where it was when the PR was closed.
      const head = this.branchHead(pull.head);
      if (pull.merged)
        return error(422, 'Validation Failed', {
          errors: [{ resource: 'PullRequest', code: 'custom', message: 'state cannot be changed. The pull request has been merged.' }],
        });
      if (!head || (pull.closedHead && !this.isAncestor(pull.closedHead, head))) {
        return error(422, 'Validation Failed', {
          errors: [{ resource: 'PullRequest', code: 'custom', message: `state cannot be changed. The ${pull.head} branch has been deleted or force-pushed.` }],
        });
      }
      if (this.pulls.some((p) => p !== pull && p.state === 'open' && p.head === pull.head && p.base === pull.base)) {
        return error(422, 'Validation Failed', {
          errors: [{ resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${this.owner}:${pull.head}.` }],
        });
      }
    }
    if (typeof body.title === 'string') pull.title = body.title;
    if (typeof body.body === 'string') pull.body = body.body;
    if (body.state === 'open' && pull.state === 'closed') {
      pull.state = 'open';
      pull.closed_at = null;
      pull.closedHead = undefined;
    } else if (body.state === 'closed' && pull.state === 'open') {
      pull.state = 'closed';
      pull.closed_at = now();
      pull.closedHead = this.branchHead(pull.head);
    }
    return { status: 200, body: this.pullBody(pull) };
  }
}

export async function startStandin(options: StandinOptions = {}): Promise<GitHubStandin> {
  return new GitHubStandin(options).start();
}
