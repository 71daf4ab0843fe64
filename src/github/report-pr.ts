import type { GitHubRepoApi, PullRequest, TreeWrite } from './api.ts';
import { GitHubApiError } from './errors.ts';
import type { ReportFile } from './report-files.ts';

/**
 * The report pull request: the report directory committed with the Git Data API (blobs,
 * a tree on top of the branch's tree, a commit, the ref) to one branch per comparison,
 * and one pull request for that branch. A re-run adds a commit on the same branch and
 * rewrites the same pull request; a closed, unmerged one is reopened; after a merge the
 * next report starts from the default branch in a new pull request, since the merged one
 * cannot take more commits.
 */

/**
 * The comparison's branch and report directory. In a reports repository that several
 * products share, both carry the product repository (owner/name): two products gating the
 * same version labels then never write each other's report.
 */
export function reportNames(baseline: string, candidate: string, product?: string): { branch: string; directory: string } {
  const slug = product ? `${product}/${baseline}-vs-${candidate}` : `${baseline}-vs-${candidate}`;
  return { branch: `perf-report/${slug}`, directory: `reports/${slug}` };
}

export interface PublishReportOptions {
  baseline: string;
  candidate: string;
  files: readonly ReportFile[];
  /** Another branch and report directory than the comparison's (a calibration's). */
  names?: { branch: string; directory: string };
  /**
   * Files at their own paths in the repository, outside the report directory (a
   * calibration's noise model, where the config reads it): written, never deleted.
   */
  repositoryFiles?: readonly ReportFile[];
  title: string;
  body: string;
  commitMessage: string;
  /** The branch the pull request targets; default: the repository's default branch. */
  base?: string | undefined;
}

/** What happened to the pull request. */
export type PullAction = 'created' | 'updated' | 'reopened' | 'already-merged';

export interface PublishedReport {
  branch: string;
  directory: string;
  commitSha: string;
  /** False when the report was identical to what the branch already held. */
  committed: boolean;
  pull: PullRequest;
  pullCreated: boolean;
  pullAction: PullAction;
}

async function commitReport(
  api: GitHubRepoApi,
  options: PublishReportOptions,
  directory: string,
  parentSha: string,
): Promise<{ commitSha: string; committed: boolean }> {
  const parent = await api.getCommit(parentSha);
  // Files the previous report had and this one does not are deleted, so the directory
  // on the branch is exactly this report.
  const previous = await api.listTreePaths(parent.tree.sha, directory);
  const entries: TreeWrite[] = [];
  for (const file of options.files) {
    entries.push({ path: `${directory}/${file.path}`, mode: '100644', type: 'blob', sha: await api.createBlob(file.content) });
  }
  for (const file of options.repositoryFiles ?? []) {
    if (file.path === directory || file.path.startsWith(`${directory}/`)) throw new Error(`${file.path} is inside the report directory ${directory}`);
    entries.push({ path: file.path, mode: '100644', type: 'blob', sha: await api.createBlob(file.content) });
  }
  const current = new Set(entries.map((e) => e.path));
  // Only the report directory's own leftovers are deleted (the repository files are outside it).
  for (const path of previous) if (!current.has(path)) entries.push({ path, mode: '100644', type: 'blob', sha: null });
  const tree = await api.createTree(parent.tree.sha, entries);
  if (tree === parent.tree.sha) return { commitSha: parentSha, committed: false };
  return { commitSha: (await api.createCommit(options.commitMessage, tree, [parentSha])).sha, committed: true };
}

export async function publishReportPr(api: GitHubRepoApi, options: PublishReportOptions): Promise<PublishedReport> {
  const { branch, directory } = options.names ?? reportNames(options.baseline, options.candidate);
  const base = options.base ?? (await api.getRepository()).default_branch;
  const pulls = await api.listPulls(branch, base);
  const open = pulls.find((p) => p.state === 'open');
  const latest = pulls[0];
  const merged = !open && latest?.merged_at ? latest : undefined;

  const existing = await api.findRef(`heads/${branch}`);
  const baseHead = (await api.findRef(`heads/${base}`))?.object.sha;
  // After a merge the branch's commits are in the default branch (or were squashed into
  // it), so the next report starts from the default branch: the new pull request then
  // holds only this report and cannot conflict with the merged one.
  const parentSha = merged ? baseHead : (existing?.object.sha ?? baseHead);
  if (!parentSha) throw new Error(`the branch ${base} of ${api.repository} has no commit to branch the report from`);
  const { commitSha, committed } = await commitReport(api, options, directory, parentSha);
  const done = (pull: PullRequest, pullAction: PullAction): PublishedReport => ({
    branch,
    directory,
    commitSha,
    committed,
    pull,
    pullCreated: pullAction === 'created',
    pullAction,
  });

  // The merged report is exactly this one: there is nothing to review again.
  if (merged && !committed) return done(merged, 'already-merged');

  if (!existing) await api.createBranch(branch, commitSha);
  else if (existing.object.sha !== commitSha) await api.moveBranch(branch, commitSha, merged !== undefined);

  const text = { title: options.title, body: options.body };
  if (open) return done(await api.updatePull(open.number, text), 'updated');
  if (latest && !merged) {
    try {
      return done(await api.updatePull(latest.number, { ...text, reopen: true }), 'reopened');
    } catch (error) {
      // GitHub refuses to reopen a pull request whose branch was deleted or rewritten.
      if (!(error instanceof GitHubApiError && error.status === 422)) throw error;
    }
  }
  return done(await api.createPull({ branch, base, ...text }), 'created');
}
