import { test } from 'node:test';
import assert from 'node:assert/strict';
import { goalShortfalls, simulate } from '../../src/compare/simulate.ts';
import { loadGateConfig } from '../../src/config/load.ts';
import { loadNoiseModel } from '../../src/noise/model.ts';

/**
 * The goals for each shipped profile at its noise model, all gating checks
 * together, through the gate's own decision (seeded, so the figures are fixed).
 */
async function profile(name: string) {
  const config = await loadGateConfig(`examples/${name}.yml`);
  const model = await loadNoiseModel(`noise/${name}.json`, config);
  return { config, model };
}

test('AWS profile (assumed 1.8 % noise): every goal met, one pair usually decides', async () => {
  const { config, model } = await profile('aws-mattermost');
  const rows = simulate(config, model, { trials: 1000, seed: 1 });
  assert.deepEqual(goalShortfalls(rows), []);
  const users = rows.find((r) => r.kind === 'material' && r.metric === 'unbounded.supportedUsers')!;
  assert.ok(users.fail >= 95 && users.meanPairs < 1.5, JSON.stringify(users));
});

test('local profile (measured 3.3 % supported users, 7–13 % bounded latencies): error and inconclusive goals met; the ≤ 2 runs goal is missed, as stated', async () => {
  const { config, model } = await profile('local-synapse');
  const rows = simulate(config, model, { trials: 1000, seed: 1 });
  const shortfalls = goalShortfalls(rows);
  // Only the expected-runs goal is missed, and by how much is pinned so a change shows.
  assert.ok(shortfalls.length > 0 && shortfalls.every((s) => s.includes('runs per side on average')), shortfalls.join('\n'));
  const none = rows.find((r) => r.kind === 'none')!;
  assert.ok(none.fail <= 1 && none.pass >= 95 && none.inconclusive <= 5, JSON.stringify(none));
  assert.ok(none.meanPairs > 2 && none.meanPairs < 3.5, `no change: ${none.meanPairs} pairs`);
  for (const r of rows.filter((x) => x.kind === 'material')) {
    assert.ok(r.fail >= 95 && r.pass <= 1 && r.inconclusive <= 5, JSON.stringify(r));
    assert.ok(r.meanPairs < 3.5, `${r.metric}: ${r.meanPairs} pairs`);
  }
});

test('a drifting bench (3 % per run in the bad direction): the ABBA order keeps false fails in budget, candidate-always-second does not', async () => {
  for (const name of ['local-synapse', 'aws-mattermost']) {
    const { config, model } = await profile(name);
    const drift = (order: 'abba' | 'ab') => simulate(config, model, { trials: 1000, seed: 1, order, driftPct: 3 }).find((r) => r.kind === 'drift')!;
    const abba = drift('abba');
    const ab = drift('ab');
    assert.ok(abba.fail <= 1 && abba.pass >= 95, `${name} ABBA: ${JSON.stringify(abba)}`);
    assert.ok(ab.fail > 1 && ab.pass < 95, `${name} AB: ${JSON.stringify(ab)}`);
  }
});

test('loadgate simulate prints the table and the goals; --json gives the same rows', async () => {
  const { main } = await import('../../src/cli/main.ts');
  const lines: string[] = [];
  const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
  assert.equal(await main(['simulate', '--config', 'examples/aws-mattermost.yml', '--trials', '200', '--seed', '3'], io), 0);
  const text = lines.join('\n');
  assert.match(text, /\| true change +\| metric +\| pass % \| fail % \| inconclusive % \| runs\/side mean \| max \|/);
  assert.match(text, /material \(10%\) +\| unbounded\.supportedUsers/);
  lines.length = 0;
  assert.equal(await main(['simulate', '--config', 'examples/aws-mattermost.yml', '--trials', '200', '--seed', '3', '--json'], io), 0);
  const json = JSON.parse(lines.join('\n'));
  assert.equal(json.kind, 'assumed');
  assert.equal(json.rows.length, 1 + 3 * 7 + 1);
  assert.equal(await main(['simulate', '--config', 'examples/aws-mattermost.yml', '--trials', 'many'], io), 3);
});
