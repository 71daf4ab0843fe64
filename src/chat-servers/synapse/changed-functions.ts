import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Which hot functions changed between two installed Synapse trees: both versions are in
 * their own venvs on the local bench, so their sources are diffed directly. A function is
 * a Python `def` block (decorators left out); it is found by name, with its enclosing
 * classes and functions, so a method keeps its identity when the file around it moves.
 */

/** A function from the profile diff (the join with it: name, file, and a line inside it when known). */
export interface HotFunction {
  name: string;
  /** As the profiler saw it: an installed path (…/site-packages/synapse/x.py) or one relative to the package root. */
  file: string;
  line?: number;
}

export type FunctionChange =
  | { status: 'changed'; added: number; removed: number; baselineLine: number; candidateLine: number }
  | { status: 'unchanged'; baselineLine: number; candidateLine: number }
  | { status: 'added'; candidateLine: number }
  | { status: 'removed'; baselineLine: number }
  /** Not a Python function of these trees (a C extension, the interpreter, another package). */
  | { status: 'not-found'; why: string };

export type ChangedFunction = HotFunction & { path: string | undefined } & FunctionChange;

/** The path below site-packages (synapse/handlers/message.py), or undefined outside it. */
export function packagePath(file: string): string | undefined {
  const i = file.lastIndexOf('site-packages/');
  const rel = i >= 0 ? file.slice(i + 'site-packages/'.length) : file.startsWith('/') ? undefined : file;
  return rel && !rel.split('/').includes('..') && rel.endsWith('.py') ? rel : undefined;
}

interface DefBlock {
  /** Enclosing classes and functions, then the name: Class.method. */
  qualname: string;
  name: string;
  /** 1-based first and last line. */
  start: number;
  end: number;
}

const DEF = /^(\s*)(?:async\s+)?(def|class)\s+([A-Za-z_][A-Za-z0-9_]*)/;

/** Every def and class block of a Python file, by indentation (multi-line signatures included). */
export function defBlocks(source: string): DefBlock[] {
  const lines = source.split('\n');
  const indentOf = (l: string) => l.length - l.trimStart().length;
  const blocks: DefBlock[] = [];
  const stack: { indent: number; name: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = DEF.exec(lines[i] as string);
    if (!m) continue;
    const indent = (m[1] as string).length;
    while (stack.length && (stack.at(-1) as { indent: number }).indent >= indent) stack.pop();
    // The header ends where its brackets close.
    let depth = 0;
    let j = i;
    for (; j < lines.length; j++) {
      for (const ch of (lines[j] as string).replace(/#.*$/, '')) depth += ch === '(' || ch === '[' ? 1 : ch === ')' || ch === ']' ? -1 : 0;
      if (depth <= 0) break;
    }
    let end = j;
    for (let k = j + 1; k < lines.length; k++) {
      const l = lines[k] as string;
      if (l.trim() === '') continue;
      if (indentOf(l) <= indent) break;
      end = k;
    }
    const name = m[3] as string;
    if (m[2] === 'def') blocks.push({ qualname: [...stack.map((s) => s.name), name].join('.'), name, start: i + 1, end: end + 1 });
    stack.push({ indent, name });
  }
  return blocks;
}

/** The block a hot function means: by name, the one holding its line when there are several. */
function locate(blocks: readonly DefBlock[], name: string, line: number | undefined): DefBlock | undefined {
  const bare = name.split('.').at(-1) as string;
  const named = blocks.filter((b) => b.qualname === name || b.name === bare);
  if (named.length <= 1 || line === undefined) return named[0];
  return named.find((b) => line >= b.start && line <= b.end) ?? named[0];
}

/** Lines added and removed between two bodies (longest common subsequence of their lines). */
export function lineChanges(a: readonly string[], b: readonly string[]): { added: number; removed: number } {
  const dp: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    const row = dp[i] as number[];
    const next = dp[i + 1] as number[];
    for (let j = b.length - 1; j >= 0; j--) row[j] = a[i] === b[j] ? (next[j + 1] as number) + 1 : Math.max(next[j] as number, row[j + 1] as number);
  }
  const common = (dp[0] as number[])[0] as number;
  return { added: b.length - common, removed: a.length - common };
}

async function readOrUndefined(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch(() => undefined);
}

/**
 * Compares each hot function between the baseline's and the candidate's installed trees
 * (their site-packages directories). The line, when given, is taken as the candidate's.
 */
export async function changedFunctions(roots: { baseline: string; candidate: string }, hot: readonly HotFunction[]): Promise<ChangedFunction[]> {
  const out: ChangedFunction[] = [];
  for (const fn of hot) {
    const path = packagePath(fn.file);
    if (!path) {
      out.push({ ...fn, path, status: 'not-found', why: 'not a Python file of the installed packages' });
      continue;
    }
    const [before, after] = await Promise.all([readOrUndefined(join(roots.baseline, path)), readOrUndefined(join(roots.candidate, path))]);
    const oldBlock = before === undefined ? undefined : locate(defBlocks(before), fn.name, undefined);
    const newBlock = after === undefined ? undefined : locate(defBlocks(after), fn.name, fn.line);
    // The baseline's block of the same qualified name, when the name alone is ambiguous.
    const match = newBlock && before !== undefined ? (defBlocks(before).find((b) => b.qualname === newBlock.qualname) ?? oldBlock) : oldBlock;
    if (!match && !newBlock) {
      out.push({ ...fn, path, status: 'not-found', why: before === undefined && after === undefined ? `${path} is in neither tree` : `no def ${fn.name} in ${path}` });
    } else if (!match) {
      out.push({ ...fn, path, status: 'added', candidateLine: (newBlock as DefBlock).start });
    } else if (!newBlock) {
      out.push({ ...fn, path, status: 'removed', baselineLine: match.start });
    } else {
      const body = (text: string, b: DefBlock) => text.split('\n').slice(b.start - 1, b.end).map((l) => l.trimEnd());
      const { added, removed } = lineChanges(body(before as string, match), body(after as string, newBlock));
      out.push(added + removed === 0
        ? { ...fn, path, status: 'unchanged', baselineLine: match.start, candidateLine: newBlock.start }
        : { ...fn, path, status: 'changed', added, removed, baselineLine: match.start, candidateLine: newBlock.start });
    }
  }
  return out;
}
