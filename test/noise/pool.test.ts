import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { loadGateConfig } from '../../src/config/load.ts';
import { emptyModel, poolRuns, spreadSides } from '../../src/noise/pool.ts';
import { noiseModelFileSchema } from '../../src/noise/schema.ts';
import { checkProfile } from '../../src/noise/model.ts';
import { unbounded } from '../support/runs.ts';

const close = (actual: number, expected: number, tol: number) => assert.ok(Math.abs(actual - expected) <= tol, `expected ${expected} ± ${tol}, got ${actual}`);

const baseline = [100, 110, 90].map((u, i) => unbounded('1.162.0', u, i));
const candidate = [100, 105, 95].map((u, i) => unbounded('1.162.0', u, i));

test("a gate's runs: each side's spread around its own mean, pooled (2 × 2 df)", async () => {
  const config = await loadGateConfig('examples/local-synapse.yml');
  const model = poolRuns(emptyModel(config), config, { baseline, candidate })!;
  const users = model.entries.find((e) => e.metric === 'supportedUsers')!;
  // numpy: sqrt((ss of ln[100,110,90] + ss of ln[100,105,95]) / 4)
  close(users.sdLog, 0.07931045406965312, 1e-5);
  assert.deepEqual([users.kind, users.runs, users.df, users.versions], ['measured', 6, 4, ['1.162.0']]);
  assert.equal(model.entries.find((e) => e.metric === 'apiAvg')!.kind, 'assumed', 'no bounded runs: still assumed');
  checkProfile(noiseModelFileSchema.parse(model), config, 'pooled');
});

test('a gate with repeats refines a measured model: df-weighted with what it held', async () => {
  const config = await loadGateConfig('examples/local-synapse.yml');
  const shipped = noiseModelFileSchema.parse(JSON.parse(await readFile('noise/local-synapse.json', 'utf8')));
  const users = (m: typeof shipped) => m.entries.find((e) => e.metric === 'supportedUsers')!;
  const before = users(shipped);
  const after = users(poolRuns(shipped, config, { baseline, candidate })!);
  // Python: sqrt((24 · 0.04251² + 4 · 0.0793105²) / 28), the shipped entry being 0.04251 with 24 df
  close(before.sdLog, 0.04251, 1e-5);
  close(after.sdLog, Math.sqrt((24 * before.sdLog ** 2 + 4 * 0.07931045406965312 ** 2) / 28), 1e-5);
  close(after.sdLog, 0.049473, 2e-5);
  assert.equal(after.df, 28);
  assert.equal(after.runs, 34);
  // These runs carry no probe: the entry's speed fit is kept as it was.
  assert.deepEqual(after.speed, before.speed);
});

test('one run per side measures no spread: nothing is pooled', async () => {
  const config = await loadGateConfig('examples/local-synapse.yml');
  assert.equal(poolRuns(emptyModel(config), config, { baseline: baseline.slice(0, 1), candidate: candidate.slice(0, 1) }), null);
});

test('runs that all measured the same value give no noise figure: the entry keeps its assumption', async () => {
  const config = await loadGateConfig('examples/local-synapse.yml');
  const same = [80, 80, 80].map((u, i) => unbounded('1.162.0', u, i));
  const before = emptyModel(config);
  // Before this rule, the pooled sd of 0 reached the file and its own schema (sdLog > 0) refused it.
  assert.equal(poolRuns(before, config, spreadSides({ baseline: same, candidate: same }, true)), null);
  const measured = poolRuns(before, config, { baseline, candidate })!;
  const kept = poolRuns(measured, config, spreadSides({ baseline: same, candidate: same }, true))!;
  const users = (m: typeof measured) => m.entries.find((e) => e.metric === 'supportedUsers')!;
  // A measured entry absorbs the extra zero-spread df (its sd shrinks) rather than collapsing to 0.
  assert.ok(users(kept).sdLog > 0 && users(kept).sdLog < users(measured).sdLog);
  assert.equal(users(kept).df, users(measured).df + 5);
  noiseModelFileSchema.parse(kept);
});

