import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { diffArrays } from 'diff';
import type { ChangedCodeCapability } from '../chat-server.ts';
import { installedTree } from './install.ts';
import { pythonFunctions, type PythonFunction } from './python-functions.ts';

/**
 * Which hot functions changed between two installed Python trees: both versions are in
 * their own venvs on the local bench, so their sources are compared directly. Each tree's
 * files are parsed by Python's own `ast` under that tree's interpreter
 * (python-functions.ts), which names and places a function exactly as the profiler does
 * (co_qualname at co_firstlineno, the first decorator's line for a decorated function),
 * so a profile's frame finds its function by name and line. Its counterpart in the other
 * tree is the function of the same qualified name in the same file (when one file holds
 * several, such as `@overload` stubs or a property's getter and setter, the one whose body
 * differs least), or, when the file was renamed, in a file the candidate no longer has.
 */

/** A function from the profile diff (the join with it: name, file, and its first line when known). */
export interface HotFunction {
  name: string;
  /** As the profiler saw it: an installed path (…/site-packages/synapse/x.py) or one relative to the package root. */
  file: string;
  line?: number;
}

/** An installed tree: the directory its packages are imported from, and the interpreter that runs them. */
export interface PythonTree {
  root: string;
  python: string;
}

export type FunctionChange =
  | { status: 'changed'; added: number; removed: number; baselineLine: number; candidateLine: number }
  | { status: 'unchanged'; baselineLine: number; candidateLine: number }
  | { status: 'added'; candidateLine: number }
  | { status: 'removed'; baselineLine: number }
  /** Not a Python function of these trees (a C extension, the interpreter, another package), or not told apart. */
  | { status: 'not-found'; why: string };

/** `baselinePath` is set when the baseline held the function in another file (a renamed file). */
export type ChangedFunction = HotFunction & { path: string | undefined; baselinePath?: string } & FunctionChange;

/** The path below site-packages (synapse/handlers/message.py), or undefined outside it. */
export function packagePath(file: string): string | undefined {
  const i = file.lastIndexOf('site-packages/');
  const rel = i >= 0 ? file.slice(i + 'site-packages/'.length) : file.startsWith('/') ? undefined : file;
  return rel && !rel.split('/').includes('..') && rel.endsWith('.py') ? rel : undefined;
}

/** Lines added and removed between two bodies (the `diff` package's array diff of their lines). */
export function lineChanges(a: readonly string[], b: readonly string[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const part of diffArrays([...a], [...b])) {
    if (part.added) added += part.count;
    else if (part.removed) removed += part.count;
  }
  return { added, removed };
}

interface ParsedFile {
  lines: string[];
  functions: PythonFunction[];
}

/** One tree's files, read and parsed on demand (each file once). */
class Tree {
  private readonly parsed = new Map<string, ParsedFile | string | undefined>();
  private listed: Promise<Set<string>> | undefined;

  constructor(private readonly tree: PythonTree) {}

  /** Reads and parses the files not seen yet, in one interpreter run. */
  async load(paths: readonly string[]): Promise<void> {
    const fresh = [...new Set(paths)].filter((p) => !this.parsed.has(p));
    const texts = await Promise.all(fresh.map((p) => readFile(join(this.tree.root, p), 'utf8').catch(() => undefined)));
    const present = fresh.filter((_, i) => texts[i] !== undefined);
    const found = await pythonFunctions(
      this.tree.python,
      present.map((p) => join(this.tree.root, p)),
    );
    fresh.forEach((p, i) => {
      const text = texts[i];
      const functions = found.get(join(this.tree.root, p));
      this.parsed.set(
        p,
        text === undefined
          ? undefined
          : typeof functions === 'string' || functions === undefined
            ? `${p}: ${functions ?? 'not parsed'}`
            : { lines: text.split('\n'), functions },
      );
    });
  }

  /** A loaded file: its lines and functions, why it did not parse, or undefined when absent. */
  file(path: string): ParsedFile | string | undefined {
    return this.parsed.get(path);
  }

  /** Every .py file below the package directory `top` (relative paths). */
  files(top: string): Promise<Set<string>> {
    this.listed ??= (async () => {
      const entries = await readdir(join(this.tree.root, top), { recursive: true }).catch(() => [] as string[]);
      return new Set(entries.filter((e) => e.endsWith('.py')).map((e) => join(top, e)));
    })();
    return this.listed;
  }
}

const body = (file: ParsedFile, f: PythonFunction): string[] => file.lines.slice(f.first - 1, f.end).map((l) => l.trimEnd());
const lastPart = (qualname: string): string => qualname.slice(qualname.lastIndexOf('.') + 1);

/**
 * The function a profile's frame means: the one of that qualified name at its first line;
 * without a line, the only one of that name. A bare name (a profiler without qualified
 * names) is matched the same way. Undefined, with the reason, when none or several fit.
 */
