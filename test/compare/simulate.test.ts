import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  afterInconclusive,
  goalShortfalls,
  simulate,
  simulationCases,
  syntheticInputs,
  type SimulationCase,
  type SimulationRow,
} from '../../src/compare/simulate.ts';
import { gatingMetrics } from '../../src/noise/profile.ts';
import { seededRandom } from '../../src/util/random.ts';
import { errorRatesOf } from '../../src/compare/sequential.ts';
import { loadGateConfig } from '../../src/config/load.ts';
import { loadNoiseModel } from '../../src/noise/model.ts';

/**
 * The goals for each shipped profile at its noise model, all gating checks
 * together, through the gate's own decision (seeded, so the figures are fixed).
 */
async function profile(name: string) {
  const config = await loadGateConfig(`examples/${name}.yml`);
  const model = await loadNoiseModel(`noise/${NOISE_MODELS[name] ?? name}.json`, config);
  return { config, model };
}

/** Each shipped example's noise model, where its name differs. */
const NOISE_MODELS: Record<string, string> = { 'aws-mattermost-sequential': 'aws-mattermost', 'aws-mattermost': 'aws-mattermost-duet' };
const SHIPPED = ['local-synapse', 'aws-mattermost-sequential', 'aws-mattermost'];

/**
 * The default simulation (1000 trials, seed 1) of each shipped profile, run once and read by
 * every test below that asks for it: seeded, so each reads the same rows it would compute.
 */
const defaultRuns = new Map<string, SimulationRow[]>();
async function defaultRows(name: string): Promise<SimulationRow[]> {
  const { config, model } = await profile(name);
  if (!defaultRuns.has(name)) defaultRuns.set(name, simulate(config, model, { trials: 1000, seed: 1 }));
  return defaultRuns.get(name)!;
}

const row = (rows: readonly SimulationRow[], kind: string, bench: string, metric: string | null = null) =>
  rows.find((r) => r.kind === kind && r.bench === bench && r.metric === metric)!;

test("every shipped profile: false fails of an unchanged release and false passes of a material regression within its stated rates at the model's noise or 1.5 × it; the shortfalls are those stated", async () => {
  for (const name of SHIPPED) {
    const { config } = await profile(name);
    const rows = await defaultRows(name);
    const { falseFailPct, falsePassPct } = config.errorRates;
    for (const bench of ['model', 'noisier']) {
      assert.ok(row(rows, 'none', bench).fail <= falseFailPct, `${name} ${bench}: ${JSON.stringify(row(rows, 'none', bench))}`);
      for (const r of rows.filter((x) => x.kind === 'material' && x.bench === bench)) assert.ok(r.pass <= falsePassPct, `${name}: ${JSON.stringify(r)}`);
    }
    // What is not met, as the docs state it: passes and fails that take more than maxRepeats
    // pairs at an uncertain noise (inconclusive), and on a bench with an unmodelled 6 % per-run
    // factor (2 to 3.5 times the supported-users model) a few false passes of a 10 % loss.
    const stated = [/^no change: pass/, /^material on [a-z.A-Z0-9]+: fail/, /a shared per-run factor of 6%/];
    assert.deepEqual(
      goalShortfalls(rows, errorRatesOf(config)).filter((s) => !stated.some((re) => re.test(s))),
      [],
      name,
    );
  }
});

test('a bench noisier than its model leaves more gates undecided, not more wrong: inconclusive rises, false fails and passes stay within 1 %', async () => {
  const rows = await defaultRows('local-synapse');
  const at = row(rows, 'none', 'model');
  const noisier = row(rows, 'none', 'noisier');
  assert.ok(noisier.inconclusive > at.inconclusive + 10, `${JSON.stringify(noisier)} vs ${JSON.stringify(at)}`);
  assert.ok(noisier.fail <= 1);
  const users = row(rows, 'material', 'noisier', 'unbounded.supportedUsers');
  assert.ok(users.pass <= 1 && users.inconclusive > row(rows, 'material', 'model', 'unbounded.supportedUsers').inconclusive, JSON.stringify(users));
});

test('a drifting bench (3 % per run in the bad direction): the ABBA order keeps false fails in budget, candidate-always-second does not', async () => {
  for (const name of SHIPPED) {
    const { config, model } = await profile(name);
    // The default simulation is ABBA with a 3 %/run drift row, so its rows are ABBA's.
    const rows = await defaultRows(name);
    const abba = rows.find((r) => r.kind === 'drift')!;
    assert.equal(abba.driftPct, 3);
    const ab = simulate(config, model, { trials: 1000, seed: 1, order: 'ab', driftPct: 3 }).find((r) => r.kind === 'drift')!;
    const none = rows.find((r) => r.kind === 'none')!;
    // ABBA: no false fails from the drift; it costs some passes, which become inconclusive.
    assert.ok(abba.fail <= 1, `${name} ABBA: ${JSON.stringify(abba)} vs no drift ${JSON.stringify(none)}`);
    assert.ok(Math.abs(abba.pass - none.pass) <= 5, `${name} ABBA: ${JSON.stringify(abba)} vs no drift ${JSON.stringify(none)}`);
    // Candidate-always-second is biased: the drift reads as a regression.
    assert.ok(ab.fail > abba.fail || ab.pass < abba.pass - 3, `${name} AB: ${JSON.stringify(ab)} vs ABBA ${JSON.stringify(abba)}`);
  }
});

