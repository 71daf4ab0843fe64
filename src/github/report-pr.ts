import type { GitHubRepoApi, PullRequest, TreeWrite } from './api.ts';
import type { ReportFile } from './report-files.ts';

/**
 * The report pull request: the report directory committed with the Git Data API (blobs,
 * a tree on top of the branch's tree, a commit, the ref) to one branch per comparison,
 * and one open pull request for that branch. A re-run adds a commit on the same branch
 * and rewrites the same pull request; it never opens a second one.
 */

export function reportNames(baseline: string, candidate: string): { branch: string; directory: string } {
  const slug = `${baseline}-vs-${candidate}`;
  return { branch: `perf-report/${slug}`, directory: `reports/${slug}` };
}

export interface PublishReportOptions {
  baseline: string;
  candidate: string;
  files: readonly ReportFile[];
  title: string;
  body: string;
  commitMessage: string;
}

export interface PublishedReport {
  branch: string;
  directory: string;
  commitSha: string;
  /** False when the report was identical to what the branch already held. */
  committed: boolean;
  pull: PullRequest;
  pullCreated: boolean;
}

export async function publishReportPr(api: GitHubRepoApi, options: PublishReportOptions): Promise<PublishedReport> {
  const { branch, directory } = reportNames(options.baseline, options.candidate);
  const repository = await api.getRepository();
  const base = repository.default_branch;

  const existing = await api.findRef(`heads/${branch}`);
  const parentSha = existing?.object.sha ?? (await api.findRef(`heads/${base}`))?.object.sha;
  if (!parentSha) throw new Error(`the default branch ${base} of ${api.repository} has no commit to branch the report from`);
  const parent = await api.getCommit(parentSha);

  // Files the previous report had and this one does not are deleted, so the directory
  // on the branch is exactly this report.
  const previous = await api.listTreePaths(parent.tree.sha, directory);
  const entries: TreeWrite[] = [];
  for (const file of options.files) {
    entries.push({ path: `${directory}/${file.path}`, mode: '100644', type: 'blob', sha: await api.createBlob(file.content) });
  }
  const current = new Set(entries.map((e) => e.path));
  for (const path of previous) if (!current.has(path)) entries.push({ path, mode: '100644', type: 'blob', sha: null });

  const tree = await api.createTree(parent.tree.sha, entries);
  let commitSha = parentSha;
  const committed = tree !== parent.tree.sha;
  if (committed) commitSha = (await api.createCommit(options.commitMessage, tree, [parentSha])).sha;

  if (!existing) await api.createBranch(branch, commitSha);
  else if (committed) await api.moveBranch(branch, commitSha);

  const open = await api.findOpenPull(branch, base);
  const pull = open
    ? await api.updatePull(open.number, { title: options.title, body: options.body })
    : await api.createPull({ branch, base, title: options.title, body: options.body });
  return { branch, directory, commitSha, committed, pull, pullCreated: !open };
}
