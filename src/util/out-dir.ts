import { mkdir, readdir, readFile, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { join, posix, resolve, sep } from 'node:path';
import { z } from 'zod';
import { InputError } from './errors.ts';

/**
 * The file that says a directory is loadgate's output, and lists what loadgate wrote in
 * it. Nothing else is ever deleted or overwritten: a directory holds a person's files as
 * often as ours (`--out .` in a repository).
 */
export const OUT_MARKER = '.loadgate-output.json';

const manifestSchema = z.object({
  writtenBy: z.literal('loadgate'),
  /** Files loadgate wrote, relative, with "/" separators. */
  files: z.array(z.string()),
  /** Directories loadgate created; what its child processes write there (logs) is theirs too. */
  dirs: z.array(z.string()),
});
type Manifest = z.output<typeof manifestSchema>;

const ABOUT = 'loadgate wrote this directory; it deletes or replaces only the files listed here';

/** Paths relative to the directory, "/"-separated and normalised, refusing any that leave it. */
function relPath(rel: string): string {
  const p = posix.normalize(rel.split(sep).join('/'));
  if (p.startsWith('../') || p === '..' || p.startsWith('/') || p === '.' || p === OUT_MARKER) throw new Error(`not a path inside an output directory: ${rel}`);
  return p.replace(/\/$/, '');
}

const under = (dir: string, p: string) => p === dir || p.startsWith(`${dir}/`);

/**
 * An output directory loadgate may write: absent, empty, or written by loadgate before (it
 * holds OUT_MARKER); created, with its marker, at the first write. The manifest is read
 * again before every change, so two writers in one process (the gate loop and the report)
 * never drop each other's entries.
 */
export class OutDir {
  private constructor(
    readonly dir: string,
    private readonly flag: string,
  ) {}

  /**
   * Checks that loadgate may write the directory (its marker comes with the first write).
   * Anything else is an InputError naming the directory, what is in it and the fix;
   * nothing has been written then.
   */
  static async open(dir: string, flag = '--out'): Promise<OutDir> {
    const out = new OutDir(resolve(dir), flag);
    const info = await stat(out.dir).catch(() => undefined);
    if (info && !info.isDirectory()) throw new InputError(`${flag}: ${dir} is a file, not a directory; name a new or empty directory for loadgate's output`);
    const entries = info ? await readdir(out.dir) : [];
    if (entries.includes(OUT_MARKER)) {
      await out.read();
      return out;
    }
    if (entries.length) {
      const shown = entries.sort().slice(0, 5).join(', ');
      throw new InputError(
        `${flag}: ${dir} already holds files loadgate did not write (${shown}${entries.length > 5 ? `, and ${entries.length - 5} more` : ''}); loadgate writes only into a new or empty directory, or one it wrote before (it holds ${OUT_MARKER}). Name another directory, e.g. ${flag} runs/<name>`,
      );
    }
    // Created, with its marker, at the first write: bad input found later leaves nothing behind.
    return out;
  }

  /**
   * Marks a directory without a marker as loadgate's, listing `files` and `dirs` as
   * written by it: for output restored without its marker (a multi-job gate's completed
   * runs come back from an artifact), once the caller has recognised every file as its own.
   */
  static async adopt(dir: string, files: readonly string[], dirs: readonly string[], flag = '--out'): Promise<void> {
    const out = new OutDir(resolve(dir), flag);
    if (await stat(join(out.dir, OUT_MARKER)).catch(() => undefined)) return;
    await out.save({ writtenBy: 'loadgate', files: files.map(relPath).sort(), dirs: dirs.map(relPath).sort() });
  }

  path(rel: string): string {
    return join(this.dir, relPath(rel));
  }

  /** Creates a directory (and its parents) inside, recorded as loadgate's; an existing foreign one is refused. */
  async mkdir(rel: string): Promise<string> {
    const p = relPath(rel);
    const manifest = await this.read();
    const full = join(this.dir, p);
    if (!manifest.dirs.includes(p)) {
      const info = await stat(full).catch(() => undefined);
      if (info) throw this.foreign(p);
      manifest.dirs = [...manifest.dirs, p].sort();
      await this.save(manifest);
    }
    await mkdir(full, { recursive: true });
    return full;
  }

  /** Writes a file, recorded first, so a crash can leave a listed file missing but never a foreign one listed. */
  async writeFile(rel: string, data: string | Uint8Array): Promise<void> {
    const p = relPath(rel);
    const manifest = await this.read();
    const full = join(this.dir, p);
    if (!manifest.files.includes(p)) {
      if (await stat(full).catch(() => undefined)) throw this.foreign(p);
      manifest.files = [...manifest.files, p].sort();
      await this.save(manifest);
    }
    await writeFile(full, data);
  }

  /**
   * Removes the file `rel`, or every file loadgate wrote under the directory `rel` and then
   * the directories it created there that are left empty; anything else there stays.
   */
  async removeWritten(rel: string): Promise<void> {
    const p = relPath(rel);
    const manifest = await this.read();
    const files = manifest.files.filter((f) => under(p, f));
    const dirs = manifest.dirs.filter((d) => under(p, d));
    if (!files.length && !dirs.length) return;
    for (const f of files) await rm(join(this.dir, f), { force: true });
    const removed: string[] = [];
    // Deepest first, so a parent is empty once its children are gone.
    for (const d of [...dirs].sort().reverse()) {
      const gone = await rmdir(join(this.dir, d)).then(
        () => true,
        (error: NodeJS.ErrnoException) => error.code === 'ENOENT',
      );
      if (gone) removed.push(d);
    }
    await this.save({ ...manifest, files: manifest.files.filter((f) => !files.includes(f)), dirs: manifest.dirs.filter((d) => !removed.includes(d)) });
  }

  private foreign(rel: string): InputError {
    return new InputError(`${this.flag}: ${join(this.dir, rel)} was not written by loadgate, so it is neither replaced nor deleted; move it out of ${this.dir}, or name another directory`);
  }

  private async read(): Promise<Manifest> {
    const file = join(this.dir, OUT_MARKER);
    const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (text === undefined) return { writtenBy: 'loadgate', files: [], dirs: [] };
    let parsed;
    try {
      parsed = manifestSchema.safeParse(JSON.parse(text));
    } catch {
      parsed = undefined;
    }
    if (!parsed?.success) throw new InputError(`${this.flag}: ${file} is not loadgate's output marker (expected JSON with writtenBy "loadgate", files and dirs); name another directory`);
    return parsed.data;
  }

  private async save(manifest: Manifest): Promise<void> {
    const text = `${JSON.stringify({ $comment: ABOUT, ...manifest }, null, 2)}\n`;
    await mkdir(this.dir, { recursive: true });
    await writeFile(join(this.dir, OUT_MARKER), text);
  }
}
