import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadGateConfig } from '../../src/config/load.ts';
import { loadNoiseModel } from '../../src/noise/model.ts';
import { chainRates, otavaRates, simulateChain, syntheticGate } from '../../src/compare/creep-simulate.ts';
import { judgeChained, judgeCreep, needsDirect, withCreep } from '../../src/compare/creep.ts';
import { decisionSetupOf } from '../../src/compare/simulate.ts';
import { materialLog, sprtRule } from '../../src/compare/sequential.ts';
import { readHistory } from '../../src/history/store.ts';
import { otavaChangePoints, otavaPython } from '../../src/history/otava.ts';
import { defaultCacheDir } from '../../src/run/options.ts';
import { seededRandom } from '../../src/util/random.ts';

const CONFIG = 'examples/local-synapse-duet.yml';

async function profile() {
  const config = { ...(await loadGateConfig(CONFIG)), creep: { anchor: 'r0' } };
  return { config, model: await loadNoiseModel('noise/local-synapse-duet.json', config) };
}

const step = (logRatio: number, se: number, df = 12) => ({
  baseline: 'a',
  candidate: 'b',
  checks: [{ id: 'u', metric: 'Supported users', test: 'unbounded', worse: 'lower' as const, gating: true, tolerancePct: 5, logRatio, se, df }],
});

test('the chained stage is the step rule on one difference: it fails a cumulative loss beyond the material change, passes a small one, and leaves a wide chain undecided', () => {
  const rule = sprtRule(0.005, 0.005);
  const m = materialLog(10, 'lower');
  const chain = (n: number, each: number, se: number) => Array.from({ length: n }, () => step(each, se));
  const fail = judgeChained(chain(6, Math.log(0.98), 0.01), 'u', 'lower', m, rule, 0.95);
  assert.ok(!('missing' in fail) && fail.state === 'fail', JSON.stringify(fail));
  const pass = judgeChained(chain(2, 0, 0.01), 'u', 'lower', m, rule, 0.95);
  assert.ok(!('missing' in pass) && pass.state === 'pass');
  // The same small change over eight steps: each adds its variance, and the chain can no longer tell.
  const wide = judgeChained(chain(8, 0, 0.02), 'u', 'lower', m, rule, 0.95);
  assert.ok(!('missing' in wide) && wide.state === 'undecided');
  assert.ok(wide.interval[1] - wide.interval[0] > pass.interval[1] - pass.interval[0]);
  assert.deepEqual(judgeChained([step(0, 0.01), { ...step(0, 0.01), checks: [] }], 'u', 'lower', m, rule, 0.95), {
    missing: 'the step a → b recorded no estimate of it',
  });
});

test('a chain of small passing steps fails the creep check on its own line; a creep fail fails a gate whose step passed', async () => {
  const { config, model } = await profile();
  const setup = decisionSetupOf(config, model);
  const random = seededRandom(5);
  const history = await readHistory(join('test/fixtures/history/good'), { product: 'synapse', profile: 'synapse-local-duet' });
  // The recorded line lost 6.2 % over three passing steps; this step loses 3 % more, and passes too.
  const gate = syntheticGate(config, setup, 3, '1.163.2', '1.164.0', random);
  assert.equal(gate.verdict, 'pass');
  const chained = judgeCreep(gate, { setting: '1.160.0', history }, 0.95);
  assert.deepEqual(chained.chain, ['1.160.0', '1.161.0', '1.162.0', '1.163.2', '1.164.0']);
  // Four steps' variances: the chain cannot tell −9 % from the 10 % material loss, so the anchor is measured directly.
  assert.equal(chained.checks.find((c) => c.id === 'unbounded.supportedUsers')?.method, 'chained');
  assert.ok(needsDirect(chained));
  const half = { ...setup, errorRates: { falseFail: 0.005, falsePass: 0.005 } };
  const direct = syntheticGate(config, half, 11, '1.160.0', '1.164.0', random);
  const creep = judgeCreep(gate, { setting: '1.160.0', history, direct: { verdict: direct, report: 'creep-anchor' } }, 0.95);
  assert.equal(creep.verdict, 'fail', JSON.stringify(creep.checks));
  assert.match(creep.line, /^each step passed; the change since 1\.160\.0 is −1\d\.\d %: supported users \(unbounded\), beyond its material change$/);
  const judged = withCreep(gate, creep);
  assert.equal(judged.verdict, 'fail');
  assert.equal(judged.summary, `Creep since 1.160.0: ${creep.line}`);
  // The anchor is the baseline: nothing to chain, the step check is the creep check.
  assert.equal(judgeCreep(gate, { setting: '1.163.2', history }, 0.95).verdict, 'skipped');
  assert.equal(withCreep(gate, judgeCreep(gate, { setting: '1.150.*', history }, 0.95)).verdict, 'pass', 'no anchor: nothing to judge, the step stands');
});