test('a machine whose speed steps between pairs (6.7 % sd, both sides alike): the pair differences cancel it, so the rates are those of no change', async () => {
  for (const name of SHIPPED) {
    const rows = await defaultRows(name);
    const none = rows.find((r) => r.kind === 'none')!;
    const step = rows.find((r) => r.kind === 'step')!;
    assert.ok(
      step.fail <= 1 && Math.abs(step.pass - none.pass) <= 3 && Math.abs(step.meanPairs - none.meanPairs) < 0.2,
      `${name}: ${JSON.stringify(step)} vs ${JSON.stringify(none)}`,
    );
  }
});

test("supported users at 3 × the model's noise: the local gate mostly cannot judge, and fails or passes wrongly at most a few per cent", async () => {
  const { config, model } = await profile('local-synapse');
  const rows = simulate(config, model, { trials: 1000, seed: 1, noiseScale: 3, noiseScaleMetric: 'unbounded.supportedUsers' });
  const none = row(rows, 'none', 'model');
  assert.ok(none.fail <= 5 && none.inconclusive > 40, JSON.stringify(none));
  const users = row(rows, 'material', 'model', 'unbounded.supportedUsers');
  assert.ok(users.pass <= 5 && users.inconclusive > 40, JSON.stringify(users));
  // The model right (scale 1) gives back the calibrated rates.
  // No change is the first case, so simulating it alone draws what the full table does.
  const first = (c: SimulationCase) => c.kind === 'none' && c.bench === 'model';
  const calm = simulate(config, model, { trials: 1000, seed: 1, noiseScale: 1, noiseScaleMetric: 'unbounded.supportedUsers', only: first })[0];
  assert.deepEqual(
    calm,
    (await defaultRows('local-synapse')).find((r) => r.kind === 'none'),
  );
});

test('loadgate simulate prints the table and the goals; --json gives the same rows', async () => {
  const { main } = await import('../../src/cli/main.ts');
  const lines: string[] = [];
  const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
  assert.equal(await main(['simulate', '--config', 'examples/aws-mattermost-sequential.yml', '--trials', '200', '--seed', '3'], io), 0);
  const text = lines.join('\n');
  assert.match(text, /\| true change +\| metric +\| pass % \| fail % \| inconclusive % \| runs\/side mean \| max \|/);
  assert.match(text, /material \(9\.75%\) +\| unbounded\.supportedUsers/);
  assert.match(text, /material, a shared per-run factor of 6% \(9\.75%\) +\| unbounded\.supportedUsers/);
  lines.length = 0;
  assert.equal(await main(['simulate', '--config', 'examples/aws-mattermost-sequential.yml', '--trials', '200', '--seed', '3', '--json'], io), 0);
  const json = JSON.parse(lines.join('\n'));
  assert.equal(json.kind, 'assumed');
  // No change, three changes on each of 7 metrics, drift and step; then no change and the material change on each under two unmodelled benches.
  assert.equal(json.rows.length, 1 + 3 * 7 + 2 + 2 * (1 + 7));
  assert.equal(await main(['simulate', '--config', 'examples/aws-mattermost-sequential.yml', '--trials', 'many'], io), 3);
  lines.length = 0;
  assert.equal(
    await main(['simulate', '--config', 'examples/aws-mattermost-sequential.yml', '--trials', '100', '--noise-scale', 'unbounded.supportedUsers=2.5'], io),
    0,
  );
  assert.match(lines[0]!, /the bench's true noise 2\.5 × the model's on unbounded\.supportedUsers/);
  lines.length = 0;
  assert.equal(await main(['simulate', '--config', 'examples/aws-mattermost-sequential.yml', '--noise-scale', 'bounded.latency=3'], io), 3);
  assert.match(
    lines.join('\n'),
    /--noise-scale: bounded\.latency is not a gating relative metric of examples\/aws-mattermost-sequential\.yml; use one of .*unbounded\.supportedUsers/,
  );
  lines.length = 0;
  assert.equal(await main(['simulate', '--config', 'examples/aws-mattermost-sequential.yml', '--noise-scale', '3x'], io), 3);
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
  // At the fitted slope, supported users are judged at 2 %: the 10 % loss fails in about 3 pairs.
  const loss = rate(1, 'material');
  assert.ok(loss.fail >= 90 && loss.pass <= 1 && loss.meanPairs < 3.6, JSON.stringify(loss));
  const none = rate(1, 'none');
  assert.ok(none.fail <= 1, JSON.stringify(none));
  // If the probe said nothing about users (true slope 0), adjusting by −0.8 adds 0.8 × 6 % of
  // noise the model does not hold: the pair differences show it, and more gates stay undecided.
  const blind = rate(0, 'none');
  assert.ok(blind.inconclusive > none.inconclusive + 5, `${JSON.stringify(blind)} against ${JSON.stringify(none)}`);
  assert.ok(blind.fail <= 2, JSON.stringify(blind));
});

