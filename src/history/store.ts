import { appendFile, mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError } from '../util/errors.ts';
import { HISTORY_KIND, HISTORY_SCHEMA_VERSION, historyRecordSchema, type HistoryRecord } from './record.ts';

/**
 * The history is a folder of JSON Lines files, one record per line, only ever appended to:
 * locally `runs/local/<profile>/history/`, on GitHub `reports/history/<profile>/` in the
 * reports repository. A gate appends to `<baseline>-vs-<candidate>.jsonl` (a file per
 * release pair, so two report pull requests open at once never touch the same file). The
 * folder holds one product's one profile: its steps share a bench, tests and tolerances,
 * which is what lets them be chained.
 */

/** The folder under a profile's runs (`run --history <dir>`) that holds its history. */
export const HISTORY_FOLDER = 'history';

function historyFileName(baseline: string, candidate: string): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._+-]/g, '_');
  return `${safe(baseline)}-vs-${safe(candidate)}.jsonl`;
}

/** The profile a history is read for: a record of any other is foreign to it. */
export interface HistoryOwner {
  product: string;
  profile: string;
}

/** One line of text as a record, or an InputError naming the file, the line, what is wrong and the fix. */
function parseRecordLine(text: string, where: string, owner?: HistoryOwner): HistoryRecord {
  const refuse = (what: string, fix: string) => new InputError(`${where}: ${what}; ${fix}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw refuse(
      `not a JSON record (${(error as Error).message})`,
      "the line is damaged: restore it from the report's history-record.json, or delete it if that gate should not count",
    );
  }
  const head = json !== null && typeof json === 'object' ? (json as Record<string, unknown>) : {};
  if (head.kind !== HISTORY_KIND) {
    throw refuse(
      `not a loadgate history record (kind ${JSON.stringify(head.kind ?? null)}, expected "${HISTORY_KIND}")`,
      'a history folder holds only the records loadgate appends: move this file out of it',
    );
  }
  if (head.schemaVersion !== HISTORY_SCHEMA_VERSION) {
    throw refuse(
      `a record of schema version ${JSON.stringify(head.schemaVersion ?? null)}, this loadgate reads ${HISTORY_SCHEMA_VERSION}`,
      'read it with the loadgate that wrote it, or move it out of the folder',
    );
  }
  const parsed = historyRecordSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(record)'}: ${i.message}`).join('; ');
    throw refuse(`a damaged record (${issues})`, "restore the line from the report's history-record.json, or delete it if that gate should not count");
  }
  const record = parsed.data;
  if (owner && (record.product !== owner.product || record.profile !== owner.profile)) {
    throw refuse(
      `a record of ${record.product} profile "${record.profile}" in the history of ${owner.product} profile "${owner.profile}"`,
      "each profile keeps its own history, since only steps measured on one bench with one set of tests and tolerances can be chained: move the file to that profile's history folder",
    );
  }
  return record;
}

/** The records of one history file's text, every line checked (blank lines aside). */
export function parseHistoryText(text: string, file: string, owner?: HistoryOwner): HistoryRecord[] {
  const out: HistoryRecord[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim()) out.push(parseRecordLine(line, `${file}:${i + 1}`, owner));
  });
  return out;
}

/**
 * Every record in a history folder, oldest first. A folder that does not exist yet is an
 * empty history (the first gate of a profile); a damaged or foreign record is refused by
 * file and line, never skipped: a chain that silently dropped a step would judge the
 * creep on the steps that remain.
 */
export async function readHistory(dir: string, owner?: HistoryOwner): Promise<HistoryRecord[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.jsonl')).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new InputError(`cannot read the history folder ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const records: HistoryRecord[] = [];
  for (const name of names) records.push(...parseHistoryText(await readFile(join(dir, name), 'utf8'), join(dir, name), owner));
  return records.sort((a, b) => Date.parse(a.date) - Date.parse(b.date));
}

/** One line: the record as the history stores it. */
export function recordLine(record: HistoryRecord): string {
  return `${JSON.stringify(historyRecordSchema.parse(record))}\n`;
}

/** Appends a gate's record to its release pair's file in the folder; returns the file. */
export async function appendRecord(dir: string, record: HistoryRecord): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, historyFileName(record.baseline, record.candidate));
  await appendFile(file, recordLine(record));
  return file;
}

/**
 * Where publish commits a gate's record in the reports repository: a file of its own per
 * gate (its workflow run), beside the reports, so two report pull requests open at once
 * never change the same file, and a merged record is never rewritten.
 */
export function publishedRecordPath(profile: string, baseline: string, candidate: string, runId: string | undefined): string {
  const name = historyFileName(baseline, candidate).replace(/\.jsonl$/, runId ? `-run-${runId.replace(/[^0-9A-Za-z]/g, '_')}.jsonl` : '.jsonl');
  return `reports/${HISTORY_FOLDER}/${profile}/${name}`;
}
