import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GateConfig, Tolerances } from '../config/schema.ts';
import { describeIssues } from '../config/load.ts';
import { InputError } from '../util/errors.ts';
import { assumedSdLog, noiseProfile } from './profile.ts';
import { NOISE_MODEL_SCHEMA_VERSION, noiseModelFileSchema, type NoiseEntry, type NoiseModelFile, type SlotEffect, type SpeedFit } from './schema.ts';

/** The noise model a decision uses: a loaded file, or the assumption from the tolerances. */
export interface NoiseModel {
  path: string | null;
  kind: 'measured' | 'assumed';
  measuredAt?: string;
  /** Most runs behind any measured entry. */
  n?: number;
  file?: NoiseModelFile;
  /** "test.metric" entries that are assumptions, not measurements (and the config's checks the model has no entry for). */
  assumed: string[];
  /** The config's gating checks the model has no entry for: judged under the assumed prior. */
  notInModel?: string[];
}

export function assumedModel(): NoiseModel {
  return { path: null, kind: 'assumed', assumed: [] };
}

function entryOf(model: NoiseModel, test: string, metric: string): NoiseEntry | undefined {
  return model.file?.entries.find((e) => e.test === test && e.metric === metric);
}

/**
 * σ of ln(value) per run for one check: the model's entry, else the tolerances' assumption.
 * A duet model holds the sd of a duet's log ratio, the difference of two sides: per side
 * that is 1/√2 of it, so a pair's difference has the duet's sd again.
 */
export function sdLogFor(model: NoiseModel, tolerances: Tolerances, test: string, metric: string): number {
  const entry = entryOf(model, test, metric);
  if (!entry) return assumedSdLog(tolerances, metric);
  return model.file?.mode === 'duet' ? entry.sdLog / Math.SQRT2 : entry.sdLog;
}

/** A duet model entry's measured slot effect (calibrate's A/A duets), when it has one. */
export function slotEffectFor(model: NoiseModel, test: string, metric: string): SlotEffect | undefined {
  return entryOf(model, test, metric)?.slotEffect;
}

/** The check's fit against the machine's speed, when the model has one. */
export function speedFitFor(model: NoiseModel, test: string, metric: string): SpeedFit | undefined {
  const entry = entryOf(model, test, metric);
  return entry?.kind === 'measured' ? entry.speed : undefined;
}

/**
 * What an assumed σ weighs as a prior when the entry states no degrees of freedom: as
 * much as five runs. The prior's 90 % range for the true σ is then about 0.65–2.4 times
 * the assumed one (√(4/χ²₄) at 0.95 and 0.05), wide enough that the gate's own pairs
 * soon outweigh a wrong assumption.
 */
export const ASSUMED_PRIOR_DF = 4;

/** Degrees of freedom behind a check's σ: the entry's (an assumption may state its own), else ASSUMED_PRIOR_DF. */
export function dfFor(model: NoiseModel, test: string, metric: string): number {
  const entry = entryOf(model, test, metric);
  if (entry?.kind === 'measured') return entry.df;
  return entry && entry.df > 0 ? entry.df : ASSUMED_PRIOR_DF;
}

/** Describes a parsed file for the report and verdict.json. */
export function modelOf(file: NoiseModelFile, path: string): NoiseModel {
  const measured = file.entries.filter((e) => e.kind === 'measured');
  const dates = measured
    .map((e) => e.measuredAt)
    .filter((d): d is string => !!d)
    .sort();
  return {
    path,
    kind: measured.length ? 'measured' : 'assumed',
    ...(dates.length ? { measuredAt: dates[dates.length - 1] } : {}),
    ...(measured.length ? { n: Math.max(...measured.map((e) => e.runs)) } : {}),
    file,
    assumed: file.entries.filter((e) => e.kind === 'assumed').map((e) => `${e.test}.${e.metric}`),
  };
}

/**
 * The noise models loadgate ships (noise/ beside src/ in a checkout or a package, beside
 * dist/ in the bundle, whose build rebases this URL), named `builtin:<name>` in a config
 * so that a config copied into another repository still finds them.
 */
const BUILTIN_NOISE_DIR = fileURLToPath(new URL('../../noise/', import.meta.url));
export const BUILTIN_PREFIX = 'builtin:';
const BUILTIN_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** The names `builtin:` accepts: the shipped models' file names without .json. */
function builtinNoiseModels(): string[] {
  return readdirSync(BUILTIN_NOISE_DIR)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .filter((n) => BUILTIN_NAME.test(n))
    .sort();
}

export function isBuiltinNoiseModel(value: string | undefined): boolean {
  return value?.startsWith(BUILTIN_PREFIX) === true;
}

/** Resolves `noiseModel:`: `builtin:<name>` to loadgate's shipped model, anything else against the config file's folder. */
export function noiseModelPath(config: GateConfig, configFile: string): string | null {
  const value = config.noiseModel;
  if (!value) return null;
  if (!isBuiltinNoiseModel(value)) return resolve(dirname(configFile), value);
  const name = value.slice(BUILTIN_PREFIX.length);
  const known = builtinNoiseModels();
  if (!BUILTIN_NAME.test(name) || !known.includes(name)) {
    throw new InputError(
      `noiseModel: ${JSON.stringify(value)} is not a model loadgate ships; the built-in ones are ${known.map((n) => `${BUILTIN_PREFIX}${n}`).join(', ')} (or give a file path relative to the config)`,
    );
  }
  return join(BUILTIN_NOISE_DIR, `${name}.json`);
}

