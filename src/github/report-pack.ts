import type { ReportFile } from './report-files.ts';
import { tarGz } from './tar.ts';

/**
 * Keeps the report commit within GitHub's content-creation limits. Each file is one
 * blob request, and GitHub allows about 80 content-creating requests a minute and 500
 * an hour (secondary rate limits); 20 tests x 20 repeats x 2 sides alone are 800 run
 * results. Small reports are committed file by file, as browsable JSON. Above
 * MAX_COMMITTED_FILES, whole directories (run results first, then logs) are packed into
 * one `<dir>.tar.gz` each, and the report says so; graphs, README.md and verdict.json
 * always stay plain files.
 */

/** Two full publishes of a packed report fit in GitHub's hourly budget of 500. */
export const MAX_COMMITTED_FILES = 200;

/** Packed in this order until the report fits. */
const PACKABLE_DIRS = ['results', 'logs'] as const;

export interface PackedReport {
  files: ReportFile[];
  /** One sentence per packed directory, for the report's README. */
  notes: string[];
  packed: string[];
}

export function packForCommit(files: readonly ReportFile[], maxFiles = MAX_COMMITTED_FILES): PackedReport {
  let current = [...files];
  const notes: string[] = [];
  const packed: string[] = [];
  for (const dir of PACKABLE_DIRS) {
    if (current.length <= maxFiles) break;
    const inside = current.filter((f) => f.path.startsWith(`${dir}/`));
    if (inside.length < 2) continue;
    const archive = `${dir}.tar.gz`;
    current = [...current.filter((f) => !f.path.startsWith(`${dir}/`) && f.path !== archive), { path: archive, content: tarGz(inside) }];
    packed.push(dir);
    notes.push(
      `The ${inside.length} files of \`${dir}/\` are packed in \`${archive}\` (\`tar xzf ${archive}\` restores them): ` +
        `committed one by one, a report of ${files.length} files would exceed GitHub's limit on content-creating requests.`,
    );
  }
  current.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files: current, notes, packed };
}
