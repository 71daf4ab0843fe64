/**
 * The skip guard: every test the run skipped or marked todo (node:test's `skip`, `todo`,
 * `t.skip()`, `t.todo()`, a skipped suite) must be listed, with its reason, in the
 * allowlist (test/skips.json). Reads the JSON lines scripts/skip-guard/reporter.js wrote
 * during the run; scripts/run-tests.sh runs it after the suite.
 *
 * An unlisted skip fails. A listed test whose file ran but which did not skip is stale:
 * the allowlist describes a fresh clone, which is what CI runs, so with --stale=fail (CI)
 * a stale entry fails too; on a developer machine a warm cache can let a listed test run,
 * so there (--stale=warn) it is only reported. Entries for files the run did not include
 * are not judged, so a run of a few files checks only their skips.
 *
 *   tsx scripts/skip-guard/check.ts --results FILE [--allowlist test/skips.json] [--stale warn|fail]
 */
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { z } from 'zod';

/** One line of the reporter's output: the fields of node:test's test:pass and test:fail events it keeps. */
const ResultLine = z.object({
  file: z.string().optional(),
  name: z.string(),
  nesting: z.number().int().min(0),
  suite: z.boolean(),
  passed: z.boolean(),
  skip: z.union([z.string(), z.boolean()]).optional(),
  todo: z.union([z.string(), z.boolean()]).optional(),
});
type ResultLine = z.infer<typeof ResultLine>;

const AllowedSkip = z.strictObject({
  file: z.string().min(1).describe('the test file, relative to the repository root'),
  test: z.string().min(1).describe("the test's name, its suites' and parent tests' names first, joined by ' > '"),
  why: z.string().trim().min(10).describe('why it skips, and what would make it run'),
});
export type AllowedSkip = z.infer<typeof AllowedSkip>;
export const Allowlist = z.strictObject({ skips: z.array(AllowedSkip) });

export interface TestResult {
  /** Relative to the repository root. */
  file: string;
  /** Its own name after its suites' and parent tests' names, joined by ' > '. */
  name: string;
  status: 'ran' | 'skip' | 'todo';
  /** The reason given to skip or todo, if any. */
  reason: string;
}

export interface GuardReport {
  listed: { result: TestResult; why: string }[];
  unlisted: TestResult[];
  /** Entries whose file ran but which did not skip: `ran` when the test ran, `missing` when no test has that name. */
  stale: { entry: AllowedSkip; found: 'ran' | 'missing' | 'no file' }[];
}

interface Node {
  line: ResultLine;
  children: Node[];
}

/**
 * Full names from the run's results, in order. node:test reports a test after its subtests,
 * one nesting level deeper, so the results at level n + 1 since the last one at level n are
 * its children.
 */
export function testResults(lines: readonly ResultLine[], root: string): TestResult[] {
  const byFile = new Map<string, ResultLine[]>();
  for (const line of lines) {
    const file = line.file === undefined ? '(unknown file)' : relative(root, isAbsolute(line.file) ? line.file : resolve(root, line.file));
    byFile.set(file, [...(byFile.get(file) ?? []), line]);
  }
  const results: TestResult[] = [];
  for (const [file, fileLines] of byFile) {
    const pending = new Map<number, Node[]>();
    for (const line of fileLines) {
      const children = pending.get(line.nesting + 1) ?? [];
      pending.delete(line.nesting + 1);
      pending.set(line.nesting, [...(pending.get(line.nesting) ?? []), { line, children }]);
    }
    const walk = (nodes: Node[], prefix: string): void => {
      for (const { line, children } of nodes) {
        const name = prefix ? `${prefix} > ${line.name}` : line.name;
        const [status, reason] =
          line.skip !== undefined && line.skip !== false
            ? ['skip', line.skip]
            : line.todo !== undefined && line.todo !== false
              ? ['todo', line.todo]
              : ['ran', ''];
        results.push({ file, name, status: status as TestResult['status'], reason: reason === true ? '' : reason });
        walk(children, name);
      }
    };
    walk(
      [...pending.entries()].sort(([a], [b]) => a - b).flatMap(([, nodes]) => nodes),
      '',
    );
  }
  return results;
}

