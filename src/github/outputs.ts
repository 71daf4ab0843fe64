import { appendFileSync } from 'node:fs';
import * as core from '@actions/core';
import type { CliIO } from '../util/io.ts';
import { cutToBytes } from './markdown.ts';

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

/**
 * GitHub refuses a step summary over 1 MiB ("supports content up to a size of 1024k"),
 * counted in bytes, and then shows none of it.
 */
export const STEP_SUMMARY_LIMIT = 1024 * 1024;
const CUT_NOTE = '\n\n_… cut to fit the 1 MiB job summary limit._';

/** The markdown cut to the step summary's byte limit, leaving room for the line end written after it. */
export function fitJobSummary(markdown: string, limit = STEP_SUMMARY_LIMIT): string {
  if (Buffer.byteLength(markdown, 'utf8') + 1 <= limit) return markdown;
  return cutToBytes(markdown, limit - 1 - Buffer.byteLength(CUT_NOTE, 'utf8')) + CUT_NOTE;
}

/** Adds markdown to the job summary page when running in Actions; a no-op elsewhere. */
export async function writeJobSummary(markdown: string): Promise<boolean> {
  // @actions/core reads the file name from the environment itself.
  if (!process.env.GITHUB_STEP_SUMMARY) return false;
  await core.summary.addRaw(fitJobSummary(markdown), true).write();
  core.summary.emptyBuffer();
  return true;
}
