import { readFile } from 'node:fs/promises';
import type { Comparison } from '../results/comparison.ts';
import { CHANGED_CODE_FILE, changedCodeFileSchema, type ChangedCodeFile, type ChangedFunctionRecord } from '../results/changed-code.ts';
import type { FunctionKey } from '../results/profile.ts';
import { InputError } from '../util/errors.ts';
import type { OutDir } from '../util/out-dir.ts';

/**
 * The changed code behind each test's significantly grown functions. Only the bench that
 * installed both versions can diff them, so it hands in `diff`; compare writes what it
 * said to changed-code.json. Without it (compare on another machine), the record an
 * earlier report left in the directory is used when it covers the same functions, and
 * otherwise the report says the changed code is not known here.
 */

/** Which of the hot functions changed between the two installed versions; undefined when the installs are not at hand. */
export type ChangedFunctionsOf = (hot: readonly FunctionKey[]) => Promise<ChangedFunctionRecord[] | undefined>;

export const NOT_INSTALLED =
  'The changed code behind the hot spots is not known here: it needs both versions installed side by side, as on the local bench that ran the gate (which records it in changed-code.json).';

const keyOf = (f: FunctionKey): string => `${f.name}\u0000${f.file}\u0000${f.line ?? ''}`;

/** Each test's significantly grown functions, for the tests that have any. */
function hotByTest(comparison: Comparison): { test: string; hot: FunctionKey[] }[] {
  return comparison.tests.flatMap((t) => {
    const hot = (t.profile?.grown ?? []).filter((f) => f.significant).map(({ name, file, line }) => ({ name, file, ...(line !== undefined ? { line } : {}) }));
    return hot.length ? [{ test: t.name, hot }] : [];
  });
}

async function recorded(out: OutDir, comparison: Comparison): Promise<ChangedCodeFile | undefined> {
  const file = out.path(CHANGED_CODE_FILE);
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  let parsed;
  try {
    parsed = changedCodeFileSchema.safeParse(JSON.parse(text));
  } catch (error) {
    throw new InputError(`${file}: not JSON (${(error as Error).message}); remove it, or compare into another --out directory`);
  }
  if (!parsed.success)
    throw new InputError(
      `${file}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}; remove it, or compare into another --out directory`,
    );
  const { baseline, candidate } = comparison.verdict;
  return parsed.data.baseline === baseline.version && parsed.data.candidate === candidate.version ? parsed.data : undefined;
}

/** The recorded rows of exactly these functions, when the record has them all. */
function fromRecord(record: ChangedCodeFile | undefined, test: string, hot: readonly FunctionKey[]): ChangedFunctionRecord[] | undefined {
  const rows = new Map((record?.tests.find((t) => t.test === test)?.functions ?? []).map((f) => [keyOf(f), f]));
  const found = hot.map((f) => rows.get(keyOf(f)));
  return found.every((f) => f !== undefined) ? (found as ChangedFunctionRecord[]) : undefined;
}

/**
 * Sets each test's `changedCode` (tests with significantly grown functions only) and,
 * when `diff` is given, writes changed-code.json (or removes a stale one).
 */
export async function attachChangedCode(out: OutDir, comparison: Comparison, diff: ChangedFunctionsOf | undefined): Promise<void> {
  const hot = hotByTest(comparison);
  const record = diff || hot.length === 0 ? undefined : await recorded(out, comparison);
  const computed: ChangedCodeFile['tests'] = [];
  for (const { test, hot: functions } of hot) {
    const target = comparison.tests.find((t) => t.name === test);
    if (!target) continue;
    if (!diff) {
      const rows = fromRecord(record, test, functions);
      target.changedCode = rows ? { functions: rows } : { unavailable: NOT_INSTALLED };
      continue;
    }
    try {
      const rows = await diff(functions);
      target.changedCode = rows ? { functions: rows } : { unavailable: NOT_INSTALLED };
      if (rows) computed.push({ test, functions: rows });
    } catch (error) {
      target.changedCode = {
        unavailable: `The changed code behind the hot spots is not known: diffing the installed versions failed (${(error as Error).message}).`,
      };
    }
  }
  if (!diff) return;
  if (computed.length === 0) {
    await out.removeWritten(CHANGED_CODE_FILE);
    return;
  }
  const file: ChangedCodeFile = { baseline: comparison.verdict.baseline.version, candidate: comparison.verdict.candidate.version, tests: computed };
  await out.writeFile(CHANGED_CODE_FILE, `${JSON.stringify(file, null, 2)}\n`);
}
