import { lstat, readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { InputError } from '../util/errors.ts';

export interface ReportFile {
  /** Path inside the report directory, with "/" separators. */
  path: string;
  content: Buffer;
}

/** GitHub's blob API takes up to 100 MB; a report is far smaller, so stay well below. */
const MAX_FILE_BYTES = 50 * 1024 * 1024;
/**
 * A guard against pointing --report at the wrong directory, not a commit budget: 20 tests
 * x 20 repeats x 2 sides is 800 run results, plus graphs and logs. What is committed is
 * bounded separately (report-pack.ts).
 */
const MAX_FILES = 5000;
const SAFE_NAME = /^[A-Za-z0-9._-][A-Za-z0-9._ -]{0,120}$/;

/**
 * Reads the report directory to commit. Symbolic links are refused (a link could pull a
 * file from outside the report, such as credentials, into a public branch), and so are
 * names that could not be a plain path in a git tree.
 */
export async function readReportDir(dir: string): Promise<ReportFile[]> {
  const files: ReportFile[] = [];
  const visit = async (current: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch (error) {
      throw new InputError(
        `cannot read report directory ${current}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; pass the --out directory of \`loadgate compare\` or \`loadgate run\``,
      );
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const full = join(current, entry.name);
      const rel = relative(dir, full).split(sep).join('/');
      if (!SAFE_NAME.test(entry.name) || entry.name === '.' || entry.name === '..' || entry.name === '.git') {
        throw new InputError(`report ${dir}: ${JSON.stringify(rel)} is not an accepted file name (letters, digits, ".", "_", "-", space)`);
      }
      const info = await lstat(full);
      if (info.isSymbolicLink()) throw new InputError(`report ${dir}: ${rel} is a symbolic link; reports are committed as plain files, copy the file instead`);
      if (info.isDirectory()) {
        await visit(full);
      } else if (info.isFile()) {
        if (info.size > MAX_FILE_BYTES) throw new InputError(`report ${dir}: ${rel} is ${info.size} bytes; the limit is ${MAX_FILE_BYTES}`);
        files.push({ path: rel, content: await readFile(full) });
        if (files.length > MAX_FILES) throw new InputError(`report ${dir}: more than ${MAX_FILES} files; is --report the right directory?`);
      }
    }
  };
  await visit(dir);
  return files;
}
