import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { GateConfig, Tolerances } from '../config/schema.ts';
import { tolerancesSchema } from '../config/schema.ts';
import type { RunResult } from '../results/schema.ts';
import type { RenderedGraph } from '../report/graphs.ts';
import { assumedModel, loadNoiseModel, noiseModelPath } from '../noise/model.ts';
import { InputError } from '../util/errors.ts';
import { OutDir } from '../util/out-dir.ts';
import { compareRuns, type CompareSetup } from './compare-runs.ts';
import { errorRatesOf } from './sequential.ts';
import { disturbedFileName } from '../results/disturbed.ts';
import { diffProfiles } from './profile-diff.ts';
import { PROFILE_FILE, type ProfileFile } from '../results/profile.ts';
import { attachChangedCode, type ChangedFunctionsOf } from './changed-code.ts';
import type { Comparison } from '../results/comparison.ts';
import type { VerdictFile } from '../results/verdict-schema.ts';
import { judgeWithHistory, type GateHistory } from './history.ts';
import { recordLine } from '../history/store.ts';

export interface CompareOptions {
  baseline: readonly RunResult[];
  candidate: readonly RunResult[];
  /** Tolerances come from the gate config; without one, the defaults (the seeds' decisions). */
  config?: GateConfig;
  outDir: string;
  /** The config's path: `noiseModel:` is relative to it. */
  configFile?: string;
  /** Extra lines for the report's Comments, e.g. how the baseline was chosen. */
  notes?: readonly string[];
  /**
   * Where both sides' installs are at hand (the bench that ran them): which of a test's
   * significantly grown functions changed between the versions. Without it, the report
   * uses the changed-code.json an earlier report left, or says the changed code is not known here.
   */
  changedFunctions?: ChangedFunctionsOf;
  /** The releases before this gate (run --history): its creep check, its series and Otava's change points. */
  history?: GateHistory;
}

function tolerancesOf(config: GateConfig | undefined): Tolerances {
  return config?.tolerances ?? tolerancesSchema.parse({});
}

/** The decision's set-up from the config: its noise model (checked against it), repeats and maxRepeats. */
export async function compareSetup(options: Pick<CompareOptions, 'config' | 'configFile'>): Promise<CompareSetup> {
  const config = options.config;
  if (!config) return {};
  const path = noiseModelPath(config, options.configFile ?? '.');
  if (path && !options.configFile) throw new InputError('noiseModel: the config names a noise model, but its path is unknown here; pass --config <file>');
  return {
    model: path ? await loadNoiseModel(path, config) : assumedModel(),
    modelPath: config.noiseModel ?? null,
    minPairs: config.repeats,
    maxPairs: config.maxRepeats,
    mode: config.mode,
    errorRates: errorRatesOf(config),
  };
}

