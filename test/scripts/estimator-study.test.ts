import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import {
  cpuAgainstUsers,
  estimateRun,
  holdStandardErrorPct,
  lineCrossing,
  loadCalibration,
  mixIndexMs,
  pooledPct,
  RATE_WINDOW_SEC,
  ratioCrossing,
  spreadAtOneSpeedPct,
  spreadPct,
  stepMean,
  type RunEstimates,
} from '../../scripts/lib/estimator-study.ts';
import { LOCAL_CALIBRATIONS } from '../../scripts/make-noise-models.ts';
import type { RunResult } from '../../src/results/schema.ts';
import { unbounded } from '../support/runs.ts';

const CPU_QUERY = {
  name: 'CPU utilization - target (%)',
  query: '100 * sum(rate(loadgate_target_group_cpu_seconds_total{job="process"}[15s])) / 1',
  threshold: 50,
};

function setHealth(run: RunResult, health: Array<{ name: string; query: string; threshold: number }>): void {
  assert.equal(run.test.type, 'unbounded');
  if (run.test.type === 'unbounded') run.test.health = health;
}

/** A run whose users climb 1 per 5 s to 60 and hold, with CPU exactly `perUser` % per user over each 30 s window. */
function runWithCpu(perUser: number): RunResult {
  const run = unbounded('1.162.0', 60);
  const t = Array.from({ length: 120 }, (_, i) => i * 5);
  const users = t.map((s) => Math.min(60, s / 5));
  run.series.connectedUsers = { unit: 'users', t, v: users };
  const cpuT = t.filter((s) => s >= 30);
  run.series.cpuPercent = { unit: 'percent', t: cpuT, v: cpuT.map((s) => perUser * (stepMean(run.series.connectedUsers!, s - 30, s) as number)) };
  setHealth(run, [CPU_QUERY]);
  run.stableWindow = { startSec: 400, endSec: 595 };
  return run;
}

