import { appendFileSync } from 'node:fs';
import * as core from '@actions/core';
import type { CliIO } from '../cli/io.ts';

export type Outputs = Record<string, string | number | boolean>;

const OUTPUT_KEY = /^[a-z][a-z0-9-]{0,62}$/;

/**
 * Prints step outputs as `key=value` lines and, with `githubOutput`, appends them to that
 * file ($GITHUB_OUTPUT). Values are single-line by construction (validated inputs, ids,
 * URLs, JSON.stringify output); a newline would let a value forge another output, so it
 * is refused rather than escaped.
 */
export function emitOutputs(outputs: Outputs, io: CliIO, githubOutput?: string): void {
  const lines: string[] = [];
  for (const [key, raw] of Object.entries(outputs)) {
    const value = String(raw);
    if (!OUTPUT_KEY.test(key)) throw new Error(`output name ${JSON.stringify(key)} is not a valid step output name`);
    if (/[\r\n]/.test(value)) throw new Error(`output ${key} would span lines; refusing to write it`);
    lines.push(`${key}=${value}`);
  }
  for (const line of lines) io.out(line);
  if (githubOutput) appendFileSync(githubOutput, lines.map((l) => `${l}\n`).join(''), 'utf8');
}

/** GitHub caps a step summary at 1 MiB. */
const STEP_SUMMARY_LIMIT = 1_000_000;

/** Adds markdown to the job summary page when running in Actions; a no-op elsewhere. */
export async function writeJobSummary(markdown: string): Promise<boolean> {
  // @actions/core reads the file name from the environment itself.
  if (!process.env.GITHUB_STEP_SUMMARY) return false;
  const text = markdown.length > STEP_SUMMARY_LIMIT ? `${markdown.slice(0, STEP_SUMMARY_LIMIT)}\n\n_… cut to fit the job summary limit._` : markdown;
  await core.summary.addRaw(text, true).write();
  core.summary.emptyBuffer();
  return true;
}