/** Compares the run's skips with the allowlist. `fileExists` is asked about entries whose file did not run. */
export function judgeSkips(results: readonly TestResult[], allowed: readonly AllowedSkip[], fileExists: (file: string) => boolean): GuardReport {
  const key = (file: string, name: string) => `${file}\u0000${name}`;
  const entries = new Map(allowed.map((entry) => [key(entry.file, entry.test), entry]));
  const report: GuardReport = { listed: [], unlisted: [], stale: [] };
  const skipped = new Set<string>();
  for (const result of results) {
    if (result.status === 'ran') continue;
    const entry = entries.get(key(result.file, result.name));
    skipped.add(key(result.file, result.name));
    if (entry) report.listed.push({ result, why: entry.why });
    else report.unlisted.push(result);
  }
  const ranFiles = new Set(results.map((r) => r.file));
  const ran = new Set(results.map((r) => key(r.file, r.name)));
  for (const entry of allowed) {
    if (skipped.has(key(entry.file, entry.test))) continue;
    if (ranFiles.has(entry.file)) report.stale.push({ entry, found: ran.has(key(entry.file, entry.test)) ? 'ran' : 'missing' });
    else if (!fileExists(entry.file)) report.stale.push({ entry, found: 'no file' });
  }
  return report;
}

/** Parses the allowlist file, naming it and the field on bad input; a test listed twice is refused. */
export function parseAllowlist(text: string, path: string): AllowedSkip[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path}: not JSON (${(err as Error).message})`);
  }
  const parsed = Allowlist.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ');
    throw new Error(`${path}: ${issues}; each entry is { "file", "test", "why" } under "skips"`);
  }
  const seen = new Set<string>();
  for (const entry of parsed.data.skips) {
    const k = `${entry.file}\u0000${entry.test}`;
    if (seen.has(k)) throw new Error(`${path}: ${entry.file} "${entry.test}" is listed twice`);
    seen.add(k);
  }
  return parsed.data.skips;
}

/** Parses the reporter's JSON lines, naming the line that is not one. */
export function parseResults(text: string, path: string): ResultLine[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch {
        json = undefined;
      }
      const parsed = ResultLine.safeParse(json);
      if (!parsed.success) throw new Error(`${path}:${i + 1}: not a result line of scripts/skip-guard/reporter.js`);
      return parsed.data;
    });
}

/**
 * The guard's findings as lines for the console, after the runner's own summary: one line
 * when all is well, so the runner's closing lines stay near the end. `failed` when the run
 * must fail.
 */
export function describeReport(report: GuardReport, allowlistPath: string, stale: 'warn' | 'fail'): { lines: string[]; failed: boolean } {
  const lines: string[] = [];
  const label = (r: TestResult) => `${r.file}: ${r.name}${r.reason ? ` (${r.status}: ${r.reason})` : ` (${r.status})`}`;
  for (const result of report.unlisted) lines.push(`  UNLISTED ${label(result)}`);
  const found = { ran: 'ran and did not skip', missing: 'no test of that name ran in the file', 'no file': 'the file does not exist' };
  for (const { entry, found: how } of report.stale) lines.push(`  STALE    ${entry.file}: ${entry.test} (${found[how]})`);
  const failed = report.unlisted.length > 0 || (stale === 'fail' && report.stale.length > 0);
  const counts = `${report.listed.length + report.unlisted.length} skipped or todo, ${report.listed.length} of them listed with a reason, ${report.stale.length} stale`;
  lines.unshift(`skip guard: ${counts} (${allowlistPath})`);
  if (report.unlisted.length > 0) lines.push(`skip guard: make each UNLISTED test run, or list it in ${allowlistPath} with why it skips`);
  if (report.stale.length > 0) {
    lines.push(
      `skip guard: remove each STALE entry from ${allowlistPath}${stale === 'fail' ? '' : ' (a warning here; CI=true fails on it, since CI runs a fresh clone)'}`,
    );
  }
  return { lines, failed };
}

function main(): void {
  const { values } = parseArgs({
    options: { results: { type: 'string' }, allowlist: { type: 'string', default: 'test/skips.json' }, stale: { type: 'string', default: 'warn' } },
  });
  if (!values.results || (values.stale !== 'warn' && values.stale !== 'fail')) {
    console.error('usage: tsx scripts/skip-guard/check.ts --results FILE [--allowlist test/skips.json] [--stale warn|fail]');
    process.exit(2);
  }
  const root = process.cwd();
  try {
    const allowed = parseAllowlist(readFileSync(values.allowlist, 'utf8'), values.allowlist);
    const results = testResults(parseResults(readFileSync(values.results, 'utf8'), values.results), root);
    const report = judgeSkips(results, allowed, (file) => existsSync(resolve(root, file)));
    const { lines, failed } = describeReport(report, values.allowlist, values.stale);
    (failed ? console.error : console.log)(lines.join('\n'));
    process.exit(failed ? 1 : 0);
  } catch (err) {
    console.error(`skip guard: ${(err as Error).message}`);
    process.exit(3);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) main();
