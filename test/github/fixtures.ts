import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Resvg } from '@resvg/resvg-wasm';
import { initResvg } from '../../src/report/resvg.ts';
import type { Check, Verdict, VerdictFile } from '../../src/results/verdict-schema.ts';
import type { GitHubEnv } from '../../src/github/env.ts';
import type { ActionsContextSource } from '../../src/github/actions-context.ts';
import type { PublishContext } from '../../src/github/publish.ts';
import { planGate, type GatePlan } from '../../src/github/check-run-plan.ts';
import { parseGateConfig } from '../../src/config/load.ts';
import type { GitHubStandin } from '../support/github-standin/server.ts';

export const TOKEN = 'test-token-0123456789';
export const BASELINE = 'v1.2.0';
export const CANDIDATE = 'v1.3.0-rc1';

/** The plan of a one-test local gate of CANDIDATE against BASELINE. */
export function smallLocalPlan(): GatePlan {
  const config = parseGateConfig(
    { version: 1, name: 'g', target: { system: 'synapse' }, bench: { kind: 'local' }, tests: [{ type: 'bounded', users: 4, rampUp: '5s', duration: '20s' }] },
    'inline',
  );
  return planGate(config, { baseline: BASELINE, candidate: CANDIDATE, tests: [], repeats: 1, bench: 'local' });
}

export function check(overrides: Partial<Check> = {}): Check {
  return {
    id: 'bounded.apiP99',
    metric: 'API p99',
    test: 'bounded',
    baseline: 120,
    candidate: 126,
    unit: 'ms',
    deltaPct: 5,
    interval: [1.2, 8.9],
    method: 't-interval',
    tolerancePct: 20,
    worse: 'higher',
    gating: true,
    verdict: 'pass',
    reason: 'within tolerance',
    ...overrides,
  };
}

export function verdictFile(verdict: Verdict, checks: Check[] = [check()], versions = { baseline: BASELINE, candidate: CANDIDATE }): VerdictFile {
  return {
    schemaVersion: 3,
    verdict,
    summary: verdict === 'pass' ? 'No regression beyond tolerance' : verdict === 'fail' ? 'API p99 regressed by 35%' : 'The candidate run crashed',
    baseline: { version: versions.baseline, runs: 1 },
    candidate: { version: versions.candidate, runs: 1 },
    problems: verdict === 'inconclusive' ? ['candidate run 0 crashed'] : [],
    checks,
    next: 'stop',
    decision: {
      rule: 'sprt',
      alpha: 0.01,
      beta: 0.01,
      gatingChecks: 1,
      noiseModel: { path: null, kind: 'assumed', assumed: [] },
      pairs: 1,
      minRepeats: 1,
      maxRepeats: 3,
      stopReason: 'decided',
      detectable: [],
    },
  };
}

await initResvg();

/** A real PNG (rendered by resvg), so the round trip covers bytes above 0x7f and NULs. */
export function pngGraph(label: string): Buffer {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="32"><rect width="64" height="32" fill="#fff"/><polyline points="0,30 20,${label.length} 40,12 64,4" stroke="#c00" fill="none"/></svg>`;
  return Buffer.from(new Resvg(svg).render().asPng());
}

export interface ReportDir {
  dir: string;
  files: Record<string, Buffer>;
  cleanup(): Promise<void>;
}

/** Writes a report directory like `loadgate compare --out` does. */
export async function writeReport(verdict: VerdictFile | null, extra: Record<string, Buffer | string> = {}): Promise<ReportDir> {
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-report-'));
  const files: Record<string, Buffer> = {
    'README.md': Buffer.from(`# ${verdict?.baseline.version} vs ${verdict?.candidate.version}\n\n${verdict?.summary}\n`),
    'graphs/api-p99.png': pngGraph('api'),
    'results/bounded-candidate-0.json': Buffer.from('{"schemaVersion":1}\n'),
  };
  if (verdict) files['verdict.json'] = Buffer.from(`${JSON.stringify(verdict, null, 2)}\n`);
  for (const [path, content] of Object.entries(extra)) files[path] = Buffer.isBuffer(content) ? content : Buffer.from(content);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return { dir, files, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

function envFor(standin: GitHubStandin, token = TOKEN): GitHubEnv {
  return {
    token,
    owner: standin.owner,
    repo: standin.repo,
    apiUrl: standin.url,
    serverUrl: 'https://github.com',
    runId: '4242',
    sha: undefined,
    inActions: false,
    stepSummaryFile: undefined,
    writeIntervalMs: 0,
    workflowFile: 'loadgate.yml',
    approvers: ['release-lead'],
  };
}

export function contextFor(standin: GitHubStandin, token = TOKEN, log: string[] = []): PublishContext {
  return {
    env: envFor(standin, token),
    secrets: [token],
    log: (line) => log.push(line),
    // No pacing and millisecond back-off: the stand-in has no secondary limits.
    clientOptions: { writeIntervalMs: 0, retryAfterUnitMs: 1, maskToken: false },
  };
}

/** An Actions run context as `@actions/github` would hydrate it, with nothing set unless given. */
export function contextSource(overrides: Partial<ActionsContextSource> = {}): ActionsContextSource {
  return {
    eventName: '',
    sha: '',
    ref: '',
    runId: Number.NaN,
    runAttempt: Number.NaN,
    apiUrl: 'https://api.github.com',
    serverUrl: 'https://github.com',
    repo: { owner: 'octo-org', repo: 'chat-server' },
    ...overrides,
  };
}
