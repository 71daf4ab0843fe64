/**
 * The log ratios ln(candidate / baseline) of a duet gate's or calibration's runs, per test,
 * metric and duet, with their mean and sd, and the mean per slot of the baseline: what a
 * duet noise model is made of, and whether a slot is favoured.
 *   npx tsx scripts/duet-ratios.ts <out>/results
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseRunResult } from '../src/results/load.ts';
import { RELATIVE_METRICS } from '../src/results/judged-metrics.ts';
import { duetRatios } from '../src/results/duet-ratios.ts';
import { mean, sampleVariance } from '../src/util/stats.ts';
import type { RunResult } from '../src/results/schema.ts';

async function sideRuns(dir: string, role: 'baseline' | 'candidate'): Promise<RunResult[]> {
  const files = (await readdir(dir)).filter((f) => f.startsWith(`${role}-`) && f.endsWith('.json')).sort();
  const runs = await Promise.all(files.map(async (f) => parseRunResult(JSON.parse(await readFile(join(dir, f), 'utf8')), f)));
  // A disturbed duet's runs are kept beside the others, and judged by nothing.
  return runs.filter((r) => !r.disturbed);
}

const pct = (x: number) => `${(100 * x).toFixed(2)}%`;
const sdOf = (xs: number[]) => (xs.length > 1 ? Math.sqrt(sampleVariance(xs)) : NaN);

const dir = process.argv[2];
if (!dir) throw new Error('usage: tsx scripts/duet-ratios.ts <results dir>');
const [baseline, candidate] = await Promise.all([sideRuns(dir, 'baseline'), sideRuns(dir, 'candidate')]);
for (const test of [...new Set(baseline.map((r) => r.test.name))].sort()) {
  for (const metric of RELATIVE_METRICS) {
    const duets = duetRatios(baseline, candidate, test, metric);
    const logs = duets.map((d) => d.logRatio);
    const bySlot: Record<string, number[]> = { a: [], b: [] };
    for (const d of duets) bySlot[d.baselineRun.duet?.slot ?? 'a']!.push(d.logRatio);
    const rows = duets.map(
      (d) =>
        `#${d.baselineRun.repeat + 1} ${pct(d.logRatio)} (baseline in ${d.baselineRun.duet?.slot ?? '-'}: ${d.baseline.toPrecision(4)} vs ${d.candidate.toPrecision(4)})`,
    );
    if (!logs.length) continue;
    const slots = Object.entries(bySlot)
      .filter(([, v]) => v.length)
      .map(([s, v]) => `baseline in ${s}: ${pct(mean(v))}`)
      .join(', ');
    console.log(
      `${test}.${metric.key}: mean ${pct(mean(logs))}, sd ${Number.isNaN(sdOf(logs)) ? '-' : pct(sdOf(logs))}, n ${logs.length} (${slots})\n  ${rows.join('\n  ')}`,
    );
  }
}