test('without a recorded path the creep check needs the direct measurement, and takes its verdict; without one it is inconclusive, never a pass', async () => {
  const { config, model } = await profile();
  const setup = decisionSetupOf(config, model);
  const random = seededRandom(7);
  const gate = syntheticGate(config, setup, 0, '1.163.2', '1.164.0', random);
  const alone = judgeCreep(gate, { setting: '1.150.0', history: [] }, 0.95);
  assert.equal(alone.verdict, 'inconclusive');
  assert.ok(needsDirect(alone));
  assert.equal(withCreep(gate, alone).verdict, 'inconclusive');
  const half = { ...setup, errorRates: { falseFail: 0.005, falsePass: 0.005 } };
  const direct = syntheticGate(config, half, 12, '1.150.0', '1.164.0', random);
  const measured = judgeCreep(gate, { setting: '1.150.0', history: [], direct: { verdict: direct, report: 'creep-anchor' } }, 0.95);
  assert.equal(measured.checks.find((c) => c.id === 'unbounded.supportedUsers')?.method, 'direct');
  assert.equal(measured.verdict, 'fail');
  assert.equal(measured.direct?.report, 'creep-anchor');
});

test('simulated chains (small trial count; npm run creep-rates runs 1000): −2 % a release fails the creep check by the release where the loss passes the material change; an unchanged chain passes it', async () => {
  const { config, model } = await profile();
  const losing = chainRates(config, model, { trials: 40, seed: 11, stepsPct: Array(8).fill(2) });
  assert.equal(losing.materialAt, 6);
  assert.ok(losing.stepsPassed >= 95, String(losing.stepsPassed));
  assert.ok(losing.creepFailedByMaterial >= 90, String(losing.creepFailedByMaterial));
  const unchanged = chainRates(config, model, { trials: 40, seed: 12, stepsPct: Array(8).fill(0) });
  assert.equal(unchanged.creepFailedAny, 0);
  assert.ok(unchanged.creepPassedAll >= 90, String(unchanged.creepPassedAll));
  // Every release's record carries its creep line, as the history keeps it.
  const { records } = simulateChain(config, model, [0, 0], seededRandom(1));
  assert.equal(records[1]?.creep?.anchor, 'r0');
});

test('Apache Otava names the release of a real shift in a chained series, and none in a flat one', async () => {
  const python = otavaPython(defaultCacheDir());
  const flat = [1, 1.004, 0.998, 1.002, 0.999, 1.003, 1.0, 0.997, 1.001];
  const shifted = flat.map((v, i) => (i >= 4 ? v * 0.94 : v));
  const answer = await otavaChangePoints(python, [
    { id: 'shifted', values: shifted, minMagnitude: 0.05 },
    { id: 'flat', values: flat, minMagnitude: 0.05 },
  ]);
  assert.ok(!('unavailable' in answer), `Otava is needed here (bash scripts/setup.sh installs it): ${JSON.stringify(answer)}`);
  assert.deepEqual(
    answer.changePoints.shifted?.map((c) => c.index),
    [4],
  );
  assert.ok((answer.changePoints.shifted?.[0]?.changePct ?? 0) < -5);
  assert.deepEqual(answer.changePoints.flat, []);
  // Through the decision code, at the bench's noise: a −6 % step among unchanged releases (npm run creep-rates runs more).
  const { config, model } = await profile();
  const rates = await otavaRates(config, model, python, { trials: 20, seed: 3, releases: 8, at: 4, shiftPct: 6 });
  assert.ok(!('unavailable' in rates));
  assert.ok(rates.named >= 50, JSON.stringify(rates));
  assert.ok(rates.falseNamed <= 20, JSON.stringify(rates));
});
