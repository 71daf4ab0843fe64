/**
 * The creep check's rates for the shipped local duet profile, as docs/how-it-decides.md
 * shows them: seeded chains of releases through the gate's own decision code
 * (src/compare/creep-simulate.ts), and Apache Otava on their supported-users series.
 * Writes the table between the markers of docs/how-it-decides.md; `--check` exits 1 when
 * the file is stale; `--trials N` for a quicker look (not written).
 * Usage: npm run creep-rates [-- --check | --trials N]
 */
import { readFile, writeFile } from 'node:fs/promises';
import { chainRates, otavaRates } from '../src/compare/creep-simulate.ts';
import { loadGateConfig } from '../src/config/load.ts';
import { otavaPython } from '../src/history/otava.ts';
import { loadNoiseModel } from '../src/noise/model.ts';
import { defaultCacheDir } from '../src/run/options.ts';

export const DOC = 'docs/how-it-decides.md';
const BEGIN = '<!-- creep-rates:begin -->';
const END = '<!-- creep-rates:end -->';
export const PROFILE = 'local-synapse-duet';
const TRIALS = 1000;
const SEED = 1;
const RELEASES = 8;

const f1 = (x: number) => x.toFixed(1);

export async function creepRatesTable(trials = TRIALS): Promise<string> {
  const config = { ...(await loadGateConfig(`examples/${PROFILE}.yml`)), creep: { anchor: 'r0' } };
  const model = await loadNoiseModel(`noise/${PROFILE}.json`, config);
  const losing = chainRates(config, model, { trials, seed: SEED, stepsPct: Array(RELEASES).fill(2) });
  const flat = chainRates(config, model, { trials, seed: SEED + 1, stepsPct: Array(RELEASES).fill(0) });
  const otava = await otavaRates(config, model, otavaPython(defaultCacheDir()), { trials, seed: SEED + 2, releases: RELEASES, at: 4, shiftPct: 6 });
  const otavaRow =
    'unavailable' in otava
      ? `| One −6 % step at release 4 among unchanged ones | Otava not run: ${otava.unavailable} | | |`
      : `| One −6 % step at release 4 among unchanged ones | Otava ${otava.version} names release 4: ${f1(otava.named)} % (alone: ${f1(otava.namedAlone)} %) | Otava names a release in an unchanged chain: ${f1(otava.falseNamed)} % | — |`;
  return [
    `| Chain of ${RELEASES} releases | Steps that pass | Creep check | Judged by the direct duet |`,
    '| --- | --- | --- | --- |',
    `| −2 % supported users a release | ${f1(losing.stepsPassed)} % | fails by release ${losing.materialAt} (the first beyond the ${config.tolerances.supportedUsers.materialPct} % material loss): ${f1(losing.creepFailedByMaterial)} % | ${f1(losing.directPct)} % of releases |`,
    `| Unchanged | ${f1(flat.stepsPassed)} % | passes at every release: ${f1(flat.creepPassedAll)} %; fails at any: ${f1(flat.creepFailedAny)} % | ${f1(flat.directPct)} % of releases |`,
    otavaRow,
    '',
    `${trials} simulated chains per row, seed ${SEED}; the local duet profile (examples/${PROFILE}.yml, its noise model) at 1 % and 1 %, each release a gate of 1 to 4 duets, anchor the chain's first release. Regenerate with \`npm run creep-rates\`.`,
  ].join('\n');
}

/** The document with its marked block replaced by `table`. */
export function withCreepTable(doc: string, table: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${DOC}: the markers ${BEGIN} … ${END} are missing; put them where the table goes`);
  return `${doc.slice(0, start + BEGIN.length)}\n${table}\n${doc.slice(end)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf('--trials');
  if (at > 0) {
    console.log(await creepRatesTable(Number(process.argv[at + 1])));
  } else {
    const doc = await readFile(DOC, 'utf8');
    const next = withCreepTable(doc, await creepRatesTable());
    if (process.argv.includes('--check')) {
      if (next !== doc) {
        console.error(`${DOC} is stale: run npm run creep-rates and commit it`);
        process.exit(1);
      }
      console.log(`${DOC} is up to date`);
    } else {
      await writeFile(DOC, next);
      console.log(`wrote ${DOC}`);
    }
  }
}
