/**
 * Writes the shipped noise models (noise/*.json) from the measurements recorded in this
 * repository, so the figures are traceable and the profile hash follows the configs:
 * after changing a test in an example config, `npm run noise-models` re-derives them
 * (and the models should then be re-measured with `loadgate calibrate`).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadGateConfig } from '../src/config/load.ts';
import type { GateConfig } from '../src/config/schema.ts';
import { assumedSdLog, gatingMetrics, noiseProfile } from '../src/noise/profile.ts';
import { NOISE_MODEL_SCHEMA_VERSION, noiseModelFileSchema, type NoiseEntry, type NoiseModelFile } from '../src/noise/schema.ts';
import { sampleVariance } from '../src/compare/stats.ts';

/** Per-run sd from the % differences of A/B pairs: sd of ln(1+d) over √2 (a pair difference holds two runs' noise). */
const sdOfPairDiffs = (diffsPct: number[]) => Math.sqrt(sampleVariance(diffsPct.map((d) => Math.log1p(d / 100)))) / Math.SQRT2;

interface Measured {
  sdLog: number;
  runs: number;
  df: number;
  versions: string[];
  measuredAt: string;
  source: string;
}

// examples/local-synapse.yml: three 1.162.0 vs 1.163.2 gates (2026-11-23), bounded test.
const LOCAL_BOUNDED_DIFFS: Record<string, number[]> = {
  apiAvg: [-12, 0, 25],
  storeAvg: [-7, 1, 21],
  cpu: [-8, 1, 12],
  apiP99: [-15, 3],
};

const LOCAL_BOUNDED: Record<string, Measured> = Object.fromEntries(
  Object.entries(LOCAL_BOUNDED_DIFFS).map(([key, diffs]) => [
    `bounded.${key}`,
    {
      sdLog: sdOfPairDiffs(diffs),
      runs: 2 * diffs.length,
      df: diffs.length - 1,
      versions: ['1.162.0', '1.163.2'],
      measuredAt: '2026-11-23',
      source: `examples/local-synapse.yml: ${diffs.length} gates 1.162.0 vs 1.163.2, changes ${diffs.join(', ')} %; sd of ln(1+change) / √2`,
    },
  ]),
);

/**
 * The unbounded test's noise is `loadgate calibrate`'s own output, committed with the runs
 * behind it (README, verdict, results), so the figure can be traced to the runs:
 *   loadgate calibrate --config examples/local-synapse.yml --version 1.162.0 --runs 3 --tests unbounded --out <dir>
 * Its measured entries are used as they are; the folder is named in each source.
 */
export const LOCAL_CALIBRATION = 'reports/calibration/local-synapse-1.162.0-unbounded';

async function calibrated(dir: string): Promise<Record<string, Measured>> {
  const file = noiseModelFileSchema.parse(JSON.parse(await readFile(join(dir, 'noise-model.json'), 'utf8')));
  return Object.fromEntries(
    file.entries
      .filter((e) => e.kind === 'measured')
      .map((e) => [
        `${e.test}.${e.metric}`,
        { sdLog: e.sdLog, runs: e.runs, df: e.df, versions: e.versions, measuredAt: e.measuredAt ?? file.updatedAt ?? '', source: `${dir}: loadgate calibrate, ${e.source}` },
      ]),
  );
}

function model(config: GateConfig, measured: Record<string, Measured>, comment: string, assumedSource: (key: string) => string): NoiseModelFile {
  const entries: NoiseEntry[] = gatingMetrics(config).map((g) => {
    const m = measured[`${g.test}.${g.key}`];
    if (m) return { test: g.test, metric: g.key, sdLog: round(m.sdLog), runs: m.runs, df: m.df, kind: 'measured', versions: m.versions, measuredAt: m.measuredAt, source: m.source };
    return { test: g.test, metric: g.key, sdLog: round(assumedSdLog(config.tolerances, g.key)), runs: 0, df: 0, kind: 'assumed', versions: [], source: assumedSource(g.key) };
  });
  return { $comment: comment, schemaVersion: NOISE_MODEL_SCHEMA_VERSION, profile: noiseProfile(config), entries };
}

const round = (x: number) => Math.round(x * 1e5) / 1e5;

export async function noiseModels(): Promise<Record<string, NoiseModelFile>> {
  const local = await loadGateConfig('examples/local-synapse.yml');
  const aws = await loadGateConfig('examples/aws-mattermost.yml');
  const fromTolerance = (key: string) =>
    `assumed: the tolerances' noise floor for ${key} read as the ±95 % band of a two-run difference, σ = ln(1 + floor) / (1.96·√2)`;
  return {
    'noise/local-synapse.json': model(
      local,
      { ...LOCAL_BOUNDED, ...(await calibrated(LOCAL_CALIBRATION)) },
      `Local bench (examples/local-synapse.yml). Supported users measured by loadgate calibrate (${LOCAL_CALIBRATION}), bounded latencies and CPU from three gates (scripts/make-noise-models.ts cites them); the rest assumed from the tolerances.`,
      fromTolerance,
    ),
    'noise/aws-mattermost.json': model(
      aws,
      {},
      'AWS bench (examples/aws-mattermost.yml). Assumed, not measured: the seed reports call ±5 % the "usual variance" of supported users (perf-comparison-v10.12.0-vs-v11.0.1-rc2.md), read as the ±95 % band of the difference of two runs: σ = ln(1.05) / (1.96·√2) ≈ 1.76 % per run. Run `loadgate calibrate` on the bench to replace it.',
      (key) => (key === 'supportedUsers' ? 'assumed: the seed reports\' "±5 % usual variance" of supported users as the ±95 % band of a two-run difference' : fromTolerance(key)),
    ),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const [path, file] of Object.entries(await noiseModels())) {
    await writeFile(path, `${JSON.stringify(file, null, 2)}\n`);
    console.log(`wrote ${path}`);
  }
}
