import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AWS, LOCAL } from '../../src/coordinator/simulation/profiles.ts';
import { forCeiling, simulateMany, simulateRun } from '../../src/coordinator/simulation/simulate.ts';

/**
 * The real coordinator against the capacity model (src/coordinator/simulation), on a
 * virtual clock with seeded noise: every figure here is the same on every run.
 */

// Search behaviour, not noise, is under test here: a quieter model than the fitted one.
const QUIET = { ...LOCAL.model, noiseSd: 0.1 };
const RUNS = 4;

for (const ceiling of [50, 1000, 20_000, 100_000]) {
  test(`warm start and adaptive hold find the cold climb's ceiling at ${ceiling} users`, async () => {
    // The climb takes log(ceiling) steps: a 100,000-user cold climb needs more than the
    // local profile's 12 minutes, so the budget is an hour here; the answer is what is compared.
    const spec = { ...forCeiling(LOCAL.scaleFree, ceiling), maxDuration: 3600 };
    const cold = await simulateMany({ model: QUIET, ceiling, test: spec }, RUNS);
    const warm = await simulateMany({ model: QUIET, ceiling, test: spec, hint: ceiling }, RUNS);
    assert.equal(cold.converged, RUNS, 'every cold run converged');
    assert.equal(warm.converged, RUNS, 'every warm run converged');
    const gapPct = (100 * Math.abs(warm.meanRatio - cold.meanRatio)) / cold.meanRatio;
    assert.ok(gapPct <= 3, `warm ${warm.meanRatio.toFixed(3)} vs cold ${cold.meanRatio.toFixed(3)} of the ceiling: ${gapPct.toFixed(2)} % apart`);
    assert.ok(Math.abs(cold.meanRatio - 1) <= 0.06, `cold mean ${cold.meanRatio.toFixed(3)} of the model's ceiling`);
    assert.ok(warm.meanDurationSec < cold.meanDurationSec, `warm ${warm.meanDurationSec} s, cold ${cold.meanDurationSec} s`);
  });
}

test('a wrong hint (2x too high or 3x too low) gives the same answer; too low is slower', async () => {
  const ceiling = 90;
  const spec = LOCAL.scaleFree;
  const right = await simulateMany({ model: QUIET, ceiling, test: spec, hint: ceiling }, RUNS);
  for (const hint of [2 * ceiling, ceiling / 3]) {
    const wrong = await simulateMany({ model: QUIET, ceiling, test: spec, hint }, RUNS);
    assert.equal(wrong.converged, RUNS, `hint ${hint}: every run converged`);
    const gapPct = (100 * Math.abs(wrong.meanRatio - right.meanRatio)) / right.meanRatio;
    assert.ok(gapPct <= 3, `hint ${hint}: ${wrong.meanRatio.toFixed(3)} vs ${right.meanRatio.toFixed(3)} (${gapPct.toFixed(2)} % apart)`);
    assert.ok(wrong.maxDurationSec <= spec.maxDuration, `hint ${hint}: within maxDuration`);
    // Too high is not slower: the ramp crosses the ceiling at its (larger) ramp step and the
    // bisection starts from there. Too low climbs the difference at climbPct per step.
    if (hint < ceiling) assert.ok(wrong.meanDurationSec > right.meanDurationSec, `hint ${hint}: ${wrong.meanDurationSec} s vs ${right.meanDurationSec} s`);
  }
});

test('a warm start ramps to its start point instead of starting every user at once', async () => {
  const run = await simulateRun({ model: QUIET, ceiling: 90, test: LOCAL.scaleFree, seed: 1, hint: 90 });
  const start = run.result.capacity.startUsers;
  assert.equal(start, Math.floor(90 * 0.85), 'starts 15 % below the hint');
  assert.equal(run.result.capacity.startSource, 'simulated hint');
  // 76 users over a 30 s ramp on 2 s steps: about 5 per step, never the whole start at once.
  assert.ok(run.peakStartsPerSec <= Math.ceil(start / 15) + 1, `${run.peakStartsPerSec} users started within one second`);
});

test('machines from 0.3x to 3x of the local bench reach equilibrium within the local time budget; the constant-step search does not at 3x', async () => {
  for (const factor of [0.3, 1, 3]) {
    const ceiling = Math.round(LOCAL.ceiling * factor);
    const after = await simulateMany({ model: LOCAL.model, ceiling, test: forCeiling(LOCAL.scaleFree, ceiling) }, RUNS);
    assert.equal(after.converged, RUNS, `${factor}x: every cold run converged`);
    assert.ok(after.maxDurationSec <= LOCAL.scaleFree.maxDuration, `${factor}x: longest run ${after.maxDurationSec} s`);
    assert.ok(Math.abs(after.meanRatio - 1) <= 0.08, `${factor}x: mean ${after.meanRatio.toFixed(3)} of the ceiling`);
  }
  const old = await simulateMany({ model: LOCAL.model, ceiling: LOCAL.ceiling * 3, test: forCeiling(LOCAL.constantStep, LOCAL.ceiling * 3) }, 2);
  assert.equal(old.converged, 0, 'a fixed +1 user per 2 s climb runs out of maxDuration at 3x, so the gate would be inconclusive');
});