test('an A/A calibration is one group: the offset between its sides counts as noise; a gate of two versions keeps its sides apart', async () => {
  const config = await loadGateConfig('examples/local-synapse.yml');
  // Runs 2 % apart within each side, the candidate side 5 % low throughout, as on the local
  // bench (2026-11-24: 1.26 % per side, candidate 4.9 % low, 2.97 % over all six).
  const steady = [100, 102, 98].map((u, i) => unbounded('1.162.0', u, i));
  const low = [95, 96.9, 93.1].map((u, i) => unbounded('1.162.0', u, i));
  const users = (sides: Parameters<typeof poolRuns>[2]) => poolRuns(emptyModel(config), config, sides)!.entries.find((e) => e.metric === 'supportedUsers')!;
  const perSide = users(spreadSides({ baseline: steady, candidate: low }, false));
  const oneGroup = users(spreadSides({ baseline: steady, candidate: low }, true));
  assert.equal(perSide.df, 4);
  assert.equal(oneGroup.df, 5);
  // Python: stdev(ln [100, 102, 98, 95, 96.9, 93.1]) = 0.0333076; per side sqrt((2 var_b + 2 var_c) / 4) = 0.0200030
  close(oneGroup.sdLog, 0.0333076, 1e-5);
  close(perSide.sdLog, 0.020003, 1e-5);
  // Two versions: their offset is the change under test, never noise, even when calibrating.
  const other = [100, 105, 95].map((u, i) => unbounded('1.163.2', u, i));
  assert.deepEqual(spreadSides({ baseline, candidate: other }, true), { baseline, candidate: other });
});

/** Six A/A runs of 1.162.0 whose users move against the speed probe (ms), for the speed-fit tests. */
const PROBES = [60, 66, 57, 63, 70, 59];
const probedRuns = () =>
  [52, 49, 54.5, 50, 46, 53].map((u, i) => ({
    ...unbounded('1.162.0', u, i),
    speedProbe: { workload: 'python-json-v1 CPython 3.11.2', samples: 40, cpuMsMedian: PROBES[i]!, cpuMsMin: PROBES[i]!, cpuMsMax: PROBES[i]! },
  }));
const usersEntry = (m: ReturnType<typeof poolRuns>) => m!.entries.find((e) => e.metric === 'supportedUsers')!;

test('runs with the speed probe add a speed fit: one shared slope, matching a dummy-variable least-squares solve', async () => {
  const config = await loadGateConfig('examples/local-synapse.yml');
  const runs = probedRuns();
  const entry = usersEntry;
  // Reference: Python, exact fractions, OLS of ln(users) on ln(probe ms) with one dummy per
  // group (the solve in test/noise/speed.test.ts). An A/A calibration is one group.
  const calibration = entry(
    poolRuns(emptyModel(config), config, spreadSides({ baseline: runs.slice(0, 3), candidate: runs.slice(3) }, true), { startSpeedFit: true }),
  );
  close(calibration.speed!.slope, -0.7931980251849082, 1e-5);
  close(calibration.speed!.sdLog, 0.007240981901220898, 1e-7);
  assert.deepEqual([calibration.speed!.workload, calibration.speed!.df, calibration.speed!.runs], ['python-json-v1', 4, 6]);
  // A gate of two versions keeps its sides as two groups.
  const gate = entry(
    poolRuns(
      emptyModel(config),
      config,
      { baseline: runs.slice(0, 3), candidate: runs.slice(3).map((r) => ({ ...r, target: { ...r.target, version: '1.163.2' } })) },
      { startSpeedFit: true },
    ),
  );
  close(gate.speed!.slope, -0.777147756816663, 1e-5);
  close(gate.speed!.sdLog, 0.007106909432295336, 1e-7);
  assert.equal(gate.speed!.df, 3);
  noiseModelFileSchema.parse(
    poolRuns(emptyModel(config), config, spreadSides({ baseline: runs.slice(0, 3), candidate: runs.slice(3) }, true), { startSpeedFit: true }),
  );
  // Runs without the probe leave no fit.
  assert.equal(entry(poolRuns(emptyModel(config), config, { baseline, candidate }, { startSpeedFit: true })).speed, undefined);
});

