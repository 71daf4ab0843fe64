import { RELATIVE_METRICS } from '../results/judged-metrics.ts';
import { duetRatios } from '../results/duet-ratios.ts';
import type { GateConfig } from '../config/schema.ts';
import type { RunResult } from '../results/schema.ts';
import { assumedEntrySdLog, gatingMetrics, noiseProfile } from './profile.ts';
import { NOISE_MODEL_SCHEMA_VERSION, type NoiseEntry, type NoiseModelFile, type SlotEffect, type SpeedFit } from './schema.ts';
import { measuredCapacity } from './capacity.ts';
import {
  addSums,
  fitOfSums,
  machineName,
  pooledScope,
  probeRange,
  sameMachine,
  speedSums,
  sumsOfFit,
  workloadName,
  type SpeedGroup,
  type SpeedMachine,
} from './speed.ts';

/**
 * Pools the within-version spread of a gate's runs into a noise model, so the model
 * improves with use. Per gating relative metric and side, the sum of squares of ln(value)
 * around that side's mean (n − 1 degrees of freedom), added to the model's own
 * df·sd². Rates are left alone: their noise is mostly counting noise, computed per run.
 * A stopped sequential gate is not a random sample of its noise (it stops early on
 * extreme pairs), so the model should come from `loadgate calibrate` first; pooling only
 * refines it.
 */

/** A model of the config's profile with every entry assumed from its tolerances (df 0). */
export function emptyModel(config: GateConfig): NoiseModelFile {
  return {
    schemaVersion: NOISE_MODEL_SCHEMA_VERSION,
    profile: noiseProfile(config),
    ...(config.mode === 'duet' ? { mode: 'duet' as const } : {}),
    entries: gatingMetrics(config).map((g) => ({
      test: g.test,
      metric: g.key,
      sdLog: assumedEntrySdLog(config, g.key),
      runs: 0,
      df: 0,
      kind: 'assumed' as const,
      versions: [],
      source: 'assumed from the tolerances (noiseFloorPct as the ±95 % band of a two-run difference)',
    })),
  };
}

interface Spread {
  ss: number;
  df: number;
  runs: number;
  versions: Set<string>;
}

/** Each side's spread around its own mean (an A/A calibration has two sides of one version). */
function spreadOf(sides: readonly (readonly RunResult[])[], test: string, key: string): Spread {
  const metric = RELATIVE_METRICS.find((m) => m.key === key);
  const out: Spread = { ss: 0, df: 0, runs: 0, versions: new Set() };
  if (!metric) return out;
  for (const runs of sides) {
    const judged = runs.filter((r) => r.test.name === test && r.status === 'completed' && !r.problems.length);
    const logs = judged
      .map(metric.extract)
      .filter((v): v is number => v !== undefined && v > 0)
      .map(Math.log);
    if (logs.length < 2) continue;
    const mean = logs.reduce((x, y) => x + y, 0) / logs.length;
    out.ss += logs.reduce((acc, x) => acc + (x - mean) ** 2, 0);
    out.df += logs.length - 1;
    out.runs += logs.length;
    for (const r of judged) out.versions.add(r.target.version);
  }
  return out;
}

/**
 * The spread of the duets' log ratios, ln(candidate / baseline) of the runs that ran together
 * (same test and repeat), around their mean: one degree of freedom per duet after the first.
 */
function duetSpreadOf(baseline: readonly RunResult[], candidate: readonly RunResult[], test: string, key: string): Spread {
  const metric = RELATIVE_METRICS.find((m) => m.key === key);
  const out: Spread = { ss: 0, df: 0, runs: 0, versions: new Set() };
  if (!metric) return out;
  const duets = duetRatios(baseline, candidate, test, metric, (r) => r.status === 'completed' && !r.problems.length);
  if (duets.length < 2) return out;
  const mean = duets.reduce((x, d) => x + d.logRatio, 0) / duets.length;
  out.ss = duets.reduce((acc, d) => acc + (d.logRatio - mean) ** 2, 0);
  out.df = duets.length - 1;
  out.runs = 2 * duets.length;
  for (const d of duets) out.versions.add(d.baselineRun.target.version).add(d.candidateRun.target.version);
  return out;
}

