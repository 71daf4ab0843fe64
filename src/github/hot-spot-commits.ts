import { profileFileSchema, PROFILE_FILE, type ProfileFile } from '../results/profile.ts';
import type { VerdictFile } from '../results/verdict-schema.ts';
import { changedCodeSection } from '../report/changed-code.ts';
import { findChatServer } from '../chat-servers/registry.ts';
import type { GitHubRepoApi } from './api.ts';
import { changedCommits, type HotFileFunction } from './changed-commits.ts';
import type { ReportFile } from './report-files.ts';

/**
 * The commits behind the hot spots, for the report pull request: when both sides ran
 * released versions (tags of the server's repository) and a test's profile diff has
 * significantly grown functions, the commits between the two tags that touched their
 * files. The hot functions come from the report's profile.json, the diff compare recorded.
 */

/**
 * The report's profile record, or undefined when it has none. A file that is not one is
 * left out: the explanation is an addition to the report, which compare already checked,
 * and must not stop it being published.
 */
function profileRecord(files: readonly ReportFile[]): ProfileFile | undefined {
  const file = files.find((f) => f.path === PROFILE_FILE);
  if (!file) return undefined;
  try {
    return profileFileSchema.parse(JSON.parse(file.content.toString('utf8')));
  } catch {
    return undefined;
  }
}

/** Each test's significantly grown functions, once per function and file, most grown first within a test. */
function hotFunctions(record: ProfileFile): HotFileFunction[] {
  const seen = new Set<string>();
  const hot: HotFileFunction[] = [];
  for (const { diff } of [...record.tests].sort((a, b) => (a.test < b.test ? -1 : a.test > b.test ? 1 : 0))) {
    for (const f of diff.grown.filter((g) => g.significant)) {
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
export async function hotSpotCommits(
  verdict: VerdictFile,
  files: readonly ReportFile[],
  sourceApi: (owner: string, repo: string) => GitHubRepoApi,
): Promise<string | undefined> {
  if (verdict.baseline.build || verdict.candidate.build) return undefined;
  const record = profileRecord(files);
  const server = record && findChatServer(record.system);
  if (!record || !server) return undefined;
  const hot = hotFunctions(record);
  if (!hot.length) return undefined;
  const source = server.source;
  const versions = { baseline: verdict.baseline.version, candidate: verdict.candidate.version };
  try {
    const commits = await changedCommits(sourceApi(source.owner, source.repo), source, versions, hot);
    return changedCodeSection({ ...versions, commits });
  } catch (error) {
    return `### The changed code behind the hot spots\n\nThe commits between ${source.tag(versions.baseline)} and ${source.tag(versions.candidate)} of ${source.owner}/${source.repo} that touched the hot functions' files could not be listed: ${(error as Error).message}\n`;
  }
}