test('only a calibration starts a speed fit; a gate refines one exactly; only supported users get one; an assumed entry cannot hold one', async () => {
  const config = await loadGateConfig('examples/local-synapse.yml');
  const runs = probedRuns();
  const entry = usersEntry;
  // A gate (not a calibration): its σ is pooled, no fit is started.
  const gate = poolRuns(emptyModel(config), config, { baseline: runs.slice(0, 3), candidate: runs.slice(3) });
  assert.equal(entry(gate).speed, undefined);
  // A calibration of the first three runs starts one (2 df); a gate of the other three, as one
  // group, refines it to the fit of all six (the one-group reference of the test above).
  const first = poolRuns(emptyModel(config), config, spreadSides({ baseline: runs.slice(0, 2), candidate: runs.slice(2, 4) }, true), { startSpeedFit: true })!;
  assert.equal(entry(first).speed!.df, 2);
  const refined = poolRuns(first, config, { baseline: runs.slice(4), candidate: [] })!;
  // Two groups now (the calibration's four runs, the gate's two): Python, exact fractions,
  // dummy-variable OLS over groups [runs 1-4], [runs 5-6].
  close(entry(refined).speed!.slope, -0.7868317234784827, 1e-5);
  close(entry(refined).speed!.sdLog, 0.008129841992370166, 1e-7);
  assert.equal(entry(refined).speed!.df, 3);
  assert.match(entry(refined).speed!.source, /pooled with 2 runs with the speed probe/);
  // Runs that probe another workload (the bench's probe changed): a gate leaves the fit as it
  // was; a calibration starts a new one from its own runs only, in place of the old.
  const windowed = runs.map((r) => ({ ...r, speedProbe: { ...r.speedProbe, workload: 'python-json-v1@window CPython 3.11.2' } }));
  assert.deepEqual(entry(poolRuns(refined, config, { baseline: windowed.slice(0, 3), candidate: [] })!).speed, entry(refined).speed);
  const replaced = entry(
    poolRuns(refined, config, spreadSides({ baseline: windowed.slice(0, 3), candidate: windowed.slice(3) }, true), { startSpeedFit: true })!,
  ).speed!;
  close(replaced.slope, -0.7931980251849082, 1e-5);
  assert.deepEqual([replaced.workload, replaced.df, replaced.runs], ['python-json-v1@window', 4, 6]);
  assert.match(replaced.source, /^least squares over 6 runs .*in place of the fit of python-json-v1, a probe these runs no longer take/);
  const schema = noiseModelFileSchema.safeParse({
    ...first,
    entries: first.entries.map((e) => (e.kind === 'assumed' ? { ...e, speed: entry(first).speed } : e)),
  });
  assert.equal(schema.success, false);
  assert.match(JSON.stringify(schema.error?.issues), /only a measured entry can hold a speed fit/);
});