/**
 * The bench's slot effect on one metric from duets run in both orientations: the log ratios
 * d = δ + s·L + noise (s = +1 with the candidate in slot a, −1 in slot b), fitted by least
 * squares on [1, s], so the change between the sides (δ, zero in an A/A calibration) does
 * not count. L is ln(slot a / slot b) for the same build; its standard error rests on the
 * fit's own residuals. Null without both orientations and a residual degree of freedom.
 */
export function slotEffectOf(baseline: readonly RunResult[], candidate: readonly RunResult[], test: string, key: string): SlotEffect | null {
  const metric = RELATIVE_METRICS.find((m) => m.key === key);
  if (!metric) return null;
  const duets = duetRatios(baseline, candidate, test, metric, (r) => r.status === 'completed' && !r.problems.length && r.duet !== undefined).map((d) => ({
    d: d.logRatio,
    s: d.candidateRun.duet?.slot === 'a' ? 1 : -1,
  }));
  const n = duets.length;
  if (n < 3) return null;
  const meanS = duets.reduce((a, x) => a + x.s, 0) / n;
  const meanD = duets.reduce((a, x) => a + x.d, 0) / n;
  const sxx = duets.reduce((a, x) => a + (x.s - meanS) ** 2, 0);
  if (!(sxx > 1e-9)) return null;
  const sxy = duets.reduce((a, x) => a + (x.s - meanS) * (x.d - meanD), 0);
  const slope = sxy / sxx;
  const rss = duets.reduce((a, x) => a + (x.d - meanD - slope * (x.s - meanS)) ** 2, 0);
  return slotFit(slope, sxx, rss, n - 2, n);
}

function slotFit(slope: number, sxx: number, rss: number, df: number, duets: number): SlotEffect | null {
  if (df < 1 || !(rss > 0)) return null;
  const round = (x: number) => Math.round(x * 1e5) / 1e5;
  return { logRatio: round(slope), sd: round(Math.sqrt(rss / df / sxx)), sxx: round(sxx), df, duets };
}

/**
 * Two fits of one slot effect pooled exactly, each keeping its own intercept (the change
 * between its sides): slopes weighted by their sums of squares, residuals pooled by degrees
 * of freedom.
 */
export function pooledSlotEffect(a: SlotEffect | undefined, b: SlotEffect | null): SlotEffect | undefined {
  if (!b) return a;
  if (!a) return b;
  const sxx = a.sxx + b.sxx;
  const slope = (a.sxx * a.logRatio + b.sxx * b.logRatio) / sxx;
  // Each fit's residual sum of squares, and what pooling the slopes adds around the common one.
  const rss = a.sd * a.sd * a.sxx * a.df + b.sd * b.sd * b.sxx * b.df + a.sxx * (a.logRatio - slope) ** 2 + b.sxx * (b.logRatio - slope) ** 2;
  return slotFit(slope, sxx, rss, a.df + b.df + 1, a.duets + b.duets) ?? undefined;
}

/** The runs a speed fit rests on: their groups, and each run's probe time and host. */
interface SpeedRuns {
  workload: string;
  groups: SpeedGroup[];
  probeMs: number[];
  /** Per run: the host its bench fingerprint names, if any. */
  hosts: (SpeedMachine | undefined)[];
}

/**
 * Each side's (ln probe ms, ln value) for the speed fit. A side counts only when every
 * judged run carries a probe of one workload and interpreter (probe times of different
 * interpreters differ by a constant the side's own mean would absorb, but not within a side).
 */
function speedGroupsOf(sides: readonly (readonly RunResult[])[], test: string, key: string): SpeedRuns | null {
  const metric = RELATIVE_METRICS.find((m) => m.key === key);
  if (!metric) return null;
  const groups: SpeedGroup[] = [];
  const probeMs: number[] = [];
  const hosts: (SpeedMachine | undefined)[] = [];
  const workloads = new Set<string>();
  for (const runs of sides) {
    const judged = runs.filter((r) => r.test.name === test && r.status === 'completed' && !r.problems.length);
    const values = judged.map(metric.extract);
    const probes = judged.map((r) => r.speedProbe);
    if (judged.length < 2 || values.some((v) => v === undefined || !(v > 0)) || probes.some((p) => !p)) continue;
    const sideWorkloads = new Set(probes.map((p) => p!.workload));
    if (sideWorkloads.size !== 1) continue;
    workloads.add(workloadName([...sideWorkloads][0] as string));
    groups.push({ x: probes.map((p) => Math.log(p!.cpuMsMedian)), y: values.map((v) => Math.log(v as number)) });
    probeMs.push(...probes.map((p) => p!.cpuMsMedian));
    hosts.push(...judged.map((r) => (r.bench.host ? { cpuModel: r.bench.host.cpuModel, cores: r.bench.host.cores } : undefined)));
  }
  if (!groups.length || workloads.size !== 1) return null;
  return { workload: [...workloads][0] as string, groups, probeMs, hosts };
}

