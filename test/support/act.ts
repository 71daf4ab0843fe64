/**
 * What act (v0.2.89, host mode, offline) needs to run loadgate's workflows: copies without
 * the `concurrency.queue` keys its schema predates, and every pinned remote action
 * replaced by a local stand-in (act loads the metadata even of steps it skips).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { GitHubStandin, type StandinOptions } from './github-standin/server.ts';

export const ROOT = resolve(import.meta.dirname, '..', '..');
const NOOP = join(ROOT, 'test/support/github-standin/act-noop-action');
const CHECKOUT = join(ROOT, 'test/support/github-standin/act-checkout-action');
const AWS_CREDENTIALS = join(ROOT, 'test/support/github-standin/act-aws-credentials-action');
const APP_TOKEN = join(ROOT, 'test/support/github-standin/act-create-github-app-token-action');

/** Remote actions that steps run under act, each with its stand-in; the rest become the no-op. */
function standInFor(action: string): string {
  if (action.startsWith('actions/checkout@')) return CHECKOUT;
  if (action.startsWith('aws-actions/configure-aws-credentials@')) return AWS_CREDENTIALS;
  if (action.startsWith('actions/create-github-app-token@')) return APP_TOKEN;
  return NOOP;
}

type WorkflowShape = { concurrency?: Record<string, unknown>; jobs: Record<string, { concurrency?: Record<string, unknown> }> };

/**
 * The workflow text without its `queue: max` lines. act does not implement concurrency at
 * all, so dropping exactly those keys changes nothing it runs; the parsed documents are
 * compared to prove no other difference.
 */
export function withoutQueue(source: string): string {
  const lines = source.split('\n');
  const kept = lines.filter((line) => !/^\s+queue: max\s*$/.test(line)).join('\n');
  const original = parse(source) as WorkflowShape;
  delete original.concurrency?.queue;
  for (const job of Object.values(original.jobs)) delete job.concurrency?.queue;
  assert.deepEqual(parse(kept), original, 'only the queue keys differ');
  return kept;
}

/** Every `owner/name@sha` the workflows use, each replaced: checkout, the AWS credentials and the App token by their stand-ins, the rest by the no-op. */
export function replacedActions(workflowFiles: string[]): string[] {
  const uses = new Set<string>();
  for (const file of workflowFiles) {
    for (const match of readFileSync(file, 'utf8').matchAll(/^\s*(?:-\s+)?uses:\s+([\w.-]+\/[\w.-]+@[0-9a-f]{40})\b/gm)) uses.add(match[1] as string);
  }
  assert.ok(uses.size > 0, 'the workflows pin remote actions');
  return [...uses].sort().flatMap((action) => ['--local-repository', `${action}=${standInFor(action)}`]);
}

/**
 * A release of loadgate as a tag would hold it, in `dir`: the files git would commit from
 * this checkout (dist/ included, node_modules and caches not), with the reusable workflow
 * made readable for act. Returns `dir`.
 */
export function writeReleaseTree(dir: string): string {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT }).toString().split('\0').filter(Boolean);
  for (const file of files) {
    const from = join(ROOT, file);
    if (!existsSync(from)) continue; // deleted in the work tree, not yet committed
    // An untracked symlink to a directory (a worktree's node_modules or .cache, which the
    // ignore rules' trailing slash does not match) is no part of a release.
    if (statSync(from).isDirectory()) continue;
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(from, join(dir, file));
  }
  const reusable = join(dir, '.github', 'workflows', 'loadgate.yml');
  writeFileSync(reusable, withoutQueue(readFileSync(reusable, 'utf8')));
  return dir;
}

/**
 * The flags every act run of the gate needs: the GitHub stand-in as the API and the
 * repository, where the checkout stand-in finds loadgate, the report's way between jobs
 * (and, for the AWS jobs, the artifacts' way),
 * the shared tool cache, and the token.
 */
export function gateEnvArgs(o: {
  standin: { url: string; owner: string; repo: string };
  loadgate: { repository: string; source: string };
  workspace: string;
  share: string;
  token: string;
  artifacts?: string;
}): string[] {
  return [
    // The repository act runs in: act copies it into the workspace itself only for a checkout
    // without a ref (its isLocalCheckout); the reusable workflow checks out the candidate tag.
    '--env',
    `LOADGATE_ACT_WORKSPACE_SOURCE=${o.workspace}`,
    // The AWS jobs' artifacts (bench description, completed runs), one directory per name.
    ...(o.artifacts ? ['--env', `LOADGATE_ACT_ARTIFACTS=${o.artifacts}`] : []),
    '--env',
    `GITHUB_API_URL=${o.standin.url}`,
    '--env',
    `GITHUB_REPOSITORY=${o.standin.owner}/${o.standin.repo}`,
    '--env',
    `LOADGATE_ACT_CHECKOUT_REPOSITORY=${o.loadgate.repository}`,
    '--env',
    `LOADGATE_ACT_CHECKOUT_SOURCE=${o.loadgate.source}`,
    '--env',
    'LOADGATE_GITHUB_WRITE_INTERVAL_MS=0',
    '--env',
    `LOADGATE_ACT_SHARE=${o.share}`,
    '--env',
    `LOADGATE_CACHE_DIR=${process.env.LOADGATE_CACHE_DIR ?? join(ROOT, '.cache', 'loadgate')}`,
    '-s',
    `GITHUB_TOKEN=${o.token}`,
  ];
}

/**
 * The consumer's repository on the GitHub stand-in, started: the baseline tag (a
 * calibration has none), and the candidate tagged on a new commit of the default branch.
 * The token may write what the reusable workflow's jobs write (checks, contents, pull
 * requests). With `local` (the product's git repository, which act runs in), the tags and
 * the candidate's commit are made there and the stand-in serves that very history: a tag or
 * SHA the API names is one the checkout stand-in checks out.
 */
export async function startConsumerRepository(
  token: string,
  versions: { baseline?: string; candidate: string },
  o: { local?: string; owner?: string; repo?: string; apps?: StandinOptions['apps'] } = {},
): Promise<{ standin: GitHubStandin; candidateSha: string }> {
  const standin = new GitHubStandin({
    owner: o.owner ?? 'mattermost-like',
    repo: o.repo ?? 'chat-server',
    tags: versions.baseline && !o.local ? [versions.baseline] : [],
    tokens: { [token]: { permissions: { checks: 'write', contents: 'write', 'pull-requests': 'write' }, actions: true } },
    ...(o.apps ? { apps: o.apps } : {}),
  });
  let candidateSha: string;
  if (o.local) {
    candidateSha = tagLocalRelease(o.local, versions);
    standin.importGit(o.local);
  } else {
    candidateSha = standin.commitOnDefaultBranch(`release ${versions.candidate}`, { VERSION: `${versions.candidate}\n` });
    standin.addTag(versions.candidate, candidateSha);
  }
  await standin.start();
  return { standin, candidateSha };
}

/** In a product's git repository: the baseline tag on its first commit, the candidate's on a new commit on top. */
export function tagLocalRelease(dir: string, versions: { baseline?: string; candidate: string }): string {
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, '-c', 'user.name=release-lead', '-c', 'user.email=release-lead@chat-server.example', ...args], { encoding: 'utf8' }).trim();
  if (versions.baseline) git('tag', versions.baseline, git('rev-list', '--max-parents=0', 'HEAD'));
  writeFileSync(join(dir, 'VERSION'), `${versions.candidate}\n`);
  git('add', 'VERSION');
  git('commit', '-q', '-m', `release ${versions.candidate}`);
  git('tag', versions.candidate);
  return git('rev-parse', 'HEAD');
}