export function locate(functions: readonly PythonFunction[], name: string, line: number | undefined): PythonFunction | string {
  for (const named of [functions.filter((f) => f.qualname === name), functions.filter((f) => lastPart(f.qualname) === name)]) {
    if (named.length === 0) continue;
    if (line !== undefined) {
      const at = named.find((f) => f.first === line) ?? named.find((f) => line >= f.first && line <= f.end);
      if (at) return at;
      return `no function ${name} at line ${line}`;
    }
    if (named.length === 1) return named[0] as PythonFunction;
    return `${named.length} functions are named ${name} and the profile gives no line to tell them apart`;
  }
  return `no function ${name}`;
}

/** Of the functions of one qualified name, the one whose body is closest to `target`'s. */
function closest(
  file: ParsedFile,
  named: readonly PythonFunction[],
  targetBody: readonly string[],
): { fn: PythonFunction; added: number; removed: number } | undefined {
  let best: { fn: PythonFunction; added: number; removed: number } | undefined;
  for (const fn of named) {
    const { added, removed } = lineChanges(body(file, fn), targetBody);
    if (!best || added + removed < best.added + best.removed) best = { fn, added, removed };
  }
  return best;
}

type Counterpart = { path: string; fn: PythonFunction; added: number; removed: number };

/** The baseline's function for the candidate's: same file, else a file the candidate no longer has (a rename). */
async function counterpart(baseline: Tree, candidate: Tree, path: string, fn: PythonFunction, candidateBody: string[]): Promise<Counterpart | undefined> {
  const same = baseline.file(path);
  if (typeof same === 'object') {
    const found = closest(
      same,
      same.functions.filter((f) => f.qualname === fn.qualname),
      candidateBody,
    );
    if (found) return { path, ...found };
  }
  const top = path.split('/')[0] as string;
  const [before, after] = await Promise.all([baseline.files(top), candidate.files(top)]);
  const gone = [...before].filter((p) => !after.has(p)).sort();
  await baseline.load(gone);
  let best: Counterpart | undefined;
  for (const p of gone) {
    const file = baseline.file(p);
    if (typeof file !== 'object') continue;
    const found = closest(
      file,
      file.functions.filter((f) => f.qualname === fn.qualname),
      candidateBody,
    );
    if (found && (!best || found.added + found.removed < best.added + best.removed)) best = { path: p, ...found };
  }
  return best;
}

/** One hot function against both trees. */
async function compareOne(baseline: Tree, candidate: Tree, fn: HotFunction): Promise<ChangedFunction> {
  const path = packagePath(fn.file);
  if (!path) return { ...fn, path, status: 'not-found', why: 'not a Python file of the installed packages' };
  const [before, after] = [baseline.file(path), candidate.file(path)];
  if (typeof after === 'string') return { ...fn, path, status: 'not-found', why: after };
  if (after === undefined) {
    if (typeof before !== 'object') return { ...fn, path, status: 'not-found', why: typeof before === 'string' ? before : `${path} is in neither tree` };
    const gone = locate(before.functions, fn.name, undefined);
    return typeof gone === 'string'
      ? { ...fn, path, status: 'not-found', why: `${gone} in ${path}` }
      : { ...fn, path, status: 'removed', baselineLine: gone.first };
  }
  const now = locate(after.functions, fn.name, fn.line);
  if (typeof now === 'string') return { ...fn, path, status: 'not-found', why: `${now} in ${path}` };
  const match = await counterpart(baseline, candidate, path, now, body(after, now));
  if (!match) return { ...fn, path, status: 'added', candidateLine: now.first };
  const renamed = match.path !== path ? { baselinePath: match.path } : {};
  return match.added + match.removed === 0
    ? { ...fn, path, ...renamed, status: 'unchanged', baselineLine: match.fn.first, candidateLine: now.first }
    : { ...fn, path, ...renamed, status: 'changed', added: match.added, removed: match.removed, baselineLine: match.fn.first, candidateLine: now.first };
}

/**
 * Compares each hot function between the baseline's and the candidate's installed trees.
 * The line, when given, is the candidate's (the hot functions are the candidate's grown ones).
 */
export async function changedFunctions(trees: { baseline: PythonTree; candidate: PythonTree }, hot: readonly HotFunction[]): Promise<ChangedFunction[]> {
  const baseline = new Tree(trees.baseline);
  const candidate = new Tree(trees.candidate);
  const paths = hot.map((f) => packagePath(f.file)).filter((p): p is string => p !== undefined);
  await Promise.all([baseline.load(paths), candidate.load(paths)]);
  const out: ChangedFunction[] = [];
  for (const fn of hot) out.push(await compareOne(baseline, candidate, fn));
  return out;
}

/** Synapse's changed-code capability: both sides' venvs are in the local bench's cache, diffed there. */
export const synapseChangedCode: ChangedCodeCapability = {
  async changedFunctions(cacheDir, sides, hot) {
    const [baseline, candidate] = await Promise.all([installedTree(cacheDir, sides.baseline), installedTree(cacheDir, sides.candidate)]);
    if (!baseline || !candidate) return undefined;
    return changedFunctions({ baseline, candidate }, hot);
  },
};
