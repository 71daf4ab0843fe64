import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verdictFileSchema, type Verdict } from '../results/verdict-schema.ts';
import { InputError, formatIssuePath } from '../util/errors.ts';

/**
 * The earlier gate a continuation goes on from, read from its report (the workflow
 * downloads the earlier run's `loadgate-report` artifact before anything else): how many
 * pairs it ran, which is what the new bench may add to, and what it compared. Read in the
 * first job, so a wrong run id or an expired artifact stops the gate before the bench.
 */
export interface EarlierGate {
  runId: string;
  /** Baseline/candidate pairs it recorded per test (verdict.json's decision.pairs): all reused. */
  pairs: number;
  baseline: string;
  candidate: string;
  verdict: Verdict;
  /** Both sides one version: an A/A calibration. */
  calibration: boolean;
}

const artifactGone = (runId: string, why: string) =>
  `continue-from: run ${runId} left no loadgate-report artifact with a readable verdict.json (${why}; artifacts are kept 30 days); start a new gate instead`;

export async function readEarlierGate(reportDir: string, runId: string): Promise<EarlierGate> {
  let text: string;
  try {
    text = await readFile(join(reportDir, 'verdict.json'), 'utf8');
  } catch (error) {
    throw new InputError(artifactGone(runId, (error as NodeJS.ErrnoException).code ?? 'unreadable'));
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new InputError(artifactGone(runId, 'verdict.json is not JSON'));
  }
  const parsed = verdictFileSchema.safeParse(data);
  if (!parsed.success) {
    throw new InputError(
      artifactGone(
        runId,
        `verdict.json: ${parsed.error.issues
          .slice(0, 2)
          .map((i) => `${formatIssuePath(i.path)}: ${i.message}`)
          .join('; ')}`,
      ),
    );
  }
  const v = parsed.data;
  return {
    runId,
    pairs: v.decision.pairs,
    baseline: v.baseline.version,
    candidate: v.candidate.version,
    verdict: v.verdict,
    calibration: v.baseline.version === v.candidate.version,
  };
}

/**
 * Whether `earlier` is a gate this one can continue: the same comparison (or, for a
 * calibration, an earlier calibration of the same version), and undecided. Returns the
 * baseline to use when none was given: the earlier gate's, never a newly picked one.
 */
export function checkContinuation(earlier: EarlierGate, o: { mode: 'gate' | 'calibrate'; candidate: string; baseline: string | null }): string {
  const run = `run ${earlier.runId}`;
  if (o.mode === 'calibrate') {
    if (!earlier.calibration || earlier.candidate !== o.candidate) {
      throw new InputError(
        `continue-from: ${run} compared ${earlier.baseline} with ${earlier.candidate}, not a calibration of ${o.candidate}; give the run id of an earlier calibration of that version`,
      );
    }
    return o.candidate;
  }
  if (earlier.calibration)
    throw new InputError(
      `continue-from: ${run} is a calibration of ${earlier.candidate}, not a gate; a gate continues an earlier inconclusive gate of the same versions`,
    );
  if (earlier.candidate !== o.candidate || (o.baseline !== null && earlier.baseline !== o.baseline)) {
    throw new InputError(
      `continue-from: ${run} compared ${earlier.baseline} with ${earlier.candidate}, not ${o.baseline ?? '(the baseline to pick)'} with ${o.candidate}; continue a gate of the same versions, or start a new gate`,
    );
  }
  if (earlier.verdict !== 'inconclusive') {
    throw new InputError(`continue-from: ${run} ended ${earlier.verdict}: only an inconclusive gate goes on; start a new gate to judge these versions again`);
  }
  return earlier.baseline;
}
