import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { compareRuns } from '../../src/compare/compare-runs.ts';
import { loadGateConfig } from '../../src/config/load.ts';
import { modelOf } from '../../src/noise/model.ts';
import { noiseModelFileSchema, type SpeedFit } from '../../src/noise/schema.ts';
import { speedAdjust } from '../../src/compare/speed-adjust.ts';
import { renderMarkdown } from '../../src/report/markdown.ts';
import type { RunResult } from '../../src/results/schema.ts';
import { unbounded } from '../support/runs.ts';

const WORKLOAD = 'python-json-v1 CPython 3.11.2';
const FIT: SpeedFit = { workload: 'python-json-v1', slope: -0.8, sxx: 0.05, sdLog: 0.02, runs: 8, df: 6, source: 'test' };

async function setupWith(fit: SpeedFit | undefined) {
  const config = await loadGateConfig('examples/local-synapse.yml');
  const file = noiseModelFileSchema.parse(JSON.parse(await readFile('noise/local-synapse.json', 'utf8')));
  // The shipped entry's own fit (the window probe's) is replaced, or removed for "no fit".
  const entries = file.entries.map((e) => {
    if (e.metric !== 'supportedUsers') return e;
    const { speed: _shipped, ...rest } = e;
    return fit ? { ...rest, speed: fit } : rest;
  });
  return { config, setup: { model: modelOf({ ...file, entries }, 'noise/local-synapse.json'), minPairs: 2, maxPairs: 6 } };
}

function probed(run: RunResult, cpuMs: number, workload = WORKLOAD): RunResult {
  return { ...run, speedProbe: { workload, samples: 40, cpuMsMedian: cpuMs, cpuMsMin: cpuMs * 0.97, cpuMsMax: cpuMs * 1.05 } };
}

/** Supported users that follow the machine's speed exactly: K · (probe / 60)^slope. */
const atSpeed = (k: number, ms: number) => k * (ms / 60) ** FIT.slope;

// The machine's speed as the probe saw it during four runs on 2026-11-25 (aa-s8-1, in
// pair order: baseline then candidate): it moved by a fifth within pair 1.
const PROBES = { baseline: [70.4, 63.0], candidate: [57.7, 68.3] };

test('an A/A gate whose users follow the probe exactly: noisy as measured, unchanged at one speed', async () => {
  const runs = (side: 'baseline' | 'candidate') => PROBES[side].map((ms, i) => probed(unbounded('1.162.0', atSpeed(50, ms), i), ms));
  const raw = await setupWith(undefined);
  const before = compareRuns(runs('baseline'), runs('candidate'), raw.config.tolerances, raw.setup);
  // Pair differences of +16.9 % and −6.2 %: far wider than the model's noise, so no decision.
  assert.equal(before.verdict.verdict, 'inconclusive');
  assert.equal(before.verdict.checks.find((c) => c.id === 'unbounded.supportedUsers')!.speed, undefined);

  const adjusted = await setupWith(FIT);
  const after = compareRuns(runs('baseline'), runs('candidate'), adjusted.config.tolerances, adjusted.setup);
  const users = after.verdict.checks.find((c) => c.id === 'unbounded.supportedUsers')!;
  assert.ok(Math.abs(users.deltaPct!) < 1e-9, String(users.deltaPct));
  assert.equal(users.verdict, 'pass');
  assert.ok(users.speed?.adjusted);
  if (users.speed?.adjusted) {
    assert.equal(users.speed.slope, -0.8);
    // The fit's 2 % updated by these runs' own pair differences, which sit exactly on the fit.
    assert.ok(users.speed.sdPct > 1.5 && users.speed.sdPct <= 2, String(users.speed.sdPct));
    // Geometric means of each side's probes.
    assert.equal(users.speed.baselineProbeMs, Number(Math.sqrt(70.4 * 63.0).toFixed(2)));
    assert.equal(users.speed.candidateProbeMs, Number(Math.sqrt(57.7 * 68.3).toFixed(2)));
    // Measured: the candidate's runs were on the faster machine, so it served more users.
    assert.ok(users.speed.rawDeltaPct > 3, String(users.speed.rawDeltaPct));
  }
  const md = renderMarkdown(after, [], adjusted.config.tolerances.listing);
  assert.match(
    md,
    /\*\*Machine speed\*\*: Supported users \(unbounded\) is judged at one machine speed\. The CPU probe took 66\.6 ms in the baseline's runs and 62\.78 ms in the candidate's \(geometric means, −5\.7%\)/,
  );
  assert.match(
    md,
    /moving −0\.80% per 1% of probe time, so the measured \+4\.84% is 0\.00% at equal speed, judged at \d\.\d+% per run \(the noise model's around its fit, updated by these runs' own pair differences\)\. The Checks table shows it at one speed too/,
  );
  assert.match(md, /\| Supported users \(at one machine speed\) \| unbounded \|/);
  assert.match(md, /\| Test \| 1\.162\.0 \| 1\.162\.0 \| Delta \| Delta at one machine speed \|/);
  assert.match(md, /\| unbounded \| 46\.0 \| 48\.3 \| \+4\.84% \| [+−]?0\.00% \|/);
});

