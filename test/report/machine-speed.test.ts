import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { compareRuns } from '../../src/compare/compare-runs.ts';
import type { Check } from '../../src/results/verdict-schema.ts';
import { loadGateConfig } from '../../src/config/load.ts';
import { modelOf } from '../../src/noise/model.ts';
import { noiseModelFileSchema, type SpeedFit } from '../../src/noise/schema.ts';
import { machineSpeedRow } from '../../src/report/machine-speed.ts';
import { renderMarkdown } from '../../src/report/markdown.ts';
import type { RunResult } from '../../src/results/schema.ts';
import { unbounded } from '../support/runs.ts';

const run = (cpuMsMedian: number | undefined, workload = 'python-json-v1', status: RunResult['status'] = 'completed') =>
  ({
    status,
    speedProbe: cpuMsMedian === undefined ? undefined : { workload, samples: 10, cpuMsMedian, cpuMsMin: cpuMsMedian - 1, cpuMsMax: cpuMsMedian + 5 },
  }) as unknown as RunResult;
const sides = (baseline: RunResult[], candidate: RunResult[], name = 'unbounded') => [{ name, baseline, candidate }];

test("the machine-speed row compares each side's geometric mean of its judged runs' probe times", () => {
  const [name, value] = machineSpeedRow(sides([run(58), run(60), run(59)], [run(61.95), run(61.95), run(90, undefined, 'crashed')]))!;
  assert.equal(name, 'Machine speed (CPU probe)');
  // Python: exp(mean(log([58, 60, 59]))) = 58.9943; 61.95 / 58.99 − 1 = 5.0 %.
  assert.equal(
    value,
    "a fixed workload took 58.99 ms of CPU in the baseline's runs and 61.95 ms in the candidate's (geometric means of the runs' medians: 58.0, 60.0, 59.0 and 62.0, 62.0): the candidate's runs on a 5.0 % slower machine",
  );
  assert.match(machineSpeedRow(sides([run(60)], [run(57)]))![1]!, /on a 5\.0 % faster machine$/);
  assert.match(machineSpeedRow(sides([run(60)], [run(60)]))![1]!, /the same speed for both sides$/);
});

test('no row without a probe on both sides; probes of different workloads are not compared', () => {
  assert.equal(machineSpeedRow(sides([run(60)], [run(undefined)])), undefined);
  assert.match(
    machineSpeedRow(sides([run(60)], [run(60, 'python-json-v2')]))![1]!,
    /not comparable: the runs used different probe workloads \(python-json-v1, python-json-v2\)/,
  );
});

test("with a check judged at one speed, the row takes that check's own figures; with a skipped fit, it says so and why", () => {
  const check = { id: 'unbounded.supportedUsers', metric: 'Supported users', test: 'unbounded', gating: true } as Check;
  const adjusted = {
    ...check,
    speed: { adjusted: true as const, slope: -2, sdPct: 3, baselineProbeMs: 46.2, candidateProbeMs: 49.53, rawBaseline: 60, rawCandidate: 57, rawDeltaPct: -5 },
  };
  // The bounded test's runs are not that check's, and do not count.
  const tests = [...sides([run(46), run(46.4)], [run(49.5), run(49.56)]), ...sides([run(80)], [run(40)], 'bounded')];
  assert.equal(
    machineSpeedRow(tests, [adjusted])![1],
    "a fixed workload took 46.2 ms of CPU in the baseline's runs and 49.53 ms in the candidate's (geometric means of the runs' medians: 46.0, 46.4 and 49.5, 49.6): the candidate's runs on a 7.2 % slower machine; Supported users (unbounded) is judged at one machine speed (see How the gate decided)",
  );
  const skipped = { ...check, speed: { adjusted: false as const, why: "the runs' speed probe lies outside the noise model's speed fit" } };
  assert.match(
    machineSpeedRow(tests, [skipped])![1]!,
    /took 46\.2 ms .* and 49\.53 ms .*: the candidate's runs on a 7\.2 % slower machine; the noise model's speed fit was not applied to Supported users \(unbounded\), which is judged as measured: the runs' speed probe lies outside the noise model's speed fit$/,
  );
});

