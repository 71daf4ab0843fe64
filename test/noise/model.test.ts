import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadGateConfig } from '../../src/config/load.ts';
import { ASSUMED_PRIOR_DF, dfFor, loadNoiseModel, sdLogFor } from '../../src/noise/model.ts';
import { assumedSdLog } from '../../src/noise/profile.ts';
import { InputError } from '../../src/util/errors.ts';
import { noiseModels } from '../../scripts/make-noise-models.ts';

test('the shipped noise models are what the script derives from the recorded runs (npm run noise-models)', async () => {
  for (const [path, model] of Object.entries(await noiseModels())) {
    assert.deepEqual(JSON.parse(await readFile(path, 'utf8')), model, `${path} is stale: run npm run noise-models`);
  }
});

test('the local model is measured (supported users: four loadgate calibrations of 6, 6, 8 and 8 A/A runs, pooled) and the AWS one assumed at ~1.76 % per run', async () => {
  const local = await loadNoiseModel('noise/local-synapse.json', await loadGateConfig('examples/local-synapse.yml'));
  assert.equal(local.kind, 'measured');
  assert.equal(local.measuredAt, '2026-11-25');
  const users = local.file!.entries.find((e) => e.metric === 'supportedUsers')!;
  assert.equal(users.runs, 28);
  assert.equal(users.df, 24);
  assert.match(
    users.source,
    /^pooled by degrees of freedom: reports\/calibration\/local-synapse-1\.162\.0-unbounded: loadgate calibrate.*; reports\/calibration\/local-synapse-1\.162\.0-unbounded-night: loadgate calibrate.*; reports\/calibration\/local-synapse-1\.162\.0-unbounded-probe: loadgate calibrate.*; reports\/calibration\/local-synapse-1\.162\.0-unbounded-window-probe: loadgate calibrate/,
  );
  assert.doesNotMatch(users.source, /pooled by degrees of freedom: pooled/);
  // The committed runs give the committed figure. An A/A calibration's six runs are one
  // group (its sides are one version): sd of ln(users) around their mean, 5 df each; the
  // two calibrations pool by df. Python: statistics.stdev(map(math.log, …)) of
  // [52.56, 51.97, 52.93, 49.13, 49.99, 50.64] = 0.029698 and of
  // [53.33, 50.51, 47.52, 48.96, 49.38, 51.74] = 0.041270 and of the eight runs with the
  // speed probe [75.45, 72.13, 74.11, 68.97, 69.67, 67.81, 72.87, 72.44] = 0.036902 and of the
  // eight with the window probe [62.23, 64.43, 62.38, 62.63, 69, 60.98, 64.77, 71.27] = 0.054660;
  // sqrt((5·a² + 5·b² + 7·c² + 7·d²)/24) = 0.042511
  assert.ok(Math.abs(users.sdLog - 0.04251) < 0.00001, String(users.sdLog));
  // The speed fit is the window probe's (the last calibration), in place of the whole-run
  // probe's, which the bench no longer takes: slope −2.04, t = −4.06 on 6 df, so the decision
  // uses it (test/compare/speed-adjust.test.ts).
  assert.deepEqual([users.speed?.runs, users.speed?.df, users.speed?.workload], [8, 6, 'python-json-v1@window']);
  assert.match(users.speed!.source, /in place of the fit of python-json-v1, a probe the bench no longer takes/);
  // Where it was measured, from the calibration's committed runs: their probe medians ran
  // 45.37-48.51 ms, all on one 2-core AMD EPYC VM; the decision applies it nowhere else.
  assert.deepEqual(
    [users.speed?.probeMs, users.speed?.machine],
    [
      { min: 45.37, max: 48.51 },
      { cpuModel: 'AMD EPYC', cores: 2 },
    ],
  );
  const aws = await loadNoiseModel('noise/aws-mattermost.json', await loadGateConfig('examples/aws-mattermost-sequential.yml'));
  assert.equal(aws.kind, 'assumed');
  assert.ok(Math.abs(aws.file!.entries.find((e) => e.metric === 'supportedUsers')!.sdLog - 0.02227) < 0.0001);
});

test('a model of another profile, test shape or schema version is bad input naming the mismatch', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lg-noise-'));
  try {
    const config = await loadGateConfig('examples/local-synapse.yml');
    const good = JSON.parse(await readFile('noise/local-synapse.json', 'utf8'));
    const cases: Array<[string, unknown, RegExp]> = [
      ['profile', { ...good, profile: { ...good.profile, name: 'other' } }, /noise model is for profile "other", the config is "synapse-local"/],
      [
        'shape',
        { ...good, profile: { ...good.profile, tests: { ...good.profile.tests, unbounded: '0000000000000000' } } },
        /measured with other test shapes \(test unbounded differs from the model's\)/,
      ],
      [
        'old shape',
        { ...good, profile: { ...good.profile, tests: undefined, hash: '0000000000000000' } },
        /measured with other test shapes \(profile hash 0000000000000000/,
      ],
      ['version', { ...good, schemaVersion: 2 }, /schemaVersion is 2, this loadgate reads 1/],
      ['field', { ...good, entries: [{ ...good.entries[0], sdLog: -1 }] }, /entries\[0\]\.sdLog/],
    ];
    for (const [name, data, message] of cases) {
      const file = join(dir, `${name}.json`);
      await writeFile(file, JSON.stringify(data));
      await assert.rejects(loadNoiseModel(file, config), (e: unknown) => e instanceof InputError && message.test(e.message), name);
    }
    await assert.rejects(loadNoiseModel(join(dir, 'missing.json'), config), /cannot read .* run loadgate calibrate/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a gating check the model has no entry for is judged under the assumed prior and named; an entry the config no longer gates is unused', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lg-noise-'));
  try {
    const config = await loadGateConfig('examples/local-synapse.yml');
    const good = JSON.parse(await readFile('noise/local-synapse.json', 'utf8')) as {
      profile: { metrics: string[] };
      entries: Array<{ test: string; metric: string }>;
    };
    // Measured before bounded.apiAvg gated: no entry, and the profile's metric set lacks it.
    const older = {
      ...good,
      profile: { ...good.profile, metrics: good.profile.metrics.filter((m) => m !== 'bounded.apiAvg') },
      entries: good.entries.filter((e) => `${e.test}.${e.metric}` !== 'bounded.apiAvg'),
    };
    await writeFile(join(dir, 'older.json'), JSON.stringify(older));
    const model = await loadNoiseModel(join(dir, 'older.json'), config);
    assert.deepEqual(model.notInModel, ['bounded.apiAvg']);
    assert.ok(model.assumed.includes('bounded.apiAvg'));
    assert.equal(sdLogFor(model, config.tolerances, 'bounded', 'apiAvg'), assumedSdLog(config.tolerances, 'apiAvg'));
    assert.equal(dfFor(model, 'bounded', 'apiAvg'), ASSUMED_PRIOR_DF);
    // A config that gates one check fewer than the model measured: that entry is unused.
    const fewer = { ...config, tolerances: { ...config.tolerances, apiP99: { ...config.tolerances.apiP99, gating: false } } };
    const wider = await loadNoiseModel('noise/local-synapse.json', fewer);
    assert.equal(wider.notInModel, undefined);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
