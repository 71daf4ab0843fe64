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

test('AWS profile (assumed 1.8 % noise): every goal of the issue met, one pair usually decides', async () => {
  const { config, model } = await profile('aws-mattermost');
  const rows = simulate(config, model, { trials: 1000, seed: 1 });
  // All but the drift row's passes (seed 1: 86.1 %; 13.4 % inconclusive, 0.5 % fail): a drift of
  // 3 % per run is 1.7 times this model's noise, and the pair differences show it (README).
  assert.deepEqual(goalShortfalls(rows), ['no change, drift 3%/run: pass 86.1% < 95%']);
  const users = rows.find((r) => r.kind === 'material' && r.metric === 'unbounded.supportedUsers')!;
  assert.ok(users.fail >= 95 && users.meanPairs < 1.5, JSON.stringify(users));
});

test('local profile (supported users 4.25 % per run, four calibrations pooled; 3.05 % at one machine speed; repeats 2): both error bounds hold; undecided gates and the pairs a decision takes fall short, as stated', async () => {
  const { config, model } = await profile('local-synapse');
  const rows = simulate(config, model, { trials: 1000, seed: 1 });
  // Seed 1: no change 96.3 % pass, 0.2 % fail, 3.5 % inconclusive, 3.10 pairs (93.0 / 0.1 / 6.9,
  // 3.33 pairs, at the 3.64 % model before the window probe's fit).
  const none = rows.find((r) => r.kind === 'none')!;
  assert.ok(none.fail <= 1 && none.pass >= 90, JSON.stringify(none));
  // A material regression on any one metric rarely passes (Wald's bound).
  for (const r of rows.filter((x) => x.kind === 'material')) assert.ok(r.pass <= 1, JSON.stringify(r));
  // A 10 % loss of supported users (seed 1: 0.0 % pass, 94.6 % fail, 5.4 % inconclusive, 3.49 pairs;
  // 0.3 / 87.2 / 12.5, 3.97 pairs, before).
  const users = rows.find((r) => r.kind === 'material' && r.metric === 'unbounded.supportedUsers')!;
  assert.ok(users.fail >= 80 && users.meanPairs > 3 && users.meanPairs < 5, `a 10 % loss at the calibrated noise: ${JSON.stringify(users)}`);
  // The shortfalls the README states, and no others: undecided gates (no change, the 10 %
  // loss, a drifting bench) and the pairs a decision takes. Never a false fail or a false pass.
  const shortfalls = goalShortfalls(rows);
  const stated = [/runs per side on average/, /^no change: (pass|inconclusive)/, /^material on unbounded\.supportedUsers: (fail|inconclusive) /, /^no change, drift 3%\/run: pass/];
  assert.ok(shortfalls.length > 0);
  assert.deepEqual(
    shortfalls.filter((s) => !stated.some((re) => re.test(s))),
    [],
  );
});

test('a drifting bench (3 % per run in the bad direction): the ABBA order keeps false fails in budget, candidate-always-second does not', async () => {
  for (const name of ['local-synapse', 'aws-mattermost']) {
    const { config, model } = await profile(name);
    const drift = (order: 'abba' | 'ab') => simulate(config, model, { trials: 1000, seed: 1, order, driftPct: 3 }).find((r) => r.kind === 'drift')!;
    const abba = drift('abba');
    const ab = drift('ab');
    const none = simulate(config, model, { trials: 1000, seed: 1 }).find((r) => r.kind === 'none')!;
    // ABBA: no false fails from the drift. On the local bench it costs nothing else; on AWS
    // (3 % per run is 1.7 × the model's noise) the pair differences alternate by ±3 % and the
    // lost passes become "cannot judge" (noisier than the model), never fails.
    assert.ok(abba.fail <= 1, `${name} ABBA: ${JSON.stringify(abba)} vs no drift ${JSON.stringify(none)}`);
    // Local, seed 1: 93.0 % pass against 96.3 % without drift (3 % per run is as large as the
    // 3.05 % the speed fit leaves), the rest inconclusive.
    if (name === 'local-synapse') assert.ok(Math.abs(abba.pass - none.pass) <= 4, `${name} ABBA: ${JSON.stringify(abba)} vs no drift ${JSON.stringify(none)}`);
    else assert.ok(abba.pass >= 80, `${name} ABBA: ${JSON.stringify(abba)}`);
    // At the local bench's noise the drift shows as passes lost to inconclusive, at the AWS
    // profile's as false fails: either way candidate-second is biased and ABBA is not.
    assert.ok(ab.fail > 1 || ab.pass < none.pass - 5, `${name} AB: ${JSON.stringify(ab)} vs no drift ${JSON.stringify(none)}`);
  }
});

test('a machine whose speed steps between pairs (6.7 % sd, both sides alike): the pair differences cancel it, so the rates are those of no change', async () => {
  for (const name of ['local-synapse', 'aws-mattermost']) {
    const { config, model } = await profile(name);
    const rows = simulate(config, model, { trials: 1000, seed: 1 });
    const none = rows.find((r) => r.kind === 'none')!;
    const step = rows.find((r) => r.kind === 'step')!;
    // Seed 1, local: 97.6 % pass against 96.3 % without steps (95.0 and 93.0 at the 3.64 %
    // model); the spread around each side's
    // mean and a line in run order (the rule until 2026-11-25) passed 62.0 %, 38.0 % "noisy".
    assert.ok(step.fail <= 1 && Math.abs(step.pass - none.pass) <= 3 && Math.abs(step.meanPairs - none.meanPairs) < 0.1, `${name}: ${JSON.stringify(step)} vs ${JSON.stringify(none)}`);
  }
});