test("simulate draws the noise its model names: a duet model's σ is the sd of a duet's log ratio, a sequential model's the sd of one run", async () => {
  for (const name of ['local-synapse-duet', 'aws-mattermost', 'local-synapse']) {
    const { config, model } = await profile(name);
    const setup = { model, tolerances: config.tolerances, minPairs: 1, maxPairs: 1 };
    const none = simulationCases(config, 0)[0]!;
    const random = seededRandom(3);
    const diffs = new Map<string, number[]>();
    for (let t = 0; t < 4000; t++) {
      for (const input of syntheticInputs(gatingMetrics(config), none, setup, config, 1, { order: 'abba', noiseScale: 1 }, random)) {
        if (!input.relative || input.relative.probes) continue;
        diffs.set(input.base.id, [...(diffs.get(input.base.id) ?? []), Math.log(input.relative.candidate[0]!) - Math.log(input.relative.baseline[0]!)]);
      }
    }
    assert.ok(diffs.size > 0, name);
    for (const [id, d] of diffs) {
      const entry = model.file!.entries.find((e) => `${e.test}.${e.metric}` === id)!;
      // One pair's difference: the duet's own sd, or two runs' (√2 × one run's).
      const want = model.file!.mode === 'duet' ? entry.sdLog : Math.SQRT2 * entry.sdLog;
      // Around their mean: a first duet always has the same orientation, so the model's slot effect is a constant here.
      const mean = d.reduce((a, x) => a + x, 0) / d.length;
      const got = Math.sqrt(d.reduce((a, x) => a + (x - mean) ** 2, 0) / (d.length - 1));
      // 4000 draws: the sd is known to about ±1.1 % (1/√(2n)); √2 is 41 %.
      assert.ok(Math.abs(got / want - 1) < 0.05, `${name} ${id}: drew ${got.toFixed(4)}, the model says ${want.toFixed(4)}`);
    }
  }
});

test('duets with slot a 3 % faster than slot b, which the model does not know: no rate moves by more than a point, and a material loss still fails', async () => {
  for (const name of ['aws-mattermost', 'local-synapse-duet']) {
    const { config, model } = await profile(name);
    // The four rows compared, at 4000 trials: two rates of about 3 % differ by ±0.4 points
    // (one sd) from Monte Carlo alone, against ±0.8 at 1000, where a one-point bound would
    // judge the draw more than the bias.
    const only = (c: SimulationCase) =>
      (c.kind === 'none' || (c.kind === 'material' && c.metric === 'unbounded.supportedUsers')) && (c.bench === 'model' || c.bench === 'slots');
    const rows = simulate(config, model, { trials: 4000, seed: 1, only });
    const users = (bench: string) => rows.find((r) => r.kind === 'material' && r.bench === bench && r.metric === 'unbounded.supportedUsers')!;
    const pairs: [SimulationRow, SimulationRow][] = [
      [row(rows, 'none', 'model'), row(rows, 'none', 'slots')],
      [users('model'), users('slots')],
    ];
    for (const [atModel, biased] of pairs) {
      for (const k of ['pass', 'fail', 'inconclusive'] as const)
        assert.ok(Math.abs(atModel[k] - biased[k]) <= 1, `${name} ${biased.label}: ${k} ${atModel[k]} → ${biased[k]}`);
    }
    assert.ok(users('slots').fail >= 95, `${name}: ${JSON.stringify(users('slots'))}`);
    assert.ok(row(rows, 'none', 'slots').fail <= 1);
  }
});

test('an inconclusive gate continued keeps the stated error rates and decides the rest; started over, it runs more pairs for the same', async () => {
  const { config, model } = await profile('aws-mattermost-sequential');
  const strict = { ...config, errorRates: { falseFailPct: 1, falsePassPct: 1 } };
  const after = afterInconclusive(strict, model, 3, { trials: 1000, seed: 1 });
  const none = after.find((a) => a.label === 'no change')!;
  const loss = after.find((a) => a.metric === 'unbounded.supportedUsers')!;
  assert.ok(none.once.inconclusive > 10, JSON.stringify(none.once));
  assert.ok(none.continued.fail <= 1 && loss.continued.pass <= 1, JSON.stringify({ none: none.continued, loss: loss.continued }));
  assert.ok(none.continued.inconclusive < none.once.inconclusive / 2);
  assert.ok(loss.continued.fail > loss.once.fail);
  // Starting over runs the undecided gates' pairs again.
  assert.ok(none.restarted.meanPairs > none.continued.meanPairs, `${none.restarted.meanPairs} against ${none.continued.meanPairs}`);
});
