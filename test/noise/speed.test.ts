import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  addSums,
  fitOfSums,
  pooledScope,
  probeSdLog,
  slopeVariance,
  SPEED_RANGE_MARGIN,
  speedFitOutOfScope,
  speedSums,
  sumsOfFit,
} from '../../src/noise/speed.ts';
import type { SpeedFit } from '../../src/noise/schema.ts';

const close = (actual: number, expected: number, tol = 1e-12) => assert.ok(Math.abs(actual - expected) <= tol, `expected ${expected} ± ${tol}, got ${actual}`);

// Reference values: ordinary least squares with one dummy column per group and one shared
// slope, solved from the normal equations in exact fractions (Python's fractions module,
// Gauss-Jordan on XᵀX b = Xᵀy; no centering, unlike the code under test).
const g1 = { x: [0, 1, 2], y: [0, 1, 3] };
const g2 = { x: [0, 2], y: [1, 2] };
const g3 = { x: [1, 3, 4], y: [2, -1, 0.5] };

test('the shared-slope fit matches a dummy-variable least-squares solve', () => {
  const fit = fitOfSums(speedSums([g1, g2]))!;
  close(fit.slope, 1);
  close(fit.sdLog, 0.7637626158259734);
  assert.equal(fit.df, 2);
  assert.equal(fit.runs, 5);
});

test('a stored fit pooled with new runs equals one fit over all of them', () => {
  const first = fitOfSums(speedSums([g1, g2]))!;
  const stored: SpeedFit = { workload: 'w', ...first, source: 's' };
  const pooled = fitOfSums(addSums(sumsOfFit(stored), speedSums([g3])))!;
  const reference = { slope: 0.11538461538461539, sdLog: 1.5452574260687157, df: 4 };
  close(pooled.slope, reference.slope);
  close(pooled.sdLog, reference.sdLog, 1e-12);
  assert.equal(pooled.df, reference.df);
  assert.equal(pooled.runs, 8);
  const direct = fitOfSums(speedSums([g1, g2, g3]))!;
  close(direct.slope, pooled.slope);
  close(direct.sdLog, pooled.sdLog);
});

test('too few degrees of freedom, or a probe that never moved, carry no fit', () => {
  // 2 + 2 runs: 2 df within the groups, 1 after the slope.
  assert.equal(
    fitOfSums(
      speedSums([
        { x: [0, 1], y: [0, 1] },
        { x: [0, 1], y: [1, 3] },
      ]),
    ),
    null,
  );
  assert.equal(fitOfSums(speedSums([{ x: [1, 1, 1, 1], y: [0, 1, 2, 3] }])), null);
  // A one-run group adds nothing (no within-group spread).
  assert.equal(speedSums([{ x: [5], y: [7] }]).runs, 0);
});

test("the slope's variance and the probe's spread come from the stored sums", () => {
  const fit = fitOfSums(speedSums([g1, g2]))!;
  close(slopeVariance(fit), 0.7637626158259734 ** 2 / 4);
  // sxx 4 over 3 within-group df.
  close(probeSdLog(fit), Math.sqrt(4 / 3));
});

const SCOPED: SpeedFit = {
  workload: 'w',
  slope: -2,
  sxx: 0.004,
  sdLog: 0.03,
  runs: 8,
  df: 6,
  source: 's',
  probeMs: { min: 45.37, max: 48.51 },
  machine: { cpuModel: 'AMD EPYC', cores: 2 },
};
const EPYC = { cpuModel: 'AMD EPYC', cores: 2 };

test('a fit is applied only within its probe range, stretched by the margin at either end, and on its own machine', () => {
  assert.equal(SPEED_RANGE_MARGIN, 0.1);
  assert.equal(speedFitOutOfScope(SCOPED, [46, 47, 48.5], [EPYC]), null);
  // The ends of the margin, in log terms ln 1.1 beyond either end, still apply.
  assert.equal(speedFitOutOfScope(SCOPED, [45.37 / 1.1, 48.51 * 1.1], [EPYC]), null);
  assert.match(
    speedFitOutOfScope(SCOPED, [45.37 / 1.1 - 0.01, 47], [EPYC])!,
    /^the runs' speed probe lies outside the noise model's speed fit \(probe 41\.2–47\.0 ms against the fit's 45\.4–48\.5 ms on AMD EPYC \(2 cores\), more than 10 % beyond either end\)/,
  );
  assert.match(speedFitOutOfScope(SCOPED, [47, 48.51 * 1.1 + 0.01], [EPYC])!, /probe 47\.0–53\.4 ms against the fit's 45\.4–48\.5 ms/);
  // Another machine, at the fit's own speeds; a machine the runs do not name is left to the range.
  assert.match(
    speedFitOutOfScope(SCOPED, [46, 47], [EPYC, { cpuModel: 'Intel(R) Xeon(R) Processor', cores: 2 }])!,
    /^the runs ran on Intel\(R\) Xeon\(R\) Processor \(2 cores\), not the machine the noise model's speed fit was measured on \(probe 46\.0–47\.0 ms against the fit's 45\.4–48\.5 ms on AMD EPYC \(2 cores\)\)/,
  );
  assert.equal(speedFitOutOfScope(SCOPED, [46, 47]), null);
  assert.match(speedFitOutOfScope(SCOPED, [115, 120])!, /probe 115\.0–120\.0 ms/);
  // A fit that records neither (written before they were kept) cannot be checked.
  const { probeMs: _range, machine: _machine, ...bare } = SCOPED;
  assert.equal(speedFitOutOfScope(bare, [115, 120], [{ cpuModel: 'Intel(R) Xeon(R) Processor', cores: 4 }]), null);
  assert.match(
    speedFitOutOfScope({ ...bare, machine: EPYC }, [46], [{ cpuModel: 'AMD EPYC', cores: 4 }])!,
    /against the fit \(its probe range not recorded\) on AMD EPYC \(2 cores\)/,
  );
  assert.match(speedFitOutOfScope({ ...bare, probeMs: SCOPED.probeMs }, [115])!, /on a machine it does not name/);
});

test('two fits pooled span both probe ranges, and name a machine only when both name the same one', () => {
  const other = { probeMs: { min: 44, max: 47 }, machine: EPYC };
  assert.deepEqual(pooledScope(SCOPED, other), { probeMs: { min: 44, max: 48.51 }, machine: EPYC });
  assert.deepEqual(pooledScope(SCOPED, { ...other, machine: { cpuModel: 'AMD EPYC', cores: 4 } }), { probeMs: { min: 44, max: 48.51 } });
  assert.deepEqual(pooledScope(SCOPED, {}), {});
});