test("the slope's uncertainty is added to the evidence: σ²/sxx times the sides' mean probe difference, squared", () => {
  const adjusted = speedAdjust({ baseline: [50, 51], candidate: [52, 49] }, { ...PROBES, workload: WORKLOAD }, FIT);
  assert.ok(!('skipped' in adjusted));
  if ('skipped' in adjusted) return;
  const slopeVar = 0.02 ** 2 / 0.05;
  const after1 = Math.log(57.7) - Math.log(70.4);
  const after2 = (Math.log(57.7) + Math.log(68.3)) / 2 - (Math.log(70.4) + Math.log(63.0)) / 2;
  assert.ok(Math.abs(adjusted.extraVariance[0]! - slopeVar * after1 ** 2) < 1e-15);
  assert.ok(Math.abs(adjusted.extraVariance[1]! - slopeVar * after2 ** 2) < 1e-15);
  // Each value moved by exp(−slope · (ln p − mean ln p)) = (p / geometric mean)^0.8.
  const ref = Math.exp((Math.log(70.4) + Math.log(63.0) + Math.log(57.7) + Math.log(68.3)) / 4);
  assert.ok(Math.abs(adjusted.candidate[0]! - 52 * (57.7 / ref) ** 0.8) < 1e-12);
});

test('a real loss on an unchanged machine is judged as measured: the adjustment moves nothing', async () => {
  const { config, setup } = await setupWith(FIT);
  const ms = [61, 61, 61];
  const comparison = compareRuns(
    [50, 50.6, 49.8].map((u, i) => probed(unbounded('1.162.0', u, i), ms[i]!)),
    [44, 44.5, 43.6].map((u, i) => probed(unbounded('1.163.0', u, i), ms[i]!)),
    config.tolerances,
    setup,
  );
  const users = comparison.verdict.checks.find((c) => c.id === 'unbounded.supportedUsers')!;
  assert.equal(comparison.verdict.verdict, 'fail');
  assert.ok(users.speed?.adjusted);
  if (users.speed?.adjusted) assert.ok(Math.abs(users.speed.rawDeltaPct - users.deltaPct!) < 0.01, JSON.stringify(users));
});

test('a loss the probe cannot explain is not fitted away: the candidate ran on a faster machine and still served fewer users', async () => {
  const { config, setup } = await setupWith(FIT);
  // The candidate's runs had a 5 % faster machine (the fit expects 4 % more users) and
  // served 8 % fewer: at one speed that is about −11.6 %.
  const comparison = compareRuns(
    [50, 50.4, 49.7].map((u, i) => probed(unbounded('1.162.0', u, i), 63)),
    [46, 46.3, 45.9].map((u, i) => probed(unbounded('1.163.0', u, i), 60)),
    config.tolerances,
    setup,
  );
  const users = comparison.verdict.checks.find((c) => c.id === 'unbounded.supportedUsers')!;
  assert.ok(users.deltaPct! < -11 && users.deltaPct! > -12.5, String(users.deltaPct));
  assert.equal(comparison.verdict.verdict, 'fail');
});

test('a candidate under a CPU quota whose probe reads faster is credited the other way: its loss at one speed is larger than measured', async () => {
  const { config, setup } = await setupWith(FIT);
  const quota = (run: RunResult): RunResult => ({ ...run, target: { ...run.target, cpuQuota: 0.88 } });
  const comparison = compareRuns(
    [50, 50.6, 49.8].map((u, i) => probed(unbounded('1.162.0', u, i), 62)),
    [44, 44.5, 43.6].map((u, i) => quota(probed(unbounded('1.162.0', u, i), 60))),
    config.tolerances,
    setup,
  );
  const users = comparison.verdict.checks.find((c) => c.id === 'unbounded.supportedUsers')!;
  assert.equal(comparison.verdict.verdict, 'fail');
  assert.ok(users.speed?.adjusted);
  if (users.speed?.adjusted) assert.ok(users.deltaPct! < users.speed.rawDeltaPct - 2, JSON.stringify(users));
});