test("a speed fit records where it was measured: its runs' probe range and machine; a gate on that machine widens it, one on another leaves the fit alone, a calibration there starts its own", async () => {
  const config = await loadGateConfig('examples/local-synapse.yml');
  const on =
    (cpuModel: string, cores = 2) =>
    (r: ReturnType<typeof probedRuns>[number]) => ({ ...r, bench: { ...r.bench, host: { cpuModel, cores, kernel: 'Linux 6.1.0', memoryBytes: 2 ** 33 } } });
  const epyc = probedRuns().map(on('AMD EPYC'));
  const first = poolRuns(emptyModel(config), config, spreadSides({ baseline: epyc.slice(0, 2), candidate: epyc.slice(2, 4) }, true), { startSpeedFit: true })!;
  const fit = usersEntry(first).speed!;
  assert.deepEqual(
    [fit.probeMs, fit.machine],
    [
      { min: 57, max: 66 },
      { cpuModel: 'AMD EPYC', cores: 2 },
    ],
  );
  noiseModelFileSchema.parse(first);
  // A gate on the same machine refines the fit, and its probes (59-70 ms) widen the range.
  const refined = usersEntry(poolRuns(first, config, { baseline: epyc.slice(4), candidate: [] })).speed!;
  assert.equal(refined.df, 3);
  assert.deepEqual(
    [refined.probeMs, refined.machine],
    [
      { min: 57, max: 70 },
      { cpuModel: 'AMD EPYC', cores: 2 },
    ],
  );
  // A gate on another machine: the decision does not apply the fit there, so its runs do not refine it.
  const xeon = probedRuns().map(on('Intel(R) Xeon(R) Processor', 4));
  assert.deepEqual(usersEntry(poolRuns(first, config, { baseline: xeon.slice(4), candidate: [] })).speed, fit);
  // A calibration there starts that machine's own fit, in place of the held one.
  const replaced = usersEntry(
    poolRuns(first, config, spreadSides({ baseline: xeon.slice(0, 3), candidate: xeon.slice(3) }, true), { startSpeedFit: true }),
  ).speed!;
  assert.deepEqual([replaced.runs, replaced.probeMs, replaced.machine], [6, { min: 57, max: 70 }, { cpuModel: 'Intel(R) Xeon(R) Processor', cores: 4 }]);
  assert.match(replaced.source, /^least squares over 6 runs .*\(in place of the fit measured on AMD EPYC \(2 cores\), another machine\)$/);
  // Runs that name no machine: the range is kept, the fit names no machine.
  const anonymous = usersEntry(
    poolRuns(emptyModel(config), config, spreadSides({ baseline: probedRuns().slice(0, 3), candidate: probedRuns().slice(3) }, true), { startSpeedFit: true }),
  ).speed!;
  assert.deepEqual([anonymous.probeMs, anonymous.machine], [{ min: 57, max: 70 }, undefined]);
});

test("a calibration records the capacity it found, with the machine speed at set-up; a gate of two versions keeps the model's", async () => {
  const config = await loadGateConfig('examples/local-synapse.yml');
  const probe = (cpuMs: number) => ({ workload: 'python-json-v1@setup CPython 3.11.7', samples: 5, cpuMsMedian: cpuMs, cpuMsMin: cpuMs, cpuMsMax: cpuMs });
  const at = (runs: typeof baseline, ms: number[]) =>
    runs.map((r, i) => ({ ...r, converged: true, bench: { ...r.bench, setupProbe: probe(ms[i] as number) } }));
  const calibrated = noiseModelFileSchema.parse(
    poolRuns(emptyModel(config), config, spreadSides({ baseline: at(baseline, [40, 41, 42]), candidate: at(candidate, [39, 40, 44]) }, true), {
      measureCapacity: true,
    }),
  );
  // The median of [100, 110, 90, 100, 105, 95] and of the probes.
  assert.deepEqual(calibrated.capacity, [
    {
      test: 'unbounded',
      users: 100,
      kind: 'measured',
      runs: 6,
      probe: { workload: 'python-json-v1@setup CPython 3.11.7', cpuMs: 40.5 },
      source: 'median supported users of 6 converged runs of 1.162.0, with the machine speed at set-up',
    },
  ]);
  // A run that did not converge, or a bench without the probe, leaves the figure unscaled or out.
  const someUnprobed = noiseModelFileSchema.parse(
    poolRuns(
      emptyModel(config),
      config,
      spreadSides({ baseline: at(baseline, [40, 41, 42]), candidate: candidate.map((r) => ({ ...r, converged: true })) }, true),
      { measureCapacity: true },
    ),
  );
  assert.equal(someUnprobed.capacity?.[0]?.probe, undefined);
  const refined = poolRuns(calibrated, config, {
    baseline: at(baseline, [50, 50, 50]),
    candidate: at(candidate, [50, 50, 50]).map((r) => ({ ...r, target: { ...r.target, version: '1.163.2' } })),
  });
  assert.deepEqual(refined?.capacity, calibrated.capacity);
});
