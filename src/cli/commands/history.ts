import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { loadGateConfig } from '../../config/load.ts';
import { HISTORY_FOLDER, readHistory, type HistoryOwner } from '../../history/store.ts';
import { historyView } from '../../history/series.ts';
import { otavaPython } from '../../history/otava.ts';
import type { HistoryRecord } from '../../history/record.ts';
import { changePointLines } from '../../report/history-section.ts';
import { defaultCacheDir } from '../../run/options.ts';
import { InputError } from '../../util/errors.ts';
import { defineCommand, flag } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

const historyCommand = defineCommand({
  command: 'history',
  synopsis: '<dir>',
  about: `Prints the gate history: one line per recorded gate, oldest first (its date, the two
versions, the verdict, the pairs, supported users' change with its standard error, the creep
line and the report). <dir> is a history folder (runs/local/<profile>/history, or
reports/history/<profile> in a reports repository) or a folder above it (run --history's, or
a reports repository's with --config).
Every record is checked: a damaged or foreign one is refused by file and line (exit 3).
--format csv prints one row per record and check (the log ratio, its standard error and
degrees of freedom), for a spreadsheet or a change-point tool; --changes <version> prints
each gating check's series along that version's line and the releases where Apache Otava
finds it shifted.`,
  flags: {
    config: flag.optional(
      '<file>',
      z.string().min(1),
      'The gate config whose history it is: a record of another product or profile is then refused as foreign',
    ),
    format: flag.withDefault('<format>', z.enum(['text', 'csv', 'json']), 'text', 'text, csv or json'),
    changes: flag.optional('<version>', z.string().min(1), "The series along this version's line, and Otava's change points in it"),
  },
  positionals: z.array(z.string()).length(1, 'name one history folder'),
});

export const usage = historyCommand.usage;

/** The folder itself, or its history/<profile> (a reports repository) or history/ (run --history's folder) subfolder when it has one. */
async function folderOf(dir: string, profile: string | undefined): Promise<string> {
  const isDir = async (p: string) => (await stat(p).catch(() => undefined))?.isDirectory() === true;
  if (!(await isDir(dir))) throw new InputError(`${dir}: no such folder; name a history folder (e.g. runs/local/<profile>/history)`);
  for (const inner of [...(profile ? [join(dir, HISTORY_FOLDER, profile), join(dir, profile)] : []), join(dir, HISTORY_FOLDER)])
    if (await isDir(inner)) return inner;
  return dir;
}

const users = (r: HistoryRecord) => r.checks.find((c) => c.id.endsWith('.supportedUsers'));
const pct = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(1)} %`;

function textLine(r: HistoryRecord): string {
  const u = users(r);
  const change = u ? `, supported users ${pct(Math.expm1(u.logRatio) * 100)} (se ${(u.se * 100).toFixed(1)} %)` : '';
  const creep = r.creep ? `; creep since ${r.creep.anchor}: ${r.creep.verdict}` : '';
  return `${r.date.slice(0, 10)}  ${r.baseline} → ${r.candidate}  ${r.verdict} in ${r.pairs} pair${r.pairs === 1 ? '' : 's'}${change}${creep}  ${r.report}`;
}

const csvCell = (v: string | number) => (typeof v === 'number' ? String(v) : /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

function csv(records: readonly HistoryRecord[]): string {
  const rows = [['date', 'product', 'profile', 'baseline', 'candidate', 'verdict', 'pairs', 'check', 'test', 'worse', 'gating', 'logRatio', 'se', 'df']];
  for (const r of records) {
    for (const c of r.checks)
      rows.push([
        r.date,
        r.product,
        r.profile,
        r.baseline,
        r.candidate,
        r.verdict,
        String(r.pairs),
        c.id,
        c.test,
        c.worse,
        String(c.gating),
        String(c.logRatio),
        String(c.se),
        String(c.df),
      ]);
  }
  return rows.map((row) => row.map(csvCell).join(',')).join('\n');
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = historyCommand.parse(argv);
  const config = flags.config ? await loadGateConfig(flags.config) : undefined;
  const dir = await folderOf(flags.positionals[0] as string, config?.name);
  const owner: HistoryOwner | undefined = config ? { product: config.target.system, profile: config.name } : undefined;
  const records = await readHistory(dir, owner);
  if (flags.changes) {
    const view = await historyView(records, flags.changes, {
      source: dir,
      confidence: config?.tolerances.confidence ?? 0.95,
      python: otavaPython(defaultCacheDir()),
    });
    if (flags.format === 'json') io.out(JSON.stringify(view, null, 2));
    else {
      io.out(`${view.releases.join(' → ') || `no recorded line to ${flags.changes}`}`);
      for (const s of view.series) io.out(`${s.metric} (${s.test}): ${s.points.map((p) => `${p.release} ${pct(p.deltaPct)}`).join(', ')}`);
      const found = changePointLines(view);
      io.out(
        'unavailable' in view.otava
          ? `change points: not looked for: ${view.otava.unavailable}`
          : found.length
            ? `change points (Apache Otava ${view.otava.version}):\n${found.map((f) => `  ${f}`).join('\n')}`
            : 'change points: none',
      );
    }
    return 0;
  }
  if (flags.format === 'json') io.out(JSON.stringify(records, null, 2));
  else if (flags.format === 'csv') io.out(csv(records));
  else io.out(records.length ? records.map(textLine).join('\n') : `${dir}: no gate recorded yet`);
  return 0;
}
