import { readFile } from 'node:fs/promises';
import { describeIssues } from '../config/load.ts';
import { InputError } from '../util/errors.ts';
import { RUN_RESULT_SCHEMA_VERSION, runResultSchema, type RunResult } from './schema.ts';

/** Validates one run result; `source` names the file in every message. */
export function parseRunResult(data: unknown, source: string): RunResult {
  const version = (data as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new InputError(`${source}: expected a run-result JSON object`);
  }
  if (version !== RUN_RESULT_SCHEMA_VERSION) {
    throw new InputError(
      `${source}: schemaVersion is ${JSON.stringify(version)}, this loadgate reads schemaVersion ${RUN_RESULT_SCHEMA_VERSION}; ` +
        're-run the test with this loadgate version or convert the file (see schema/run-result.schema.json)',
    );
  }
  const result = runResultSchema.safeParse(data);
  if (!result.success) {
    const lines = describeIssues(result.error.issues).map((l) => `${source}: ${l}`);
    throw new InputError(`${source} is not a valid run result:\n${lines.join('\n')}`, lines);
  }
  if (Date.parse(result.data.finishedAt) < Date.parse(result.data.startedAt)) {
    throw new InputError(`${source}: finishedAt is before startedAt`);
  }
  return result.data;
}

export async function loadRunResult(path: string): Promise<RunResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new InputError(`cannot read run result ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new InputError(`${path} is not valid JSON: ${(error as Error).message}`);
  }
  return parseRunResult(data, path);
}
