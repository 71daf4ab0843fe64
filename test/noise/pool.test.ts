import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { loadGateConfig } from '../../src/config/load.ts';
import { emptyModel, poolRuns } from '../../src/noise/pool.ts';
import { noiseModelFileSchema } from '../../src/noise/schema.ts';
import { checkProfile } from '../../src/noise/model.ts';
import { unbounded } from '../support/runs.ts';

const close = (actual: number, expected: number, tol: number) => assert.ok(Math.abs(actual - expected) <= tol, `expected ${expected} ± ${tol}, got ${actual}`);

const baseline = [100, 110, 90].map((u, i) => unbounded('1.162.0', u, i));
const candidate = [100, 105, 95].map((u, i) => unbounded('1.162.0', u, i));

test('calibration: each side\'s spread around its own mean, pooled (2 × 2 df)', async () => {
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
  // Python: sqrt((4 · 0.03316² + 4 · 0.0793105²) / 8), the shipped entry being 0.03316 with 4 df
  close(before.sdLog, 0.03316, 1e-5);
  close(after.sdLog, Math.sqrt((4 * before.sdLog ** 2 + 4 * 0.07931045406965312 ** 2) / 8), 1e-5);
  close(after.sdLog, 0.06079, 2e-5);
  assert.equal(after.df, 8);
  assert.equal(after.runs, 12);
});

test('one run per side measures no spread: nothing is pooled', async () => {
  const config = await loadGateConfig('examples/local-synapse.yml');
  assert.equal(poolRuns(emptyModel(config), config, { baseline: baseline.slice(0, 1), candidate: candidate.slice(0, 1) }), null);
});
