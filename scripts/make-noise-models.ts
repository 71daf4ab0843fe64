/**
 * Writes the shipped noise models (noise/*.json) from the measurements recorded in this
 * repository, so the figures are traceable and the profile hash follows the configs:
 * after changing a test in an example config, `npm run noise-models` re-derives them
 * (and the models should then be re-measured with `loadgate calibrate`).
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadGateConfig } from '../src/config/load.ts';
import type { GateConfig } from '../src/config/schema.ts';
import { pooledSlotEffect, slotEffectOf, speedScopeOf } from '../src/noise/pool.ts';
import { assumedEntrySdLog, gatingMetrics, noiseProfile } from '../src/noise/profile.ts';
import {
  NOISE_MODEL_SCHEMA_VERSION,
  noiseModelFileSchema,
  type CapacityEntry,
  type NoiseEntry,
  type NoiseModelFile,
  type SlotEffect,
  type SpeedFit,
} from '../src/noise/schema.ts';
import { measuredCapacity } from '../src/noise/capacity.ts';
import { addSums, fitOfSums, machineName, pooledScope, sameMachine, sumsOfFit } from '../src/noise/speed.ts';
import { loadRunResult } from '../src/results/load.ts';
import type { RunResult } from '../src/results/schema.ts';

interface Measured {
  sdLog: number;
  runs: number;
  df: number;
  versions: string[];
  measuredAt: string;
  source: string;
  /** The fit against the speed probe, from the calibrations whose runs carried one. */
  speed?: SpeedFit;
  /** Duet calibrations: the bench's slot effect, from their duets in both orientations. */
  slotEffect?: SlotEffect;
}

/**
 * The local model is `loadgate calibrate`'s own output, committed with the runs behind it
 * (its README.md, verdict.json and results/), so every figure can be traced to its runs. One calibration
 * per test, as each takes its own bench time:
 *   loadgate calibrate --config examples/local-synapse.yml --version 1.162.0 --runs 3 --tests <test> --out <dir>
 * The folder is named in each source. Calibrations of one metric taken at different
 * times are pooled by degrees of freedom (each around its own mean: Σ df·sd² / Σ df), so
 * the model holds the bench's noise over the hours it was measured at, not one quiet
 * hour's (docs/research/2026-11-25-noise-check-and-pair-differences.md). Only A/A
 * calibrations count: a gate of two versions would mix their real differences into the
 * noise (docs/research/2026-11-25-local-noise-model.md).
 */
export const LOCAL_CALIBRATIONS = [
  // An afternoon hour.
  'reports/calibration/local-synapse-1.162.0-unbounded',
  // A night hour: a different load on the shared host.
  'reports/calibration/local-synapse-1.162.0-unbounded-night',
  // Another VM of the same kind, 4 pairs, with the speed probe.
  'reports/calibration/local-synapse-1.162.0-unbounded-probe',
  // The probe every 5 s and its median over the settled hold (the shipped speed fit).
  'reports/calibration/local-synapse-1.162.0-unbounded-window-probe',
  'reports/calibration/local-synapse-1.162.0-bounded',
] as const;

/**
 * The local duet model (examples/local-synapse-duet.yml): A/A duet calibrations on a quiet
 * machine, each entry the sd of one duet's log ratio, pooled by degrees of freedom as above.
 *   loadgate calibrate --config examples/local-synapse-duet.yml --version 1.162.0 --runs <n> --out <dir>
 * A calibration on a loaded machine (data/experiments/calibration/local-synapse-duet-1.162.0-loaded,
 * load average 6-11 on 2 cores from other work) is kept out: the model is the bench's, and
 * a gate on a machine that busy is noisier than any bench (docs/local.md, "Duets").
 */
export const LOCAL_DUET_CALIBRATIONS = [
  // A quiet hour, before both sides drew the same workload.
  'reports/calibration/local-synapse-duet-1.162.0',
  // A quiet hour, both sides drawing the same workload (common random numbers).
  'reports/calibration/local-synapse-duet-1.162.0-crn',
  // Two more quiet hours the same way, one after the other, so the prior holds 12
  // degrees of freedom (docs/research/2026-11-27-duet-prior-adopter-calibrate.md).
  'reports/calibration/local-synapse-duet-1.162.0-crn-2',
  'reports/calibration/local-synapse-duet-1.162.0-crn-3',
] as const;