/** Where these runs were measured: their probe range, and their host when every run names the same one. */
function scopeOf(found: SpeedRuns): Pick<SpeedFit, 'probeMs' | 'machine'> {
  const [first] = found.hosts;
  const machine = first && found.hosts.every((h) => h && sameMachine(h, first)) ? first : undefined;
  return { probeMs: probeRange(found.probeMs), ...(machine ? { machine } : {}) };
}

/**
 * The probe range and machine of the runs a fit of `test.key` would rest on, or null when
 * they carry no usable probes: for a fit pooled from stored calibrations
 * (scripts/make-noise-models.ts) that predates these fields.
 */
export function speedScopeOf(
  sides: readonly (readonly RunResult[])[],
  test: string,
  key: string,
): (Pick<SpeedFit, 'probeMs' | 'machine'> & { workload: string; runs: number }) | null {
  const found = speedGroupsOf(sides, test, key);
  return found ? { workload: found.workload, runs: found.probeMs.length, ...scopeOf(found) } : null;
}

/**
 * The metrics that may carry a speed fit. Supported users only: the coordinator drives both
 * sides to the same health thresholds (the target's CPU among them), so the probe, which
 * shares the target's core, meets the same contention on both sides and reads the machine.
 * At a fixed load (the bounded test's latencies) a costlier release would load the core
 * more, slow the probe beside it, and have part of its own regression fitted away.
 */
const SPEED_FIT_METRICS: readonly string[] = ['supportedUsers'];

/**
 * The entry's speed fit with these runs pooled in (exactly: least squares needs only the
 * sums), or what it held when the runs carry no usable probes. Only a calibration starts a
 * fit (two degrees of freedom at least after the slope); a gate's runs, a stopped
 * sequential sample, only refine one, as they do the entry's σ. A calibration whose runs
 * probe another workload (the bench's probe changed) starts a new fit in place of the held
 * one, whose probe times no new run can match; a gate's runs leave it as it was. Runs on
 * another machine than the held fit's are treated alike: the decision does not apply the
 * fit to them, so they do not refine it, and a calibration there starts that machine's own.
 */
function pooledSpeed(e: NoiseEntry, sides: readonly (readonly RunResult[])[], mayStart: boolean): SpeedFit | undefined {
  const stored = e.kind === 'measured' ? e.speed : undefined;
  if (!SPEED_FIT_METRICS.includes(e.metric) || (!stored && !mayStart)) return stored;
  const found = speedGroupsOf(sides, e.test, e.metric);
  if (!found) return stored;
  if (stored && stored.workload !== found.workload && !mayStart) return stored;
  const elsewhere = stored?.machine ? found.hosts.some((h) => h && !sameMachine(h, stored.machine!)) : false;
  if (elsewhere && !mayStart) return stored;
  const held = stored?.workload === found.workload && !elsewhere ? stored : undefined;
  const fresh = speedSums(found.groups);
  if (!fresh.dfWithin) return stored;
  const fit = fitOfSums(held ? addSums(sumsOfFit(held), fresh) : fresh);
  if (!fit || fit.sdLog === 0) return stored;
  const what = `${fresh.runs} runs with the speed probe (${found.groups.length} ${found.groups.length === 1 ? 'group' : 'groups'})`;
  const round = (x: number) => Number(x.toPrecision(6));
  const replaced =
    held || !stored
      ? ''
      : stored.workload !== found.workload
        ? ` (in place of the fit of ${stored.workload}, a probe these runs no longer take)`
        : ` (in place of the fit measured on ${machineName(stored.machine!)}, another machine)`;
  const scope = scopeOf(found);
  return {
    workload: found.workload,
    slope: round(fit.slope),
    sxx: round(fit.sxx),
    sdLog: round(fit.sdLog),
    runs: fit.runs,
    df: fit.df,
    source: held ? `${held.source}; pooled with ${what}` : `least squares over ${what}, one intercept per group${replaced}`,
    ...(held ? pooledScope(held, scope) : scope),
  };
}