async function setupWith(fit: SpeedFit) {
  const config = await loadGateConfig('examples/local-synapse.yml');
  const file = noiseModelFileSchema.parse(JSON.parse(await readFile('noise/local-synapse.json', 'utf8')));
  const entries = file.entries.map((e) => (e.metric === 'supportedUsers' ? { ...e, speed: fit } : e));
  return { config, setup: { model: modelOf({ ...file, entries }, 'noise/local-synapse.json'), minPairs: 3, maxPairs: 6 } };
}

const probed = (version: string, users: readonly number[], probes: readonly number[]) =>
  users.map((u, i) => ({
    ...unbounded(version, u, i),
    speedProbe: { workload: 'python-json-v1 CPython 3.11.2', samples: 40, cpuMsMedian: probes[i]!, cpuMsMin: probes[i]!, cpuMsMax: probes[i]! },
  }));

// By the medians per run the candidate's machine was 1.6 % faster (60 against 61 ms); by the
// geometric means the decision takes, 7.7 % slower (65.67 against 60.99 ms).
const BASELINE_MS = [60, 61, 62];
const CANDIDATE_MS = [59, 60, 80];

test("the report gives one figure for the machine's speed: the Setup row and the Decision section agree", async () => {
  const { config, setup } = await setupWith({ workload: 'python-json-v1', slope: -0.8, sxx: 0.05, sdLog: 0.02, runs: 8, df: 6, source: 'test' });
  const comparison = compareRuns(
    probed('1.162.0', [50, 50.5, 49.8], BASELINE_MS),
    probed('1.162.0', [50.2, 49.9, 44.9], CANDIDATE_MS),
    config.tolerances,
    setup,
  );
  const users = comparison.verdict.checks.find((c) => c.id === 'unbounded.supportedUsers')!;
  assert.ok(users.speed?.adjusted, JSON.stringify(users.speed));
  const md = renderMarkdown(comparison, [], config.tolerances.listing);
  const row = /\| Machine speed \(CPU probe\) \|[^\n]*? ([\d.]+) ms [^\n]*? ([\d.]+) ms [^\n]*on a ([\d.]+) % (slower|faster) machine/.exec(md);
  const decision = /The CPU probe took ([\d.]+) ms in the baseline's runs and ([\d.]+) ms in the candidate's \(geometric means, ([+−])([\d.]+)%\)/.exec(md);
  assert.ok(row && decision, md);
  assert.deepEqual(
    { speed: `${row[3]} % ${row[4]}`, ms: [row[1], row[2]] },
    { speed: `${decision[4]} % ${decision[3] === '+' ? 'slower' : 'faster'}`, ms: [decision[1], decision[2]] },
  );
  assert.deepEqual([row[1], row[2], row[3], row[4]], ['60.99', '65.67', '7.7', 'slower']);
});

test('when the fit is not applied, the Setup row still gives the one figure and says why', async () => {
  // The fit was measured at 45-48 ms: these runs' 59-80 ms lie outside it.
  const { config, setup } = await setupWith({
    workload: 'python-json-v1',
    slope: -0.8,
    sxx: 0.05,
    sdLog: 0.02,
    runs: 8,
    df: 6,
    source: 'test',
    probeMs: { min: 45, max: 48 },
  });
  const comparison = compareRuns(
    probed('1.162.0', [50, 50.5, 49.8], BASELINE_MS),
    probed('1.162.0', [50.2, 49.9, 44.9], CANDIDATE_MS),
    config.tolerances,
    setup,
  );
  const users = comparison.verdict.checks.find((c) => c.id === 'unbounded.supportedUsers')!;
  assert.equal(users.speed?.adjusted, false);
  const md = renderMarkdown(comparison, [], config.tolerances.listing);
  assert.match(
    md,
    /\| Machine speed \(CPU probe\) \| a fixed workload took 60\.99 ms of CPU in the baseline's runs and 65\.67 ms in the candidate's \(geometric means of the runs' medians: 60\.0, 61\.0, 62\.0 and 59\.0, 60\.0, 80\.0\): the candidate's runs on a 7\.7 % slower machine; the noise model's speed fit was not applied to Supported users \(unbounded\), which is judged as measured: the runs' speed probe lies outside the noise model's speed fit \(probe 59\.0–80\.0 ms against the fit's 45\.0–48\.0 ms on a machine it does not name, more than 10 % beyond either end\)/,
  );
  assert.match(
    md,
    /\*\*Machine speed\*\*: Supported users \(unbounded\) is judged as measured, at the model's unadjusted noise: the runs' speed probe lies outside/,
  );
});