/**
 * Where the local duet's first run starts (the model's `capacity`): the supported users of
 * no-history gates of the shipped duet example on a quiet 2-core machine, profiling on, each
 * with the machine's speed at set-up, so a gate on another machine scales the figure by its
 * own speed probe (docs/research/2026-11-29-one-window-first-gate.md). The calibrations
 * above recorded no set-up probe, so their capacity could not be scaled.
 */
const LOCAL_DUET_CAPACITY: readonly string[] = [
  'data/experiments/first-gate/ab-fresh-clone',
  'data/experiments/first-gate/aa-1',
  'data/experiments/first-gate/aa-2',
];

/** The run results a recorded gate or calibration committed (its results/ folder). */
async function resultsOf(dir: string): Promise<RunResult[]> {
  const results = join(dir, 'results');
  const files = (await readdir(results)).filter((f) => f.endsWith('.json')).sort();
  return Promise.all(files.map((f) => loadRunResult(join(results, f))));
}

async function calibrated(dir: string): Promise<Record<string, Measured>> {
  const file = noiseModelFileSchema.parse(JSON.parse(await readFile(join(dir, 'noise-model.json'), 'utf8')));
  const results = join(dir, 'results');
  const files = (await readdir(results)).filter((f) => f.endsWith('.json')).sort();
  const runs = await Promise.all(files.map((f) => loadRunResult(join(results, f))));
  // A disturbed duet's runs (kept beside the others) are no measure of the bench's noise.
  const side = (role: string) => runs.filter((r, i) => files[i]?.startsWith(`${role}-`) && !r.disturbed);
  const duet = file.mode === 'duet';
  return Object.fromEntries(
    file.entries
      .filter((e) => e.kind === 'measured')
      .map((e) => [
        `${e.test}.${e.metric}`,
        {
          sdLog: e.sdLog,
          runs: e.runs,
          df: e.df,
          versions: e.versions,
          measuredAt: e.measuredAt ?? file.updatedAt ?? '',
          source: `${dir}: loadgate calibrate, ${e.source}`,
          ...(e.speed ? { speed: { ...e.speed, source: `${dir}: ${e.speed.source}`, ...scopeOf(e.speed, runs, dir, e.test, e.metric) } } : {}),
          ...slotOf(duet ? slotEffectOf(side('baseline'), side('candidate'), e.test, e.metric) : null),
        },
      ]),
  );
}

/**
 * Where a stored calibration's fit was measured, from its committed runs (one group, as an
 * A/A calibration pools them): fits written before the fit kept its probe range and
 * machine get them here. The runs must be the fit's own, or the script stops.
 */
function scopeOf(fit: SpeedFit, runs: readonly RunResult[], dir: string, test: string, metric: string): Pick<SpeedFit, 'probeMs' | 'machine'> {
  if (fit.probeMs) return { probeMs: fit.probeMs, ...(fit.machine ? { machine: fit.machine } : {}) };
  const scope = speedScopeOf([runs], test, metric);
  if (!scope || scope.workload !== fit.workload || scope.runs !== fit.runs) {
    throw new Error(
      `${dir}: the results of ${test}.${metric} are not the ${fit.runs} runs of ${fit.workload} its speed fit rests on (${scope ? `${scope.runs} runs of ${scope.workload}` : 'no usable probes'})`,
    );
  }
  return { ...(scope.probeMs ? { probeMs: scope.probeMs } : {}), ...(scope.machine ? { machine: scope.machine } : {}) };
}

