/**
 * The decision's error rates for the shipped profiles, as the docs show them: `loadgate
 * simulate` (seeded) through the gate's own decision, for no change and a material loss at
 * the noise model's noise and on benches the model does not describe. Writes the table
 * between the markers of docs/how-it-decides.md; `--check` exits 1 when the file is stale.
 * Usage: npm run decision-rates [-- --check]
 */
import { readFile, writeFile } from 'node:fs/promises';
import { simulate, simulationRow, SUPPORTED_USERS, type SimulationRow } from '../src/compare/simulate.ts';
import { loadGateConfig } from '../src/config/load.ts';
import { loadNoiseModel } from '../src/noise/model.ts';

export const DOC = 'docs/how-it-decides.md';
const BEGIN = '<!-- decision-rates:begin -->';
const END = '<!-- decision-rates:end -->';
export const PROFILES = [
  { name: 'local-synapse-duet', model: 'local-synapse-duet', label: 'Local duets (Synapse)' },
  { name: 'local-synapse', model: 'local-synapse', label: 'Local sequential (Synapse)' },
  { name: 'aws-mattermost', model: 'aws-mattermost-duet', label: 'AWS duets (Mattermost, assumed)' },
  { name: 'aws-mattermost-sequential', model: 'aws-mattermost', label: 'AWS sequential (Mattermost, assumed)' },
] as const;
const TRIALS = 1000;
const SEED = 1;

/** The rows a reader needs, by what they ask: the usual case, the loss that must fail, and the benches the model does not know. */
const LINES: readonly { label: string; pick: (rows: readonly SimulationRow[]) => SimulationRow | undefined }[] = [
  { label: 'No change', pick: (rows) => rows.find((r) => r.kind === 'none' && r.bench === 'model') },
  { label: 'Material loss of supported users', pick: (rows) => users(rows, 'model') },
  { label: 'Material regression of the weakest other metric', pick: (rows) => weakest(rows, 'model') },
  { label: 'No change, noise 1.5 × the model', pick: (rows) => rows.find((r) => r.kind === 'none' && r.bench === 'noisier') },
  { label: 'Material loss of supported users, noise 1.5 ×', pick: (rows) => users(rows, 'noisier') },
  { label: 'No change, an unmodelled 6 % per-run factor', pick: (rows) => rows.find((r) => r.kind === 'none' && r.bench === 'shared') },
  { label: 'Material loss of supported users, the same factor', pick: (rows) => users(rows, 'shared') },
  { label: 'No change, slot a 3 % faster than slot b (duets)', pick: (rows) => rows.find((r) => r.kind === 'none' && r.bench === 'slots') },
  { label: 'Material loss of supported users, the same slot effect', pick: (rows) => users(rows, 'slots') },
  { label: 'No change, drift 3 % per run', pick: (rows) => rows.find((r) => r.kind === 'drift') },
  { label: 'No change, speed steps between pairs', pick: (rows) => rows.find((r) => r.kind === 'step') },
];

function users(rows: readonly SimulationRow[], bench: SimulationRow['bench']): SimulationRow | undefined {
  return simulationRow(rows, 'material', SUPPORTED_USERS, bench);
}

/** The material row of another metric that fails least often. */
function weakest(rows: readonly SimulationRow[], bench: SimulationRow['bench']): SimulationRow | undefined {
  return rows.filter((r) => r.kind === 'material' && r.bench === bench && r.metric !== SUPPORTED_USERS).sort((a, b) => a.fail - b.fail)[0];
}

const cell = (r: SimulationRow | undefined) =>
  r ? `${r.pass.toFixed(1)} / ${r.fail.toFixed(1)} / ${r.inconclusive.toFixed(1)} (${r.meanPairs.toFixed(2)})` : '—';

export async function decisionRatesTable(): Promise<string> {
  const rows = await Promise.all(
    PROFILES.map(async (p) => {
      const config = await loadGateConfig(`examples/${p.name}.yml`);
      const model = await loadNoiseModel(`noise/${p.model}.json`, config);
      return { ...p, config, rows: simulate(config, model, { trials: TRIALS, seed: SEED }) };
    }),
  );
  const header = `| Case | ${rows.map((p) => `${p.label}: pass / fail / inconclusive % (pairs)`).join(' | ')} |`;
  const rule = `| --- | ${rows.map(() => '---').join(' | ')} |`;
  const body = LINES.map((l) => `| ${l.label} | ${rows.map((p) => cell(l.pick(p.rows))).join(' | ')} |`);
  const settings = rows
    .map(
      (p) => `${p.label}: ${p.config.repeats} to ${p.config.maxRepeats} pairs at ${p.config.errorRates.falseFailPct} % / ${p.config.errorRates.falsePassPct} %`,
    )
    .join('; ');
  return [header, rule, ...body, '', `${TRIALS} simulated gates per cell, seed ${SEED}; ${settings}. Regenerate with \`npm run decision-rates\`.`].join('\n');
}

/** The document with its marked block replaced by `table`. */
export function withTable(doc: string, table: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${DOC}: the markers ${BEGIN} … ${END} are missing; put them where the table goes`);
  return `${doc.slice(0, start + BEGIN.length)}\n${table}\n${doc.slice(end)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const doc = await readFile(DOC, 'utf8');
  const next = withTable(doc, await decisionRatesTable());
  if (process.argv.includes('--check')) {
    if (next !== doc) {
      console.error(`${DOC} is stale: run npm run decision-rates and commit it`);
      process.exit(1);
    }
    console.log(`${DOC} is up to date`);
  } else {
    await writeFile(DOC, next);
    console.log(`wrote ${DOC}`);
  }
}
