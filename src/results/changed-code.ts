import { z } from 'zod';

/**
 * `changed-code.json` beside verdict.json: which of each test's significantly grown
 * functions changed between the two installed versions. Only the bench that installed
 * both sides can tell (the local bench diffs the two Synapse trees); the report records
 * it so that `compare` on another machine renders the same section from it.
 */

const line = z.number().int().positive();

export const changedFunctionRecordSchema = z.strictObject({
  name: z.string().min(1),
  /** As the profiler saw it. */
  file: z.string(),
  line: z.number().int().nonnegative().optional(),
  /** The path inside the installed packages, when the file is one of theirs. */
  path: z.string().optional(),
  status: z.enum(['changed', 'unchanged', 'added', 'removed', 'not-found']),
  added: z.number().int().nonnegative().optional(),
  removed: z.number().int().nonnegative().optional(),
  baselineLine: line.optional(),
  candidateLine: line.optional(),
  /** Why a function was not found in the trees. */
  why: z.string().optional(),
});
export type ChangedFunctionRecord = z.output<typeof changedFunctionRecordSchema>;

export const changedCodeFileSchema = z.strictObject({
  baseline: z.string(),
  candidate: z.string(),
  tests: z.array(z.strictObject({ test: z.string(), functions: z.array(changedFunctionRecordSchema) })),
});
export type ChangedCodeFile = z.output<typeof changedCodeFileSchema>;

export const CHANGED_CODE_FILE = 'changed-code.json';

/** One test's changed code as the report renders it: the functions, or why it is not known here. */
export type TestChangedCode = { functions: ChangedFunctionRecord[] } | { unavailable: string };