/** Several calibrations of one metric as one estimate: sums of squares and df add up. */
function pooled(calibrations: readonly Record<string, Measured>[]): Record<string, Measured> {
  const out: Record<string, Measured> = {};
  for (const calibration of calibrations) {
    for (const [key, m] of Object.entries(calibration)) {
      const prior = out[key];
      if (!prior) {
        out[key] = m;
        continue;
      }
      const df = prior.df + m.df;
      out[key] = {
        sdLog: Math.sqrt((prior.df * prior.sdLog ** 2 + m.df * m.sdLog ** 2) / df),
        runs: prior.runs + m.runs,
        df,
        versions: [...new Set([...prior.versions, ...m.versions])].sort(),
        measuredAt: [prior.measuredAt, m.measuredAt].sort()[1] as string,
        // One flat list of the calibrations pooled, each with its own figure.
        source: `pooled by degrees of freedom: ${prior.source.startsWith(POOLED) ? prior.source.slice(POOLED.length) : `${prior.source} (sd ${pct(prior.sdLog)}, ${prior.df} df)`}; ${m.source} (sd ${pct(m.sdLog)}, ${m.df} df)`,
        ...pooledSpeed(prior.speed, m.speed),
        ...slotOf(pooledSlotEffect(prior.slotEffect, m.slotEffect ?? null) ?? null),
      };
    }
  }
  return out;
}

const slotOf = (slotEffect: SlotEffect | null): { slotEffect?: SlotEffect } => (slotEffect ? { slotEffect } : {});
const pct = (sdLog: number) => `${(sdLog * 100).toFixed(2)} %`;
const POOLED = 'pooled by degrees of freedom: ';

/**
 * Speed fits of one workload pooled exactly by their sums; a calibration without one adds
 * nothing. A later calibration (`b`: LOCAL_CALIBRATIONS is in time order) whose probe is
 * another workload replaces the fit: the bench no longer takes the earlier probe, so no run
 * could be judged against it. So does one on another machine, as `loadgate calibrate` does
 * (src/noise/pool.ts): a fit is not carried from one machine to another.
 */
function pooledSpeed(a: SpeedFit | undefined, b: SpeedFit | undefined): { speed?: SpeedFit } {
  if (!a || !b) return a ? { speed: a } : b ? { speed: b } : {};
  if (a.workload !== b.workload) return { speed: { ...b, source: `${b.source} (in place of the fit of ${a.workload}, a probe the bench no longer takes)` } };
  if (a.machine && b.machine && !sameMachine(a.machine, b.machine))
    return { speed: { ...b, source: `${b.source} (in place of the fit measured on ${machineName(a.machine)}, another machine)` } };
  const fit = fitOfSums(addSums(sumsOfFit(a), sumsOfFit(b)));
  if (!fit) throw new Error(`the speed fits of ${a.source} and ${b.source} pooled carry no fit`);
  const r = (x: number) => Number(x.toPrecision(6));
  return {
    speed: {
      workload: a.workload,
      slope: r(fit.slope),
      sxx: r(fit.sxx),
      sdLog: r(fit.sdLog),
      runs: fit.runs,
      df: fit.df,
      source: `pooled by their sums: ${a.source}; ${b.source}`,
      ...pooledScope(a, b),
    },
  };
}

/** An assumption read from published figures rather than the tolerances: σ, its degrees of freedom, and how it was derived. */
interface Published {
  sdLog: number;
  df: number;
  source: string;
}

function model(
  config: GateConfig,
  measured: Record<string, Measured>,
  comment: string,
  assumedSource: (key: string) => string,
  published: Record<string, Published> = {},
  capacity: CapacityEntry[] = [],
): NoiseModelFile {
  const mode = config.mode === 'duet' ? { mode: 'duet' as const } : {};
  const entries: NoiseEntry[] = gatingMetrics(config).map((g) => {
    const m = measured[`${g.test}.${g.key}`];
    if (m) {
      return {
        test: g.test,
        metric: g.key,
        sdLog: round(m.sdLog),
        runs: m.runs,
        df: m.df,
        kind: 'measured',
        versions: m.versions,
        measuredAt: m.measuredAt,
        source: m.source,
        ...(m.speed ? { speed: m.speed } : {}),
        ...slotOf(m.slotEffect ?? null),
      };
    }
    const p = published[`${g.test}.${g.key}`];
    if (p) return { test: g.test, metric: g.key, sdLog: round(p.sdLog), runs: 0, df: p.df, kind: 'assumed', versions: [], source: p.source };
    return {
      test: g.test,
      metric: g.key,
      sdLog: round(assumedEntrySdLog(config, g.key)),
      runs: 0,
      df: 0,
      kind: 'assumed',
      versions: [],
      source: assumedSource(g.key),
    };
  });
  return {
    $comment: comment,
    schemaVersion: NOISE_MODEL_SCHEMA_VERSION,
    profile: noiseProfile(config),
    ...mode,
    entries,
    ...(capacity.length ? { capacity } : {}),
  };
}

