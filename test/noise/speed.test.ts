import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addSums, fitOfSums, pooledScope, probeSdLog, slopeVariance, speedSums, sumsOfFit } from '../../src/noise/speed.ts';
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
  assert.equal(fitOfSums(speedSums([{ x: [0, 1], y: [0, 1] }, { x: [0, 1], y: [1, 3] }])), null);
  assert.equal(fitOfSums(speedSums([{ x: [1, 1, 1, 1], y: [0, 1, 2, 3] }])), null);
  // A one-run group adds nothing (no within-group spread).
  assert.equal(speedSums([{ x: [5], y: [7] }]).runs, 0);
});

test('the slope\'s variance and the probe\'s spread come from the stored sums', () => {
  const fit = fitOfSums(speedSums([g1, g2]))!;
  close(slopeVariance(fit), 0.7637626158259734 ** 2 / 4);
  // sxx 4 over 3 within-group df.
  close(probeSdLog(fit), Math.sqrt(4 / 3));
});

const SCOPED: SpeedFit = { workload: 'w', slope: -2, sxx: 0.004, sdLog: 0.03, runs: 8, df: 6, source: 's', probeMs: { min: 45.37, max: 48.51 }, machine: { cpuModel: 'AMD EPYC', cores: 2 } };
const EPYC = { cpuModel: 'AMD EPYC', cores: 2 };

test('two fits pooled span both probe ranges, and name a machine only when both name the same one', () => {
  const other = { probeMs: { min: 44, max: 47 }, machine: EPYC };
  assert.deepEqual(pooledScope(SCOPED, other), { probeMs: { min: 44, max: 48.51 }, machine: EPYC });
  assert.deepEqual(pooledScope(SCOPED, { ...other, machine: { cpuModel: 'AMD EPYC', cores: 4 } }), { probeMs: { min: 44, max: 48.51 } });
  assert.deepEqual(pooledScope(SCOPED, {}), {});
});
