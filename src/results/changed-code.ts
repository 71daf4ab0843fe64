import { z } from 'zod';

/**
 * `changed-code.json` beside verdict.json: which of each test's significantly grown
 * functions changed between the two installed versions. Only the bench that installed
 * both sides can tell (the local bench diffs the two Synapse trees); the report records
 * it so that `compare` on another machine renders the same section from it.
 */

const line = z.number().int().positive();

const changedFunctionRecordSchema = z.strictObject({
  name: z.string().min(1),
  /** As the profiler saw it. */
  file: z.string(),
  line: z.number().int().nonnegative().optional(),
  /** The path inside the installed packages, when the file is one of theirs. */
  path: z.string().optional(),
  /** The function's file in the baseline, when it was another (the file was renamed). */
  baselinePath: z.string().optional(),
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

/** The commits between the two release tags that touched the hot functions' files (src/github/changed-commits.ts), as the report renders them. */
export interface FileCommits {
  path: string;
  functions: string[];
  additions: number;
  deletions: number;
  commits: { sha: string; url: string; title: string; author?: string; date?: string }[];
}

export interface ChangedCommits {
  repository: string;
  base: string;
  head: string;
  compareUrl: string;
  totalCommits: number;
  /** The comparison listed fewer commits than the range holds (GitHub lists at most 250). */
  truncated: boolean;
  /** Hot files the range changed, with the commits that touched them. */
  files: FileCommits[];
  /** Hot files the range did not change. */
  untouched: string[];
  /** Hot functions outside the server's own source (libraries, the runtime). */
  outside: string[];
}