const round = (x: number) => Math.round(x * 1e5) / 1e5;

/** The capacity the runs of these recorded gates or calibrations found (src/noise/capacity.ts), with each folder named in its source. */
async function capacityOf(dirs: readonly string[]): Promise<CapacityEntry[]> {
  const runs = (await Promise.all(dirs.map(resultsOf))).flat();
  return measuredCapacity(runs).map((c) => ({ ...c, source: `${c.source} (${dirs.join(', ')})` }));
}

/**
 * The seed reports' supported users on the release-comparison bench: v10.12.0 17,272 and
 * v11.0.1-rc2 17,040 (/work/shared/seeds/perf-comparison-v10.12.0-vs-v11.0.1-rc2.md,
 * "Supported users in unbounded test"). A duet side has about half the app nodes' CPU.
 */
const SEED_SUPPORTED_USERS = 17_272;
function awsCapacity(perSide: number, what: string): CapacityEntry[] {
  return [
    {
      test: 'unbounded',
      users: perSide,
      kind: 'assumed',
      runs: 0,
      source: `assumed from the seed report's ${SEED_SUPPORTED_USERS.toLocaleString('en')} supported users of v10.12.0 on this bench${what}`,
    },
  ];
}

export async function noiseModels(): Promise<Record<string, NoiseModelFile>> {
  const local = await loadGateConfig('examples/local-synapse.yml');
  const aws = await loadGateConfig('examples/aws-mattermost.yml');
  const awsSequential = await loadGateConfig('examples/aws-mattermost-sequential.yml');
  const duet = await loadGateConfig('examples/local-synapse-duet.yml');
  const fromTolerance = (key: string) =>
    `assumed: the tolerances' noise floor for ${key} read as the ±95 % band of a two-run difference, σ = ln(1 + floor) / (1.96·√2)`;
  const localSequential = model(
    local,
    pooled(await Promise.all(LOCAL_CALIBRATIONS.map(calibrated))),
    `Local bench (examples/local-synapse.yml). Measured by loadgate calibrate, 6 or 8 A/A runs per calibration, four of the unbounded test at different hours (and on three VMs) pooled (${LOCAL_CALIBRATIONS.join(', ')}); error and timeout rates (counting noise, computed per run) assumed from the tolerances.`,
    fromTolerance,
    {},
    await capacityOf(LOCAL_CALIBRATIONS),
  );
  const localDuet = model(
    duet,
    pooled(await Promise.all(LOCAL_DUET_CALIBRATIONS.map(calibrated))),
    `Local bench in duet mode (examples/local-synapse-duet.yml): each entry is the sd of one duet's log ratio ln(candidate / baseline). Measured by loadgate calibrate with A/A duets on a quiet machine, two hours pooled (${LOCAL_DUET_CALIBRATIONS.join(', ')}); one σ for first and later duets (supported users: the first duets' rms 1.19 %, the later ones' 1.52 %, docs/how-it-decides.md); error and timeout rates (counting noise, computed per run) assumed from the tolerances.`,
    fromTolerance,
    {},
    await capacityOf(LOCAL_DUET_CAPACITY),
  );
  const awsSequentialModel = model(
    awsSequential,
    {},
    "AWS bench (examples/aws-mattermost-sequential.yml). Assumed, not measured: supported users from the spread of Mattermost's published comparisons (see its entry), the other metrics from the tolerances' noise floors read as the ±95 % band of the difference of two runs; an assumption that states no degrees of freedom weighs as four (ASSUMED_PRIOR_DF, src/noise/model.ts). Run `loadgate calibrate` on the bench to replace it.",
    fromTolerance,
    {
      // Each published comparison is one pair difference, so its sd is √2 σ; real changes between releases are in it too, so σ is an upper bound.
      'unbounded.supportedUsers': {
        sdLog: Math.log1p(0.032) / Math.SQRT2,
        df: 7,
        source:
          'assumed from Mattermost\'s published comparisons (mattermost/performance-reports): the supported-users changes of the 8 PostgreSQL comparisons from v11.0 on have an sd of 3.20 %; read as all noise, σ = ln(1.032)/√2 ≈ 2.23 % per run on 7 degrees of freedom (an upper bound: real changes between releases are in it too). It replaces the seed reports\' ±5 % "usual variance" read as a 95 % band (1.76 %), which those comparisons contradict: over all 58 engine rows the sd is 4.79 %, and the same build (v11.7.1) measured 7.7 % apart in two runs ten days apart',
      },
    },
    awsCapacity(SEED_SUPPORTED_USERS, ''),
  );
  return {
    'noise/local-synapse.json': localSequential,
    'noise/local-synapse-duet.json': localDuet,
    'noise/aws-mattermost.json': awsSequentialModel,
    'noise/aws-mattermost-duet.json': model(
      aws,
      {},
      "AWS bench in duet mode (examples/aws-mattermost.yml): each entry is the sd of one duet's log ratio ln(candidate / baseline). Assumed, not measured: from the local bench's measured duets and the AWS sequential assumption (each entry says how); error and timeout rates from the tolerances with nothing of the bench's drift cancelled (a sequential pair's difference). Run `loadgate calibrate` on a duet bench to replace it.",
      fromTolerance,
      awsDuetAssumptions(awsSequentialModel, localSequential, localDuet),
      awsCapacity(Math.round(SEED_SUPPORTED_USERS / 2), ", halved: each duet side has about half the app nodes' CPU"),
    ),
  };
}

