import { RUN_RESULT_SCHEMA_VERSION, runResultSchema, type BenchFingerprint, type RunResult } from '../../../src/results/schema.ts';
import type { TestSpec } from '../../../src/config/schema.ts';
import { testParams } from '../../../src/results/test-params.ts';
import { formatIssuePath } from '../../../src/util/errors.ts';
import { GO_ZERO_TIME, type CoordinatorStatus } from '../../../src/engine/loadtest-ng/schema.ts';

/**
 * Maps a finished load-test-ng coordinator run plus the numbers read from Prometheus over
 * the run into the run-result format every bench writes (src/results/schema.ts).
 */

/** What the Prometheus side measured over the run (computed elsewhere, e.g. src/metrics). */
export interface MeasuredRun {
  stableWindow: RunResult['stableWindow'];
  totals: RunResult['totals'];
  api: RunResult['api'];
  store: RunResult['store'];
  series: RunResult['series'];
  /** Mean of active users over the stability window; preferred over the coordinator's own estimate. */
  supportedUsers?: number;
  generator?: RunResult['generator'];
}

export interface LoadTestNgRunParts {
  test: TestSpec;
  target: { system: 'mattermost'; version: string };
  repeat: number;
  /** The coordinator's status after the run ended (stopped or done). */
  coordinator: CoordinatorStatus;
  /** True when loadgate stopped the coordinator because `maxDuration` ran out. */
  hitMaxDuration: boolean;
  measured: MeasuredRun;
  bench: BenchFingerprint;
  links?: RunResult['links'];
  /** Problems found elsewhere (agent errors, crashed nodes) to carry into the result. */
  problems?: string[];
}

export class RunMappingError extends Error {
  override name = 'RunMappingError';
}

export function loadTestNgRunResult(parts: LoadTestNgRunParts): RunResult {
  const { coordinator, test } = parts;
  if (coordinator.State === 'running') {
    throw new RunMappingError('the load-test-ng coordinator is still running; stop it (or wait for it) before reading its result');
  }
  if (coordinator.StartTime === GO_ZERO_TIME) {
    throw new RunMappingError('the load-test-ng coordinator never started (StartTime is unset), so there is no run to report');
  }
  const startedAt = new Date(coordinator.StartTime);
  // A coordinator stopped through the API may report no StopTime: the end is then "now".
  const finishedAt = coordinator.StopTime === GO_ZERO_TIME ? new Date() : new Date(coordinator.StopTime);

  const problems = [...(parts.problems ?? [])];
  if (coordinator.NumErrors > 0) problems.push(`load-test-ng agents reported ${coordinator.NumErrors} errors`);
  const saturated = parts.measured.generator?.saturated ?? false;
  if (saturated) problems.push('the load generator saturated: its numbers cannot be trusted');

  let supportedUsers: number | undefined;
  let converged: boolean | undefined;
  if (test.type === 'unbounded') {
    supportedUsers = parts.measured.supportedUsers ?? coordinator.SupportedUsers;
    // "done" is the coordinator's own verdict that it reached equilibrium.
    converged = coordinator.State === 'done' && !parts.hitMaxDuration;
    if (!converged) problems.push(`the coordinator did not reach equilibrium within maxDuration (${test.maxDuration}s)`);
  }

  const result = {
    schemaVersion: RUN_RESULT_SCHEMA_VERSION,
    provenance: { kind: 'measured' as const, note: 'load-test-ng coordinator' },
    target: parts.target,
    // Queries as configured: the AWS bench's queries have no placeholders to fill.
    test: testParams(test, (query) => query),
    repeat: parts.repeat,
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    status: saturated ? ('invalid' as const) : ('completed' as const),
    problems,
    ...(supportedUsers === undefined ? {} : { supportedUsers }),
    ...(converged === undefined ? {} : { converged }),
    stableWindow: parts.measured.stableWindow,
    totals: parts.measured.totals,
    api: parts.measured.api,
    store: parts.measured.store,
    series: parts.measured.series,
    ...(parts.measured.generator ? { generator: parts.measured.generator } : {}),
    bench: parts.bench,
    links: parts.links ?? [],
  };
  // Validate what we write, so a bad number fails here and not in `compare`.
  const parsed = runResultSchema.safeParse(result);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${formatIssuePath(i.path)}: ${i.message}`).join('; ');
    throw new RunMappingError(`the load-test-ng run does not make a valid run result: ${issues}`);
  }
  return parsed.data;
}