test('runs whose probes differ in interpreter, or lack one, are judged as measured, and the check says why', async () => {
  const { config, setup } = await setupWith(FIT);
  const base = [50, 50.5].map((u, i) => probed(unbounded('1.162.0', u, i), 60));
  const other = [50.2, 49.9].map((u, i) => probed(unbounded('1.162.0', u, i), 60, 'python-json-v1 CPython 3.12.1'));
  const mixed = compareRuns(base, other, config.tolerances, setup);
  const users = mixed.verdict.checks.find((c) => c.id === 'unbounded.supportedUsers')!;
  assert.deepEqual(users.speed, {
    adjusted: false,
    why: "the runs' speed probes ran different workloads or interpreters (python-json-v1 CPython 3.11.2; python-json-v1 CPython 3.12.1)",
  });
  const none = compareRuns(
    base,
    [50.2, 49.9].map((u, i) => unbounded('1.162.0', u, i)),
    config.tolerances,
    setup,
  );
  const noProbe = none.verdict.checks.find((c) => c.id === 'unbounded.supportedUsers')!;
  assert.deepEqual(noProbe.speed, { adjusted: false, why: '1.162.0 unbounded #0, 1.162.0 unbounded #1 carry no speed probe' });
  assert.match(
    renderMarkdown(mixed, [], config.tolerances.listing),
    /\*\*Machine speed\*\*: Supported users \(unbounded\) is judged as measured, at the model's unadjusted noise: the runs' speed probes ran different workloads/,
  );
});

test("a fit whose slope is not clear of zero is not used: the check is judged as measured, at the entry's own σ, and says why", async () => {
  // Slope −0.8 with a standard error of 0.02/√0.0004 = 1: t = 0.8 on 6 df, far below 2.45.
  const { config, setup } = await setupWith({ ...FIT, sxx: 0.0004 });
  const runs = (side: 'baseline' | 'candidate') => PROBES[side].map((ms, i) => probed(unbounded('1.162.0', atSpeed(50, ms), i), ms));
  const users = compareRuns(runs('baseline'), runs('candidate'), config.tolerances, setup).verdict.checks.find((c) => c.id === 'unbounded.supportedUsers')!;
  assert.deepEqual(users.speed, {
    adjusted: false,
    why: "the noise model's speed fit does not show that the probe explains it (slope -0.80 ± 1.00, t = 0.80 < 2.45 on 6 df; 8 runs)",
  });
  assert.ok(users.deltaPct! > 4, 'judged as measured');
});

/** The shipped model as it is, with its own fit (the window probe's: slope −2.04, measured at 45.4–48.5 ms on AMD EPYC, 2 cores). */
async function shippedSetup() {
  const config = await loadGateConfig('examples/local-synapse.yml');
  const file = noiseModelFileSchema.parse(JSON.parse(await readFile('noise/local-synapse.json', 'utf8')));
  return { config, file, setup: { model: modelOf(file, 'noise/local-synapse.json'), minPairs: 3, maxPairs: 6 } };
}

/** The shipped model with its fit stripped of where it was measured, as a model file written before it was recorded. */
function unscoped(file: Awaited<ReturnType<typeof shippedSetup>>['file']) {
  const entries = file.entries.map((e) => {
    if (!e.speed) return e;
    const { probeMs: _range, machine: _machine, ...fit } = e.speed;
    return { ...e, speed: fit };
  });
  return { model: modelOf({ ...file, entries }, 'noise/local-synapse.json'), minPairs: 3, maxPairs: 6 };
}

const usersCheck = (comparison: ReturnType<typeof compareRuns>) => comparison.verdict.checks.find((c) => c.id === 'unbounded.supportedUsers')!;
const onHost = (run: RunResult, cpuModel: string, cores = 2): RunResult => ({
  ...run,
  bench: { ...run.bench, host: { cpuModel, cores, kernel: 'Linux 6.1.0', memoryBytes: 8 * 2 ** 30 } },
});
const window = 'python-json-v1@window CPython 3.11.7';
const sideRuns = (version: string, users: readonly number[], probes: readonly number[], host?: string) =>
  users.map((u, i) => {
    const run = probed(unbounded(version, u, i), probes[i]!, window);
    return host ? onHost(run, host) : run;
  });