/**
 * The AWS duet's assumed per-duet sd of each metric the local duets measured: the smaller
 * of the AWS sequential pair's sd (√2 σ per run: nothing of the drift cancelled) and the
 * larger of two readings of what a duet keeps: the local duet's own sd, and the AWS pair's
 * sd times the share of the local pair's sd the local duet kept. The first reading bounds
 * what is left in a duet (each side's own randomness and the sides' interference), which
 * does not shrink with the bench's drift; the local duets ran on a 2-core VM whose sides
 * interfere more than on two 8-vCPU nodes. No degrees of freedom (an assumption's weight,
 * ASSUMED_PRIOR_DF): the local measurement's 6 df measure another bench, and at 6 df a
 * bench 1.5 times noisier than assumed passes 1.1 % of material supported-users losses
 * (loadgate simulate), against 0.6 % at an assumption's weight.
 */
function awsDuetAssumptions(awsSequential: NoiseModelFile, localSequential: NoiseModelFile, localDuet: NoiseModelFile): Record<string, Published> {
  const out: Record<string, Published> = {};
  const pct = (x: number) => `${(100 * Math.expm1(x)).toFixed(2)} %`;
  for (const d of localDuet.entries) {
    const seqLocal = localSequential.entries.find((e) => e.test === d.test && e.metric === d.metric);
    const seqAws = awsSequential.entries.find((e) => e.test === d.test && e.metric === d.metric);
    if (d.kind !== 'measured' || !seqLocal || seqLocal.kind !== 'measured' || !seqAws) continue;
    const awsPair = Math.SQRT2 * seqAws.sdLog;
    const kept = d.sdLog / (Math.SQRT2 * seqLocal.sdLog);
    const scaled = awsPair * kept;
    const sdLog = Math.min(awsPair, Math.max(d.sdLog, scaled));
    const which = sdLog === awsPair ? "the AWS pair's, nothing cancelled" : sdLog === d.sdLog ? "the local duet's own" : 'the scaled AWS pair';
    out[`${d.test}.${d.metric}`] = {
      sdLog,
      df: 0,
      source:
        `assumed, weighing as an assumption: a local duet's log ratio has an sd of ${pct(d.sdLog)} (${d.df} df, noise/local-synapse-duet.json) where a local sequential pair's difference has ${pct(Math.SQRT2 * seqLocal.sdLog)} (noise/local-synapse.json), so a duet kept ${kept.toFixed(2)} of it; ` +
        `the AWS sequential pair's difference is ${pct(awsPair)} (noise/aws-mattermost.json), which scaled so is ${pct(scaled)}. Taken: ${which}, ${pct(sdLog)}, the smaller of the AWS pair's and the larger of the local duet's own and the scaled AWS pair`,
    };
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const [path, file] of Object.entries(await noiseModels())) {
    await writeFile(path, `${JSON.stringify(file, null, 2)}\n`);
    console.log(`wrote ${path}`);
  }
}
