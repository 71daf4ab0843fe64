/**
 * Lists the functions under src/ longer than a limit (80 lines by default), longest
 * first. A function's length runs from the line its declaration starts on to the line
 * its body closes on, so a long signature counts; a nested function counts towards its
 * parent too, since a reader scrolls past it. Arrow functions and methods count like
 * declarations; one without a name takes the name of the variable or property it is
 * assigned to.
 *
 * With --check, exits 1 on a long function the allowlist below does not name.
 *
 *   tsx scripts/long-functions.ts [--check] [--max N] [src-dir]
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { sourceFiles } from './lib/source-files.ts';

export interface FunctionLength {
  /** Relative to the source folder, with / separators. */
  file: string;
  name: string;
  line: number;
  lines: number;
}

export interface AllowedLong {
  file: string;
  name: string;
  why: string;
}

/**
 * Long functions that exist today, each with the reason it is not split yet. Paths are
 * relative to src/. An entry that matches nothing is reported without failing the check:
 * the splits land on other branches, which do not know this list.
 */
export const ALLOWED: readonly AllowedLong[] = [];

export const DEFAULT_MAX_LINES = 80;

function nameOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (node.name) return node.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name) return parent.name.getText(source);
  if (ts.isExportAssignment(parent)) return 'default';
  return '(anonymous)';
}

/** Every function with a body in one file's text, with its length in lines. */
export function functionsOf(text: string, file: string): FunctionLength[] {
  const kind = /\.m?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const found: FunctionLength[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const fn = node as ts.FunctionLikeDeclaration;
      const start = source.getLineAndCharacterOfPosition(fn.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(fn.getEnd()).line;
      found.push({ file, name: nameOf(fn, source), line: start + 1, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The functions under srcDir longer than max lines, longest first. */
export function longFunctions(srcDir: string, max = DEFAULT_MAX_LINES): FunctionLength[] {
  const toPosix = (p: string) => p.split(sep).join('/');
  return sourceFiles(srcDir)
    .flatMap((path) => functionsOf(readFileSync(path, 'utf8'), toPosix(relative(srcDir, path))))
    .filter((f) => f.lines > max)
    .sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file) || a.line - b.line);
}

export interface LongFunctionReport {
  /** Long and not allowlisted. */
  violations: FunctionLength[];
  allowed: FunctionLength[];
  staleAllowances: AllowedLong[];
}

export function checkLongFunctions(srcDir: string, max = DEFAULT_MAX_LINES, allowed: readonly AllowedLong[] = ALLOWED): LongFunctionReport {
  const report: LongFunctionReport = { violations: [], allowed: [], staleAllowances: [] };
  const used = new Set<AllowedLong>();
  for (const fn of longFunctions(srcDir, max)) {
    const allowance = allowed.find((a) => a.file === fn.file && a.name === fn.name);
    if (allowance) {
      used.add(allowance);
      report.allowed.push(fn);
    } else {
      report.violations.push(fn);
    }
  }
  report.staleAllowances = allowed.filter((a) => !used.has(a));
  return report;
}

export function formatFunction(f: FunctionLength): string {
  return `${String(f.lines).padStart(5)}  ${f.name}  src/${f.file}:${f.line}`;
}

function main(): void {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const rest = args.filter((a) => a !== '--check');
  const maxAt = rest.indexOf('--max');
  const max = maxAt === -1 ? DEFAULT_MAX_LINES : Number(rest.splice(maxAt, 2)[1]);
  if (!Number.isInteger(max) || max < 1 || rest.length > 1 || rest[0]?.startsWith('-')) {
    console.error('usage: tsx scripts/long-functions.ts [--check] [--max N] [src-dir]');
    process.exit(2);
  }
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const srcDir = resolve(rest[0] ?? join(root, 'src'));
  if (!check) {
    const found = longFunctions(srcDir, max);
    console.log([`${found.length} functions over ${max} lines:`, ...found.map(formatFunction)].join('\n'));
    return;
  }
  const report = checkLongFunctions(srcDir, max);
  for (const a of report.staleAllowances)
    console.log(`note: src/${a.file} ${a.name} is no longer over ${max} lines; remove it from ALLOWED in scripts/long-functions.ts`);
  if (report.violations.length) {
    console.error(`Functions over ${max} lines (split them into named steps, or allowlist one in scripts/long-functions.ts with the reason):`);
    for (const f of report.violations) console.error(formatFunction(f));
    process.exit(1);
  }
  console.log(`long functions: ok (none over ${max} lines but ${report.allowed.length} allowlisted)`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) main();
