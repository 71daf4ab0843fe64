import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verdictFileSchema, type VerdictFile } from '../results/verdict-schema.ts';
import { formatIssuePath } from '../util/errors.ts';

export type VerdictRead = { verdict: VerdictFile; problem?: undefined } | { verdict: null; problem: string };

/**
 * Reads `<report>/verdict.json`. A missing, unreadable, invalid or mismatched verdict is
 * not an exception: the gate then has no verdict, which publish reports as inconclusive
 * (never as a pass).
 */
export async function readVerdict(reportDir: string, expected: { baseline: string; candidate: string }): Promise<VerdictRead> {
  const path = join(reportDir, 'verdict.json');
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    return { verdict: null, problem: `${path} was not produced (${(error as NodeJS.ErrnoException).code ?? 'unreadable'}); the gate stopped before comparing` };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { verdict: null, problem: `${path} is not valid JSON` };
  }
  const parsed = verdictFileSchema.safeParse(data);
  if (!parsed.success) {
    const first = parsed.error.issues.slice(0, 3).map((i) => `${formatIssuePath(i.path)}: ${i.message}`);
    return { verdict: null, problem: `${path} does not match the verdict schema (${first.join('; ')})` };
  }
  const v = parsed.data;
  if (!sameVersion(v.baseline.version, expected.baseline) || !sameVersion(v.candidate.version, expected.candidate)) {
    return {
      verdict: null,
      problem: `${path} compares ${v.baseline.version} with ${v.candidate.version}, not ${expected.baseline} with ${expected.candidate}; it belongs to another comparison`,
    };
  }
  return { verdict: v };
}

/** v1.2.3-rc.1, 1.2.3-rc1 and 1.2.3rc1 name the same release (tag vs PyPI spelling). */
function sameVersion(a: string, b: string): boolean {
  const normal = (v: string) =>
    v
      .toLowerCase()
      .replace(/^v/, '')
      .replace(/[-.]?rc\.?/, 'rc');
  return normal(a) === normal(b);
}
