import { constants } from 'node:fs';
import { lstat, mkdir, readdir, readFile, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { join, posix, resolve, sep } from 'node:path';
import { z } from 'zod';
import { InputError } from './errors.ts';

/**
 * The file that says a directory is loadgate's output, and lists what loadgate wrote in
 * it. Nothing else is ever deleted or overwritten: a directory holds a person's files as
 * often as ours (`--out .` in a repository). The marker is a file anyone can edit, and a
 * path inside the directory can be replaced by a link, so neither is trusted: every entry
 * must be a plain path inside the directory, and no symbolic link under it is followed.
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
  if (!inside(p)) throw new Error(`not a path inside an output directory: ${rel}`);
  return p.replace(/\/$/, '');
}

function inside(p: string): boolean {
  return !(p.startsWith('../') || p === '..' || p.startsWith('/') || p === '.' || p === OUT_MARKER);
}

/** A marker entry as loadgate writes them: already normalised, inside, no trailing "/". */
function isPlainEntry(entry: string): boolean {
  return entry !== '' && !entry.includes('\\') && posix.normalize(entry) === entry && !entry.endsWith('/') && inside(entry);
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
    await this.noLinks(p);
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
    await this.noLinks(p);
    if (!manifest.files.includes(p)) {
      if (await lstat(full).catch(() => undefined)) throw this.foreign(p);
      manifest.files = [...manifest.files, p].sort();
      await this.save(manifest);
    }
    await writeFile(full, data, { flag: NO_FOLLOW_WRITE });
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
    // Every path checked before anything is deleted: a link anywhere leaves everything as it was.
    for (const entry of [...files, ...dirs]) await this.noLinks(entry);
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
    return new InputError(
      `${this.flag}: ${join(this.dir, rel)} was not written by loadgate, so it is neither replaced nor deleted; move it out of ${this.dir}, or name another directory`,
    );
  }

  private async read(): Promise<Manifest> {
    const file = join(this.dir, OUT_MARKER);
    await this.noLinks(OUT_MARKER);
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
    if (!parsed?.success)
      throw new InputError(
        `${this.flag}: ${file} is not loadgate's output marker (expected JSON with writtenBy "loadgate", files and dirs); name another directory`,
      );
    const bad = [...parsed.data.files, ...parsed.data.dirs].find((entry) => !isPlainEntry(entry));
    if (bad !== undefined) {
      throw new InputError(
        `${this.flag}: ${file} lists ${JSON.stringify(bad)}, which is not a path inside ${this.dir}; loadgate writes only plain relative paths there, so the marker was edited. Nothing was deleted or written; name another directory, or remove that entry from the marker`,
      );
    }
    return parsed.data;
  }

  private async save(manifest: Manifest): Promise<void> {
    const text = `${JSON.stringify({ $comment: ABOUT, ...manifest }, null, 2)}\n`;
    await mkdir(this.dir, { recursive: true });
    await this.noLinks(OUT_MARKER);
    await writeFile(join(this.dir, OUT_MARKER), text, { flag: NO_FOLLOW_WRITE });
  }

  /**
   * Refuses `rel` when it, or any directory on the way to it from the output directory, is
   * a symbolic link: writing or deleting through it would reach outside. Components that do
   * not exist yet end the walk.
   */
  private async noLinks(rel: string): Promise<void> {
    const parts = rel.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const p = parts.slice(0, i).join('/');
      const info = await lstat(join(this.dir, p)).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
        throw error;
      });
      if (!info) return;
      if (info.isSymbolicLink()) {
        throw new InputError(
          `${this.flag}: ${join(this.dir, p)} is a symbolic link, which loadgate neither follows nor replaces (it would write or delete outside ${this.dir}); remove the link, or name another directory`,
        );
      }
    }
  }
}

/** Open for writing, created or truncated, failing (ELOOP) if the last component became a link since noLinks looked. */
const NO_FOLLOW_WRITE = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