test('a fit applied to runs whose probes are 2.5 times slower than the speeds it was measured at is skipped, and the check says so with the figures', async () => {
  const { config, file, setup } = await shippedSetup();
  // A slower 2-core VM: the probe at 114-126 ms, the shipped fit's runs at 45.4-48.5 ms. The
  // candidate served 5.6 % fewer users, and its runs met a 7.2 % slower probe.
  const baseline = sideRuns('1.162.0', [60, 61, 59.5], [114, 116, 118], 'AMD EPYC');
  const candidate = sideRuns('1.163.0', [56.6, 57.5, 56.2], [122, 124, 126], 'AMD EPYC');
  const comparison = compareRuns(baseline, candidate, config.tolerances, setup);
  const users = usersCheck(comparison);
  assert.deepEqual(users.speed, {
    adjusted: false,
    why: "the runs' speed probe lies outside the noise model's speed fit (probe 114.0–126.0 ms against the fit's 45.4–48.5 ms on AMD EPYC (2 cores), more than 10 % beyond either end): the fit is not applied to speeds it was not measured at; a calibration at these speeds (loadgate calibrate) gives a fit that covers them",
  });
  // Judged as measured: the loss stands.
  assert.ok(users.deltaPct! < -5 && users.deltaPct! > -6.5, String(users.deltaPct));
  const md = renderMarkdown(comparison, [], config.tolerances.listing);
  assert.match(
    md,
    /\*\*Machine speed\*\*: Supported users \(unbounded\) is judged as measured, at the model's unadjusted noise: the runs' speed probe lies outside the noise model's speed fit \(probe 114\.0–126\.0 ms against the fit's 45\.4–48\.5 ms on AMD EPYC \(2 cores\)/,
  );
  // What the fit did to these runs when nothing checked where it was measured: a gain.
  const before = usersCheck(compareRuns(baseline, candidate, config.tolerances, unscoped(file)));
  assert.ok(before.speed?.adjusted && before.deltaPct! > 5, JSON.stringify(before));
});

test('a fit applied within the speeds it was measured at, or a little beyond, still adjusts, with the same numbers as a fit that records no range', async () => {
  const { config, file, setup } = await shippedSetup();
  // 44-52 ms: the last is 7 % above the fit's highest run, within the 10 % margin.
  const baseline = sideRuns('1.162.0', [62, 64.5, 61], [46, 48.5, 44], 'AMD EPYC');
  const candidate = sideRuns('1.162.0', [63, 60.5, 58], [45.5, 47, 52], 'AMD EPYC');
  const scoped = compareRuns(baseline, candidate, config.tolerances, setup);
  assert.ok(usersCheck(scoped).speed?.adjusted, JSON.stringify(usersCheck(scoped).speed));
  assert.deepEqual(scoped.verdict, compareRuns(baseline, candidate, config.tolerances, unscoped(file)).verdict);
  // Runs that name no machine are checked by the range alone.
  const anonymous = (runs: RunResult[]) => runs.map((r) => ({ ...r, bench: { kind: r.bench.kind, versions: r.bench.versions } }));
  assert.deepEqual(compareRuns(anonymous(baseline), anonymous(candidate), config.tolerances, setup).verdict.checks, scoped.verdict.checks);
});

test('a fit measured on another machine is skipped, even at speeds within its range', async () => {
  const { config, setup } = await shippedSetup();
  const baseline = sideRuns('1.162.0', [62, 64.5, 61], [46, 48.5, 47], 'Intel(R) Xeon(R) Processor');
  const candidate = sideRuns('1.162.0', [63, 60.5, 62], [45.5, 47, 48], 'Intel(R) Xeon(R) Processor');
  assert.deepEqual(usersCheck(compareRuns(baseline, candidate, config.tolerances, setup)).speed, {
    adjusted: false,
    why: "the runs ran on Intel(R) Xeon(R) Processor (2 cores), not the machine the noise model's speed fit was measured on (probe 45.5–48.5 ms against the fit's 45.4–48.5 ms on AMD EPYC (2 cores)): a fit is not carried to another machine; a calibration on this one (loadgate calibrate) gives it a fit of its own",
  });
  // Same model name, other core count: another machine too.
  const fourCores = (runs: RunResult[]) => runs.map((r) => onHost(r, 'AMD EPYC', 4));
  const wider = usersCheck(compareRuns(fourCores(baseline), fourCores(candidate), config.tolerances, setup));
  assert.match(wider.speed?.adjusted === false ? wider.speed.why : '', /^the runs ran on AMD EPYC \(4 cores\), not the machine/);
});