/**
 * Reads and checks a noise model against the config it will judge: schema version,
 * profile name, test shapes, mode and bench must all match, or it is an InputError naming
 * the mismatch (a model of another bench would make the error rates fiction). A gating
 * check the model has no entry for (a check added since it was measured) is judged under
 * the assumed prior, and the model says so; an entry the config no longer gates is unused.
 */
export async function loadNoiseModel(path: string, config: GateConfig): Promise<NoiseModel> {
  let data: unknown;
  try {
    data = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new InputError(
      `noiseModel: cannot read ${path} as JSON: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; run loadgate calibrate to write one, or remove noiseModel to use the assumed model`,
    );
  }
  const version = (data as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (version !== NOISE_MODEL_SCHEMA_VERSION) {
    throw new InputError(
      `${path}: noise model schemaVersion is ${JSON.stringify(version)}, this loadgate reads ${NOISE_MODEL_SCHEMA_VERSION}; recalibrate with loadgate calibrate`,
    );
  }
  const parsed = noiseModelFileSchema.safeParse(data);
  if (!parsed.success) {
    const lines = describeIssues(parsed.error.issues);
    throw new InputError(`${path} is not a valid noise model:\n${lines.join('\n')}`, lines);
  }
  checkProfile(parsed.data, config, path);
  const model = modelOf(parsed.data, path);
  const notInModel = checksNotInModel(parsed.data, config);
  return notInModel.length ? { ...model, assumed: [...model.assumed, ...notInModel], notInModel } : model;
}

/** The config's gating checks ("test.metric") the model has no entry for. */
function checksNotInModel(file: NoiseModelFile, config: GateConfig): string[] {
  const entries = new Set(file.entries.map((e) => `${e.test}.${e.metric}`));
  return noiseProfile(config).metrics.filter((m) => !entries.has(m));
}

/**
 * Whether a model can judge this config. An assumed model (no entry measured) describes a
 * bench and a mode, not a config: a renamed gate or a nudged test keeps it. A measured
 * one holds for the profile it was measured under: the same name, test shapes and bench.
 * Both need the same mode and bench. The gating checks may differ: see loadNoiseModel.
 */
export function checkProfile(file: NoiseModelFile, config: GateConfig, path: string): void {
  const want = noiseProfile(config);
  const got = file.profile;
  const measured = file.entries.some((e) => e.kind === 'measured');
  const fix = 'recalibrate (loadgate calibrate) or point noiseModel at the model of this profile';
  if (measured && got.name !== want.name) throw new InputError(`${path}: noise model is for profile "${got.name}", the config is "${want.name}"; ${fix}`);
  const [gotMode, wantMode] = [file.mode ?? 'sequential', config.mode];
  if (gotMode !== wantMode)
    throw new InputError(
      `${path}: noise model was measured in ${gotMode} mode, the config runs in ${wantMode} (mode: ${wantMode}); the noise of one does not tell the other's: calibrate in ${wantMode} mode (loadgate calibrate) or set mode: ${gotMode}`,
    );
  const benchDiff = got.bench ? shapeDifferences(got.bench, want.bench ?? {}) : [];
  if (benchDiff.length)
    throw new InputError(
      `${path}: noise model is of another bench (${benchDiff.join('; ')}); its noise does not tell this bench's: calibrate on this bench (loadgate calibrate), or remove noiseModel to assume the noise from the tolerances`,
    );
  if (!measured) return;
  // Each test's own shape: a test added since the model was measured has no entries and
  // is judged under the assumed prior; one whose shape changed makes its entries fiction.
  const changed =
    got.tests && want.tests ? testDifferences(got.tests, want.tests) : got.hash !== want.hash ? `profile hash ${got.hash}, config ${want.hash}` : undefined;
  if (changed) throw new InputError(`${path}: noise model was measured with other test shapes (${changed}); ${fix}`);
}
/** "field: model's value, config's value" for every field of the bench that differs. */
function shapeDifferences(got: Record<string, string | number>, want: Record<string, string | number>): string[] {
  if (got.kind !== want.kind) return [`bench.kind: the model's ${JSON.stringify(got.kind)}, the config's ${JSON.stringify(want.kind)}`];
  const keys = [...new Set([...Object.keys(got), ...Object.keys(want)])];
  const show = (v: string | number | undefined) => (v === undefined ? "the preset's" : JSON.stringify(v));
  return keys.filter((k) => got[k] !== want[k]).map((k) => `bench.${String(want.kind)}.${k}: the model's ${show(got[k])}, the config's ${show(want[k])}`);
}

/** Which of the model's tests have another shape in the config (a test only one side has is not a difference). */
function testDifferences(got: Record<string, string>, want: Record<string, string>): string | undefined {
  const differ = Object.keys(got)
    .filter((n) => want[n] !== undefined && got[n] !== want[n])
    .sort();
  return differ.length
    ? `test${differ.length === 1 ? '' : 's'} ${differ.join(', ')} ${differ.length === 1 ? 'differs' : 'differ'} from the model's`
    : undefined;
}