describe('estimator study', () => {
  it('averages a step series over a span', () => {
    const s = { unit: 'users' as const, t: [0, 10, 20], v: [0, 10, 20] };
    assert.equal(stepMean(s, 5, 15), 5);
    assert.equal(stepMean(s, 15, 30), (10 * 5 + 20 * 10) / 15);
    assert.equal(stepMean(s, 10, 10), undefined);
  });

  it('finds where CPU crosses its threshold, by ratio and by line', () => {
    const proportional = [20, 40, 60, 80].map((users) => ({ users, cpu: 0.8 * users }));
    assert.ok(Math.abs((ratioCrossing(proportional, 50) as number) - 62.5) < 1e-9);
    assert.ok(Math.abs((lineCrossing(proportional, 50) as number) - 62.5) < 1e-9);
    // An intercept (CPU with no users) biases the ratio low; the line still crosses at 80.
    const offset = [20, 40, 60, 80].map((users) => ({ users, cpu: 10 + 0.5 * users }));
    assert.ok(Math.abs((lineCrossing(offset, 50) as number) - 80) < 1e-9);
    assert.ok(Math.abs((ratioCrossing(offset, 50) as number) - (50 * 200) / 140) < 1e-9);
    // A line that does not rise says nothing about a crossing.
    assert.equal(
      lineCrossing(
        [20, 40, 60].map((users) => ({ users, cpu: 40 - users / 10 })),
        50,
      ),
      undefined,
    );
    assert.equal(ratioCrossing([], 50), undefined);
  });

  it('pairs each CPU point with the users of its rate window and estimates a run', () => {
    const run = runWithCpu(0.8);
    const pairs = cpuAgainstUsers(run, 30);
    assert.equal(pairs[0]?.users, stepMean(run.series.connectedUsers!, 0, 30));
    assert.ok(pairs.every((p) => Math.abs(p.cpu - 0.8 * p.users) < 1e-9));
    const est = estimateRun(run, 'baseline-0.json', 30);
    assert.equal(est.version, '1.162.0');
    for (const name of ['cpu-ratio-hold', 'cpu-ratio-run', 'cpu-line-run'] as const) {
      assert.ok(Math.abs((est.estimates[name] as number) - 62.5) < 1e-6, `${name}: ${est.estimates[name]}`);
    }
    assert.equal(est.estimates['hold-mean'], run.supportedUsers);
  });

  it('leaves out the CPU estimators when no health query reads the target CPU', () => {
    const run = runWithCpu(0.8);
    setHealth(run, [{ name: 'API', query: 'avg(api)', threshold: 0.1 }]);
    const est = estimateRun(run, 'x.json', 30);
    assert.equal(est.estimates['cpu-ratio-hold'], undefined);
    assert.equal(est.estimates['cpu-line-run'], undefined);
  });

  it("takes the hold mean's standard error from its batch-means interval", () => {
    const capacity = {
      estimator: 'hold-mean' as const,
      supportedUsers: 60,
      windowMeanUsers: 60,
      halfWidthPct: 10,
      batches: 4,
      startUsers: 30,
      startSource: 'cold',
    };
    assert.ok(Math.abs((holdStandardErrorPct(capacity) as number) - 10 / 3.182446) < 1e-4);
    assert.equal(holdStandardErrorPct({ ...capacity, batches: 1 }), undefined);
    assert.equal(holdStandardErrorPct(undefined), undefined);
  });

  it('costs each run’s calls at the pooled handler times', () => {
    const a = unbounded('1.162.0', 60);
    const b = unbounded('1.162.0', 60, 1);
    a.api = [
      { name: 'cheap', count: 90, avgMs: 1, p99Ms: 2 },
      { name: 'dear', count: 10, avgMs: 100, p99Ms: 200 },
    ];
    b.api = [
      { name: 'cheap', count: 80, avgMs: 3, p99Ms: 4 },
      { name: 'dear', count: 20, avgMs: 100, p99Ms: 200 },
    ];
    // Pooled: cheap (90 + 240) / 170 ms, dear 100 ms; b's costlier cheap calls do not move its index, its mix does.
    const cheap = 330 / 170;
    assert.deepEqual(
      mixIndexMs([a, b]).map((x) => Math.round(x * 1e6) / 1e6),
      [(90 * cheap + 1000) / 100, (80 * cheap + 2000) / 100].map((x) => Math.round(x * 1e6) / 1e6),
    );
  });

  it('measures spread as measured, at one machine speed, and pooled', () => {
    assert.ok(Math.abs((spreadPct([100, 100 * Math.E ** 0.02])?.sdPct as number) - (100 * 0.02) / Math.SQRT2) < 1e-9);
    assert.equal(spreadPct([1]), undefined);
    // users ∝ probe^-2 exactly, but for a ±1 % wobble alternating in sign: the fit finds the slope, the spread is the wobble.
    const probes = [40, 42, 44, 46, 48, 50];
    const runs: RunEstimates[] = probes.map((ms, i) => ({
      source: `r${i}`,
      version: '1.162.0',
      estimates: { 'hold-mean': 1e5 * ms ** -2 * Math.exp(i % 2 ? 0.01 : -0.01) },
      probe: { cpuMs: ms, workload: 'python-json-v1@window CPython 3.11.7' },
    }));
    const fit = spreadAtOneSpeedPct(runs, 'hold-mean');
    assert.ok(fit && Math.abs(fit.slope + 2) < 0.1 && fit.sdPct < 1.3 && fit.df === 4, JSON.stringify(fit));
    assert.ok((spreadPct(runs.map((r) => r.estimates['hold-mean'] as number))?.sdPct as number) > 10);
    const mixed = runs.map((r, i) => (i ? r : { ...r, probe: { cpuMs: 40, workload: 'python-json-v1 CPython 3.11.7' } }));
    assert.equal(spreadAtOneSpeedPct(mixed, 'hold-mean'), undefined);
    assert.deepEqual(pooledPct([{ sdPct: 3, df: 5 }, undefined, { sdPct: 4, df: 5 }]), { sdPct: Math.sqrt(12.5), df: 10 });
    assert.equal(pooledPct([undefined]), undefined);
  });
});

describe('estimator study on the committed calibrations', () => {
  it("finds the shipped model's spread for the hold mean on the runs the model pools", async () => {
    const dirs = LOCAL_CALIBRATIONS.filter((d) => d.includes('unbounded'));
    const calibrations = await Promise.all(dirs.map((d) => loadCalibration(d, RATE_WINDOW_SEC)));
    assert.ok(calibrations.every((c) => c !== undefined && c.runs.every((r) => Object.keys(r.estimates).length === 5)));
    const pooled = pooledPct(calibrations.map((c) => spreadPct(c!.runs.map((r) => r.estimates['hold-mean'] as number))));
    const model = JSON.parse(await readFile('noise/local-synapse.json', 'utf8')) as {
      entries: Array<{ test: string; metric: string; sdLog: number; df: number; speed?: { slope: number; sdLog: number } }>;
    };
    const entry = model.entries.find((e) => e.test === 'unbounded' && e.metric === 'supportedUsers');
    assert.ok(entry && pooled && pooled.df === entry.df, `df ${pooled?.df} against ${entry?.df}`);
    assert.ok(Math.abs(pooled.sdPct / 100 - entry.sdLog) < 1e-4, `${pooled.sdPct} % against ${entry.sdLog}`);
    // And at one speed, the window-probe calibration's fit is the model's.
    const window = calibrations[dirs.findIndex((d) => d.endsWith('window-probe'))]!;
    const fit = spreadAtOneSpeedPct(window.runs, 'hold-mean');
    const speed = entry.speed;
    assert.ok(fit && speed && Math.abs(fit.slope - speed.slope) < 1e-3 && Math.abs(fit.sdPct / 100 - speed.sdLog) < 1e-4, JSON.stringify({ fit, speed }));
  });
});