/** verdict.json's `config`: which file judged, by path as given and a hash of its bytes. */
async function configIdentity(configFile: string | undefined): Promise<VerdictFile['config']> {
  if (configFile === undefined) return undefined;
  let bytes: Buffer;
  try {
    bytes = await readFile(configFile);
  } catch (error) {
    throw new InputError(`cannot read gate config ${configFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return { path: configFile, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/**
 * A config judges the runs of its own tests: its noise model's entries and its test
 * settings are found by test name, so a run of a test it does not name would be judged
 * under an assumed noise, silently. Every run's test must be one of the config's; the
 * model's entries are the config's tests (loadNoiseModel checks its profile against it).
 */
function checkTestNames(options: Omit<CompareOptions, 'notes'>): void {
  const config = options.config;
  if (!config) return;
  const ran = [...new Set([...options.baseline, ...options.candidate].map((r) => r.test.name))].sort();
  const list = (names: readonly string[]) => names.map((n) => `"${n}"`).join(', ');
  const source = options.configFile ?? 'the gate config';
  const configured = config.tests.map((t) => t.name);
  const unknown = ran.filter((n) => !configured.includes(n));
  if (unknown.length) {
    const none = unknown.length === ran.length;
    throw new InputError(
      `${source}: ${none ? 'its tests match none of the runs' : `the runs' test${unknown.length === 1 ? '' : 's'} ${list(unknown)} ${unknown.length === 1 ? 'is' : 'are'} not in it`}: the config names ${list(configured)}, the runs ${list(ran)}; ` +
        `its noise model and test settings would not apply to them. Compare with the config the runs were made with, or compare only runs of its tests`,
    );
  }
}

/** compareRuns with the config's identity recorded in the verdict. */
async function compareWithConfig(options: Omit<CompareOptions, 'notes'>): Promise<Comparison> {
  checkTestNames(options);
  const comparison = compareRuns(options.baseline, options.candidate, tolerancesOf(options.config), await compareSetup(options));
  const config = options.config ? await configIdentity(options.configFile) : undefined;
  return config ? { ...comparison, verdict: { ...comparison.verdict, config } } : comparison;
}

/** Writes each test's profile diff to profile.json, the one record every reader reads (or removes a stale one). */
async function recordProfiles(out: OutDir, comparison: Comparison, system: string | undefined): Promise<void> {
  const tests = comparison.tests.flatMap((t) => (t.profile ? [{ test: t.name, diff: t.profile }] : []));
  if (!tests.length || !system) {
    await out.removeWritten(PROFILE_FILE);
    return;
  }
  const record: ProfileFile = { system, baseline: comparison.verdict.baseline.version, candidate: comparison.verdict.candidate.version, tests };
  await out.writeFile(PROFILE_FILE, `${JSON.stringify(record, null, 2)}\n`);
}

const safeName = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_');

const verdictText = (verdict: VerdictFile) => `${JSON.stringify(verdict, null, 2)}\n`;

/**
 * Compares, then writes `<outDir>/verdict.json`, `<outDir>/README.md`, `<outDir>/graphs/*.png`,
 * `<outDir>/profile.json` (the profile diffs), `<outDir>/changed-code.json` (given `changedFunctions`) and copies of the inputs under `<outDir>/results/`. Same inputs, byte-identical outputs:
 * nothing here reads the clock or depends on file order.
 */
export async function compareAndReport(options: CompareOptions): Promise<VerdictFile> {
  const out = await OutDir.open(options.outDir);
  const tolerances = tolerancesOf(options.config);
  const comparison = await compareWithConfig(options);
  const { verdict: judged, record } = await judgeWithHistory(comparison.verdict, [...options.baseline, ...options.candidate], options.config, options.history);
  comparison.verdict = judged;
  // The renderer (vega, vega-lite, resvg's WebAssembly) is most of a compare's start-up:
  // loaded here, a verdict alone (compareVerdict, the gate loop) never pays for it.
  const [{ renderTestGraphs }, { renderMarkdown }, { renderFlameGraph }, { renderHistoryGraphs }] = await Promise.all([
    import('../report/graphs.ts'),
    import('../report/markdown.ts'),
    import('../report/flame-graph.ts'),
    import('../report/history-graph.ts'),
  ]);
  const graphs: RenderedGraph[] = [...(await renderHistoryGraphs(judged))];
  for (const test of comparison.tests) {
    graphs.push(...(await renderTestGraphs(test.name, test.baseline, test.candidate)));
    const profile = diffProfiles(test.baseline, test.candidate);
    if (profile) {
      test.profile = profile;
      graphs.push(await renderFlameGraph(test.name, profile));
    }
  }
  await recordProfiles(out, comparison, [...options.baseline, ...options.candidate][0]?.target.system);
  await attachChangedCode(out, comparison, options.changedFunctions);

  // Only what loadgate wrote is replaced, so stale graphs never survive a re-run and a
  // person's own files in the directory are never touched.
  await out.removeWritten('graphs');
  await out.removeWritten('results');
  await out.mkdir('graphs');
  await out.mkdir('results');
  for (const graph of graphs) await out.writeFile(graph.file, graph.png);
  for (const [side, runs] of [
    ['baseline', options.baseline],
    ['candidate', options.candidate],
  ] as const) {
    const disturbed = new Map<string, number>();
    for (const run of runs) {
      const base = `${side}-${safeName(run.target.version)}-${safeName(run.test.name)}-${run.repeat}`;
      // A disturbed duet's run and its re-run share a repeat: the gate's names (src/run/gate.ts) keep them apart.
      const nth = run.disturbed ? (disturbed.get(base) ?? 0) + 1 : 0;
      if (nth) disturbed.set(base, nth);
      const name = nth ? disturbedFileName(base, nth) : `${base}.json`;
      await out.writeFile(join('results', name), `${JSON.stringify(run, null, 2)}\n`);
    }
  }
  await out.writeFile('verdict.json', verdictText(comparison.verdict));
  // The line this gate adds to the history (run --history appends it; publish, to the reports repository's).
  if (record) await out.writeFile('history-record.json', recordLine(record));
  else await out.removeWritten('history-record.json');
  await out.writeFile('README.md', renderMarkdown(comparison, graphs, tolerances.listing, options.notes));
  return comparison.verdict;
}

/**
 * Compares and writes `<outDir>/verdict.json` only: the same file compareAndReport writes,
 * for a caller that needs the decision (and `next`) between pairs and renders once at the
 * end. A report and graphs left from an earlier call would disagree with this verdict, so
 * they are removed; `results/` is left alone, since the inputs may live there.
 */
export async function compareVerdict(options: Omit<CompareOptions, 'notes'>): Promise<VerdictFile> {
  const out = await OutDir.open(options.outDir);
  const { verdict } = await compareWithConfig(options);
  await out.removeWritten('README.md');
  await out.removeWritten('graphs');
  await out.removeWritten('history-record.json');
  await out.writeFile('verdict.json', verdictText(verdict));
  return verdict;
}