test('the AWS unbounded run (ceiling-test model) takes at most half the bench time, at the same or lower spread', async () => {
  const constant = await simulateMany({ model: AWS.model, ceiling: AWS.ceiling, test: AWS.constantStep }, 3);
  const cold = await simulateMany({ model: AWS.model, ceiling: AWS.ceiling, test: AWS.scaleFree }, 3);
  const warm = await simulateMany({ model: AWS.model, ceiling: AWS.ceiling, test: AWS.scaleFree, hint: AWS.ceiling }, 3);
  assert.equal(constant.converged + cold.converged + warm.converged, 9);
  assert.ok(cold.meanDurationSec <= constant.meanDurationSec / 2, `cold ${cold.meanDurationSec} s vs constant step ${constant.meanDurationSec} s`);
  assert.ok(warm.meanDurationSec <= constant.meanDurationSec / 2, `warm ${warm.meanDurationSec} s vs constant step ${constant.meanDurationSec} s`);
  assert.ok(Math.abs(cold.meanRatio - constant.meanRatio) <= 0.03, `means ${cold.meanRatio.toFixed(3)} vs ${constant.meanRatio.toFixed(3)}`);
  assert.ok(warm.maxDurationSec <= 6 * 3600 - 3600, 'one unbounded run leaves room in a 6 h job');
});

test('the adaptive hold stops on its own half-width, and that half-width covers the spread between runs', async () => {
  const spec = AWS.scaleFree;
  const runs = [];
  for (let seed = 1; seed <= 6; seed++) runs.push((await simulateRun({ model: AWS.model, ceiling: AWS.ceiling, test: spec, seed, hint: AWS.ceiling })).result);
  const stoppedOnWidth = runs.filter((r) => /within the ±1% asked/.test(r.reason));
  assert.ok(stoppedOnWidth.length >= 4, `${stoppedOnWidth.length} of 6 stopped on the half-width: ${runs.map((r) => r.reason).join(' | ')}`);
  const mean = runs.reduce((a, r) => a + r.supportedUsers, 0) / runs.length;
  const covered = runs.filter((r) => Math.abs(r.supportedUsers - mean) <= ((r.capacity.halfWidthPct ?? 0) / 100) * r.supportedUsers);
  assert.ok(covered.length >= 5, `${covered.length} of 6 runs are within their own half-width of the mean`);
});

test('a ramp that looks unhealthy only while users start (login, initial sync) pauses instead of taking its first alert there', async () => {
  // Each user started in the last 6 s loads the model like two more running users: at the
  // ramp's ~2 users/s that is ~24 users more, so a 30 s ramp to 85 % of a 65-user ceiling
  // crosses the threshold near 53 users, as the local bench's ramps did (54).
  const model = { ...QUIET, startCost: { users: 2, seconds: 6 } };
  const ceiling = 65;
  const cold = await simulateMany({ model, ceiling, test: LOCAL.scaleFree }, RUNS);
  const warm = await simulateMany({ model, ceiling, test: LOCAL.scaleFree, hint: ceiling }, RUNS);
  const first = await simulateRun({ model, ceiling, test: LOCAL.scaleFree, seed: 1, hint: ceiling });
  const ramp = first.result.timeline.filter((p) => p.tSec <= 30);
  assert.ok(
    ramp.some((p) => !p.healthy),
    'the ramp does look unhealthy on the way up',
  );
  assert.ok((first.result.capacity.firstAlertUsers ?? 0) > 0.9 * ceiling, `first alert at ${first.result.capacity.firstAlertUsers} users, not during the ramp`);
  assert.equal(warm.converged, RUNS);
  const gapPct = (100 * Math.abs(warm.meanRatio - cold.meanRatio)) / cold.meanRatio;
  assert.ok(gapPct <= 3, `warm ${warm.meanRatio.toFixed(3)} vs cold ${cold.meanRatio.toFixed(3)} of the ceiling: ${gapPct.toFixed(2)} % apart`);
});

test('hold-mean averages a whole stabilityWindow of settled hold, not the bisection after the first alert', async () => {
  // On the local bench the step reaches its floor ~150 s after the first alert, so
  // a window starting at the alert would hold one 50 s batch. Two lags of 15 s
  // windows plus scrapes: batches of 50 s, so a 180 s hold holds three whole ones.
  const spec = LOCAL.scaleFree;
  const batchSec = 50;
  for (let seed = 1; seed <= RUNS; seed++) {
    const { result } = await simulateRun({ model: LOCAL.model, ceiling: LOCAL.ceiling, test: spec, seed, hint: LOCAL.ceiling });
    assert.equal(result.stopCause, 'equilibrium', `seed ${seed}: ${result.reason}`);
    const batches = result.capacity.batches ?? 0;
    assert.ok(batches >= Math.floor(spec.stabilityWindow / batchSec), `seed ${seed}: ${batches} batches (${result.reason})`);
    assert.ok(result.capacity.halfWidthPct !== undefined, `seed ${seed}: the run records its own half-width`);
    // The averaged span starts after the first alert by at least the transient.
    assert.ok(result.window.startSec > result.durationSec - (result.capacity.holdSec ?? 0), `seed ${seed}: window ${JSON.stringify(result.window)}`);
  }
});
