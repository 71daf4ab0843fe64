import type { VerdictFile } from '../results/verdict-schema.ts';

/**
 * What each side ran when it was a build rather than a released version, for the
 * report's summary table: a local wheel or source directory with its SHA-256, or the
 * build tarball's URL. No row when both sides are releases (their labels say it all).
 */
export function buildRows(verdict: Pick<VerdictFile, 'baseline' | 'candidate'>): [string, string][] {
  const rows: [string, string][] = [];
  for (const role of ['baseline', 'candidate'] as const) {
    const build = verdict[role].build;
    if (!build) continue;
    const what =
      build.kind === 'url'
        ? `build ${build.url}`
        : `${build.kind === 'wheel' ? 'wheel' : 'source directory'} \`${build.path.replace(/`/g, "'")}\`, SHA-256 \`${build.sha256}\``;
    rows.push([`${role === 'baseline' ? 'Baseline' : 'Candidate'} build`, what]);
  }
  return rows;
}