test('a bench noisier than its model: with supported users at 3 × the model\'s noise, the local gate mostly says it cannot judge, and rarely fails an unchanged release', async () => {
  const { config, model } = await profile('local-synapse');
  const rows = simulate(config, model, { trials: 1000, seed: 1, noiseScale: 3, noiseScaleMetric: 'unbounded.supportedUsers' });
  // Seed 1 at the shipped model (3.05 % at one machine speed, 3 × is 9.2 %): no change 43.3 %
  // pass, 7.8 % fail, 48.9 % inconclusive; a 10 % loss 10.4 % pass, 37.8 % fail, 51.8 %
  // inconclusive (at the 3.64 % model without a fit: 43.8 / 10.2 / 46.0 and 13.6 / 35.5 / 50.9;
  // at the 3.60 % model of 27c98c6:
  // 43.6 / 9.8 / 46.6 and 13.1 / 34.3 / 52.6; 37.9 / 7.6 / 54.5 and
  // 11.0 / 28.2 / 60.8 with the spread around each side's mean and a line, before 27c98c6:
  // the pair differences have one degree of freedom fewer from the third pair on). At the afternoon model
  // (2.97 %), the rule until 2026-11-25 (no check of the runs' spread, a decision from the
  // first pair) failed 18.3 % of unchanged releases and passed 28.1 % of 10 % losses on
  // such a bench; this rule 7.1 % and 9.5 % (README, "When the bench is noisier than its model").
  const none = rows.find((r) => r.kind === 'none')!;
  assert.ok(none.fail <= 11 && none.inconclusive > 40, JSON.stringify(none));
  const users = rows.find((r) => r.kind === 'material' && r.metric === 'unbounded.supportedUsers')!;
  assert.ok(users.pass <= 15 && users.inconclusive > 40, JSON.stringify(users));
  // The model right (scale 1) gives back the calibrated rates: the check costs little.
  const calm = simulate(config, model, { trials: 1000, seed: 1, noiseScale: 1, noiseScaleMetric: 'unbounded.supportedUsers' }).find((r) => r.kind === 'none')!;
  assert.deepEqual(calm, simulate(config, model, { trials: 1000, seed: 1 }).find((r) => r.kind === 'none'));
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
  assert.equal(json.rows.length, 1 + 3 * 7 + 2);
  assert.equal(await main(['simulate', '--config', 'examples/aws-mattermost.yml', '--trials', 'many'], io), 3);
  lines.length = 0;
  assert.equal(await main(['simulate', '--config', 'examples/aws-mattermost.yml', '--trials', '100', '--noise-scale', 'unbounded.supportedUsers=2.5'], io), 0);
  assert.match(lines[0]!, /the bench's true noise 2\.5 × the model's on unbounded\.supportedUsers/);
  lines.length = 0;
  assert.equal(await main(['simulate', '--config', 'examples/aws-mattermost.yml', '--noise-scale', 'bounded.latency=3'], io), 3);
  assert.match(lines.join('\n'), /--noise-scale: bounded\.latency is not a gating relative metric of examples\/aws-mattermost\.yml; use one of .*unbounded\.supportedUsers/);
  lines.length = 0;
  assert.equal(await main(['simulate', '--config', 'examples/aws-mattermost.yml', '--noise-scale', '3x'], io), 3);
  assert.match(lines.join('\n'), /--noise-scale: expected a multiple such as 3/);
});

test('a speed fit in the model: the simulated runs carry probes and the decision takes the speed out; a wrong slope costs, and says so', async () => {
  const { config, model } = await profile('local-synapse');
  // A fit as a calibration with the probe would write it: slope −0.8, 2 % left around it,
  // the probe moving 6 % per run (sxx = 7 · 0.06²) over 8 runs.
  const fit = { workload: 'python-json-v1', slope: -0.8, sxx: 7 * 0.06 ** 2, sdLog: 0.02, runs: 8, df: 6, source: 'test' };
  const file = { ...model.file!, entries: model.file!.entries.map((e) => (e.metric === 'supportedUsers' ? { ...e, speed: fit } : e)) };
  const withFit = { ...model, file };
  const rate = (slopeScale: number, kind: 'none' | 'material') => {
    const rows = simulate(config, withFit, { trials: 400, seed: 3, slopeScale });
    return rows.find((r) => r.kind === kind && (kind === 'none' || r.metric === 'unbounded.supportedUsers'))!;
  };
  // At the fitted slope, supported users are judged at 2 %: the 10 % loss fails in about 2 pairs.
  const loss = rate(1, 'material');
  assert.ok(loss.fail >= 95 && loss.pass <= 1 && loss.meanPairs < 2.6, JSON.stringify(loss));
  const none = rate(1, 'none');
  assert.ok(none.fail <= 1, JSON.stringify(none));
  // If the probe said nothing about users (true slope 0), adjusting by −0.8 adds 0.8 × 6 % of
  // noise the model does not hold: the gate's own noise check stops more gates as undecidable.
  const blind = rate(0, 'none');
  assert.ok(blind.inconclusive > none.inconclusive + 5, `${JSON.stringify(blind)} against ${JSON.stringify(none)}`);
  assert.ok(blind.fail <= 2, JSON.stringify(blind));
});
