import type { GitHubRepoApi, ListedCommit } from './api.ts';
import type { SourceRepository } from '../chat-servers/chat-server.ts';
import type { ChangedCommits, FileCommits } from '../results/changed-code.ts';

/**
 * The commits between the baseline's and the candidate's tags that touched the files of
 * the profile's hot functions: one comparison of the two tags (the range's commits and
 * the files it changed), then, for each hot file the range changed, the commits that
 * touched it, kept when they are in the range. At most `maxFiles` files are looked up.
 */

/** A hot function as the profile diff lists it (the join with it: name and file). */
export interface HotFileFunction {
  name: string;
  file: string;
}

export async function changedCommits(
  api: GitHubRepoApi,
  source: SourceRepository,
  versions: { baseline: string; candidate: string },
  hot: readonly HotFileFunction[],
  maxFiles = 10,
): Promise<ChangedCommits> {
  const base = source.tag(versions.baseline);
  const head = source.tag(versions.candidate);
  const byPath = new Map<string, string[]>();
  const outside: string[] = [];
  for (const fn of hot) {
    const path = source.path(fn.file);
    if (!path) outside.push(fn.name);
    else byPath.set(path, [...(byPath.get(path) ?? []), fn.name]);
  }
  const comparison = await api.compareCommits(base, head);
  const inRange = new Set(comparison.commits.map((c) => c.sha));
  // GitHub lists at most 300 files; beyond that a missing file may still have changed.
  const filesComplete = (comparison.files?.length ?? 0) < 300;
  const files: FileCommits[] = [];
  const untouched: string[] = [];
  for (const [path, functions] of [...byPath].slice(0, maxFiles)) {
    const entry = comparison.files?.find((f) => f.filename === path || f.previous_filename === path);
    if (!entry && filesComplete) {
      untouched.push(path);
      continue;
    }
    const commits = (await api.listCommitsTouching(path, head)).filter((c) => inRange.has(c.sha)).map(toCommit);
    if (!entry && commits.length === 0) untouched.push(path);
    else files.push({ path, functions, additions: entry?.additions ?? 0, deletions: entry?.deletions ?? 0, commits });
  }
  return {
    repository: `${source.owner}/${source.repo}`,
    base,
    head,
    compareUrl: comparison.html_url,
    totalCommits: comparison.total_commits,
    truncated: comparison.commits.length < comparison.total_commits,
    files,
    untouched,
    outside,
  };
}

function toCommit(c: ListedCommit): FileCommits['commits'][number] {
  const title = c.commit.message.split('\n')[0] ?? '';
  return {
    sha: c.sha,
    url: c.html_url,
    title,
    ...(c.commit.author?.name ? { author: c.commit.author.name } : {}),
    ...(c.commit.author?.date ? { date: c.commit.author.date } : {}),
  };
}
