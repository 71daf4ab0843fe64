import { diffProfiles } from '../compare/profile-diff.ts';
import { parseRunResult } from '../results/load.ts';
import type { RunResult } from '../results/schema.ts';
import type { VerdictFile } from '../results/verdict-schema.ts';
import { changedCodeSection } from '../report/changed-code.ts';
import { chatServerOf } from '../chat-servers/registry.ts';
import type { GitHubRepoApi } from './api.ts';
import { changedCommits, type HotFileFunction } from './changed-commits.ts';
import type { ReportFile } from './report-files.ts';

/**
 * The commits behind the hot spots, for the report pull request: when both sides ran
 * released versions (tags of the server's repository) and a test's profile diff has
 * significantly grown functions, the commits between the two tags that touched their
 * files. The hot functions come from the run results in the report, diffed as compare did.
 */

/**
 * The report's run results (results/*.json, disturbed duets left out, as compare judges
 * none of them). A file that is not one is skipped: the explanation is an addition to the
 * report, which compare already checked, and must not stop it being published.
 */
function reportRuns(files: readonly ReportFile[]): RunResult[] {
  const runs: RunResult[] = [];
  for (const f of files.filter((file) => /^results\/[^/]+\.json$/.test(file.path))) {
    try {
      const run = parseRunResult(JSON.parse(f.content.toString('utf8')), f.path);
      if (!run.disturbed) runs.push(run);
    } catch {
      // Not a run result (see above).
    }
  }
  return runs;
}

/** Each test's significantly grown functions, once per function and file, most grown first within a test. */
export function hotFunctions(verdict: VerdictFile, runs: readonly RunResult[]): HotFileFunction[] {
  const seen = new Set<string>();
  const hot: HotFileFunction[] = [];
  for (const test of [...new Set(runs.map((r) => r.test.name))].sort()) {
    const side = (version: string) => runs.filter((r) => r.test.name === test && r.target.version === version);
    const diff = diffProfiles(side(verdict.baseline.version), side(verdict.candidate.version));
    for (const f of diff?.grown.filter((g) => g.significant) ?? []) {
      const key = `${f.name}\u0000${f.file}`;
      if (!seen.has(key)) hot.push({ name: f.name, file: f.file });
      seen.add(key);
    }
  }
  return hot;
}

/**
 * The section for the pull request's body, or undefined when there is nothing to list
 * (a side is a build, not a tag; no profile; nothing grew). `sourceApi` reads the server's
 * repository; a failure to list becomes a line that says so, never a failed publish.
 */
export async function hotSpotCommits(verdict: VerdictFile, files: readonly ReportFile[], sourceApi: (owner: string, repo: string) => GitHubRepoApi): Promise<string | undefined> {
  if (verdict.baseline.build || verdict.candidate.build) return undefined;
  const runs = reportRuns(files);
  const system = runs[0]?.target.system;
  if (system !== 'synapse' && system !== 'mattermost') return undefined;
  const hot = hotFunctions(verdict, runs);
  if (!hot.length) return undefined;
  const source = chatServerOf(system).source;
  const versions = { baseline: verdict.baseline.version, candidate: verdict.candidate.version };
  try {
    const commits = await changedCommits(sourceApi(source.owner, source.repo), source, versions, hot);
    return changedCodeSection({ ...versions, commits });
  } catch (error) {
    return `### The changed code behind the hot spots\n\nThe commits between ${source.tag(versions.baseline)} and ${source.tag(versions.candidate)} of ${source.owner}/${source.repo} that touched the hot functions' files could not be listed: ${(error as Error).message}\n`;
  }
}