/**
 * The model with the runs' spread pooled in. `sides` are the baseline and candidate
 * runs (kept apart: each side's spread is around its own mean). Returns null when no
 * metric had two runs on a side.
 */
export function poolRuns(
  model: NoiseModelFile,
  config: GateConfig,
  sides: { baseline: readonly RunResult[]; candidate: readonly RunResult[] },
  options: { startSpeedFit?: boolean; measureCapacity?: boolean } = {},
): NoiseModelFile | null {
  const runs = [...sides.baseline, ...sides.candidate];
  const dates = runs.map((r) => r.finishedAt.slice(0, 10)).sort();
  const measuredAt = dates[dates.length - 1];
  let changed = false;
  const duet = model.mode === 'duet';
  const entries: NoiseEntry[] = model.entries.map((e) => {
    const s = duet ? duetSpreadOf(sides.baseline, sides.candidate, e.test, e.metric) : spreadOf([sides.baseline, sides.candidate], e.test, e.metric);
    if (!s.df) return e;
    const df = e.df + s.df;
    // An assumption counts for nothing once two degrees of freedom are measured.
    if (e.kind === 'assumed' && s.df < 2) return e;
    const prior = e.kind === 'measured' ? e.df * e.sdLog ** 2 : 0;
    const priorDf = e.kind === 'measured' ? e.df : 0;
    const sdLog = Math.round(Math.sqrt((prior + s.ss) / (priorDf + s.df)) * 1e5) / 1e5;
    // Identical values (a constant the runs cannot move) measure no noise at all: a zero sd
    // would make any difference infinitely significant, so the entry keeps what it held.
    if (sdLog === 0) return e;
    changed = true;
    const versions = [...new Set([...(e.kind === 'measured' ? e.versions : []), ...s.versions])].sort();
    // A duet's ratio has no machine speed left to fit; its slots may differ.
    const speed = duet ? undefined : pooledSpeed(e, [sides.baseline, sides.candidate], options.startSpeedFit === true);
    const slotEffect = duet
      ? pooledSlotEffect(e.kind === 'measured' ? e.slotEffect : undefined, slotEffectOf(sides.baseline, sides.candidate, e.test, e.metric))
      : undefined;
    return {
      ...e,
      sdLog,
      runs: (e.kind === 'measured' ? e.runs : 0) + s.runs,
      df: e.kind === 'measured' ? df : s.df,
      kind: 'measured',
      versions,
      ...(measuredAt ? { measuredAt } : {}),
      source:
        e.kind === 'measured'
          ? `${e.source}; pooled with ${s.runs} runs (${s.df} df) of ${versions.join(', ')}`
          : duet
            ? `spread of the log ratio of ${s.runs / 2} duets (${s.df} df) of ${versions.join(', ')}`
            : `within-version spread of ${s.runs} runs (${s.df} df) of ${versions.join(', ')}`,
      ...(speed ? { speed } : {}),
      ...(slotEffect ? { slotEffect } : {}),
    };
  });
  if (!changed) return null;
  // A calibration measures where the search should start; a gate of two versions leaves the model's figure.
  const capacity = options.measureCapacity ? measuredCapacity(runs) : (model.capacity ?? []);
  return { ...model, profile: noiseProfile(config), ...(measuredAt ? { updatedAt: measuredAt } : {}), entries, ...(capacity.length ? { capacity } : {}) };
}

/**
 * The sides whose spread a gate pools. An A/A calibration (one version on both sides) is
 * one population: the offset between its sides is noise the decision sees (a shared host
 * that slows for a few runs), which a spread around each side's own mean would miss; on
 * the local bench it is more than twice the per-side spread
 * (docs/research/2026-11-24-capacity-search.md).
 * A gate of two versions keeps its sides apart: their offset is the change under test.
 */
export function spreadSides(
  sides: { baseline: readonly RunResult[]; candidate: readonly RunResult[] },
  calibrate: boolean,
): { baseline: readonly RunResult[]; candidate: readonly RunResult[] } {
  const versions = new Set([...sides.baseline, ...sides.candidate].map((r) => r.target.version));
  return calibrate && versions.size === 1 ? { baseline: [...sides.baseline, ...sides.candidate], candidate: [] } : sides;
}
