import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { runTool } from '../util/run-tool.ts';

/**
 * Change points with Apache Otava (PyPI `apache-otava`, the change-point detector that grew
 * out of DataStax's Hunter), through its Python API: `otava.analysis.compute_change_points`
 * (otava/analysis.py), the split-and-merge E-divisive with a Student's t significance test
 * of Fleming et al., "Hunter: Using Change Point Detection to Hunt for Performance
 * Regressions", ICPE 2023. Installed on first use into a virtualenv in the cache, with only
 * what that module imports (numpy and scipy, at the versions Otava pins): its other
 * dependencies serve its BigQuery, Postgres, Graphite and Slack integrations, some 200 MB
 * a gate never loads.
 */
const OTAVA_VERSION = '0.8.0';

/** apache-otava 0.8.0's own pins for Python 3.11 and later (its METADATA's Requires-Dist). */
const OTAVA_ANALYSIS_DEPS = ['numpy==2.2.0.*', 'scipy>=1.16,<1.17'];

/**
 * Otava's own defaults (otava/series.py, AnalysisOptions): a 50-point window and a p-value
 * of at most 0.001. The smallest shift named is each check's tolerance (`min_magnitude`,
 * the merge step's relative change): a shift the gate would accept is no finding, and the
 * chained level's noise adds up release by release, so small wanders are the rule there.
 */
const OTAVA_WINDOW = 50;
export const OTAVA_MAX_PVALUE = 0.001;

/** The virtualenv's interpreter: $LOADGATE_OTAVA_PYTHON, else the cache's, installed on first use. */
export function otavaPython(cacheDir: string): string {
  return process.env.LOADGATE_OTAVA_PYTHON || join(cacheDir, 'otava', OTAVA_VERSION, 'venv', 'bin', 'python');
}

/** Installs Otava's analysis into the virtualenv `python` belongs to, unless it imports already. */
async function ensureOtava(python: string): Promise<void> {
  if (
    existsSync(python) &&
    (await runTool(python, ['-c', 'import otava.analysis'], { timeoutMs: 60_000 }).then(
      () => true,
      () => false,
    ))
  )
    return;
  if (process.env.LOADGATE_OTAVA_PYTHON) throw new Error(`LOADGATE_OTAVA_PYTHON (${python}) cannot import otava.analysis`);
  const venv = dirname(dirname(python));
  await runTool(process.env.LOADGATE_PYTHON ?? 'python3', ['-m', 'venv', venv], { timeoutMs: 120_000 });
  await runTool(python, ['-m', 'pip', 'install', '-q', '--disable-pip-version-check', '--no-deps', `apache-otava==${OTAVA_VERSION}`, ...OTAVA_ANALYSIS_DEPS], {
    timeoutMs: 600_000,
  });
}

/** Reads the series from stdin, prints each one's change points; Otava's functions only. */
const SCRIPT = `
import json, sys
from importlib.metadata import version
from otava.analysis import compute_change_points
request = json.load(sys.stdin)
out = {"version": version("apache-otava"), "changePoints": {}}
for m in request["metrics"]:
    points, _weak = compute_change_points(m["values"], window_len=request["windowLen"], max_pvalue=request["maxPValue"], min_magnitude=m["minMagnitude"])
    out["changePoints"][m["id"]] = [{"index": int(c.index), "changePct": float(c.stats.forward_change_percent()), "pValue": float(c.stats.pvalue)} for c in points]
json.dump(out, sys.stdout)
`;

const answerSchema = z.strictObject({
  version: z.string(),
  changePoints: z.record(z.string(), z.array(z.strictObject({ index: z.number().int().nonnegative(), changePct: z.number(), pValue: z.number() }))),
});
export type OtavaAnswer = z.output<typeof answerSchema>;

export interface OtavaSeries {
  id: string;
  /** The level at each release, as a ratio to the first (positive values: Otava's changes are relative). */
  values: number[];
  /** The smallest relative shift to name (0.05: 5 %). */
  minMagnitude: number;
}

/** Otava's change points per series, or why it could not be asked. */
export async function otavaChangePoints(python: string, series: readonly OtavaSeries[], timeoutMs = 120_000): Promise<OtavaAnswer | { unavailable: string }> {
  try {
    await ensureOtava(python);
  } catch (error) {
    return { unavailable: `Apache Otava could not be installed into ${dirname(dirname(python))}: ${(error as Error).message.split('\n').slice(-1)[0]}` };
  }
  const input = JSON.stringify({ windowLen: OTAVA_WINDOW, maxPValue: OTAVA_MAX_PVALUE, metrics: series });
  try {
    const { stdout } = await runTool(python, ['-c', SCRIPT], { input, timeoutMs });
    const parsed = answerSchema.safeParse(JSON.parse(stdout));
    if (!parsed.success) return { unavailable: `Apache Otava answered in an unexpected form: ${parsed.error.issues[0]?.message ?? 'unknown'}` };
    return parsed.data;
  } catch (error) {
    return { unavailable: `Apache Otava failed: ${(error as Error).message.split('\n').slice(-1)[0]}` };
  }
}
