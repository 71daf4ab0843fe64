import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isEquilibrium, lastWindow, leastSquaresSlope } from '../../src/coordinator/equilibrium.ts';
import type { TimelinePoint } from '../../src/coordinator/types.ts';

const point = (tSec: number, users: number): TimelinePoint => ({ tSec, users, healthy: true, values: {} });

test('least-squares slope of a line is its slope; of a constant, 0', () => {
  assert.equal(leastSquaresSlope([0, 1, 2, 3], [5, 7, 9, 11]), 2);
  assert.equal(leastSquaresSlope([0, 1, 2], [4, 4, 4]), 0);
  assert.equal(leastSquaresSlope([1], [4]), 0);
  assert.equal(leastSquaresSlope([2, 2], [1, 9]), 0, 'no spread in x');
  // Symmetric noise around a flat line has no slope.
  assert.equal(leastSquaresSlope([0, 1, 2, 3], [100, 108, 108, 100]), 0);
});

test('the window exists only once the timeline spans it, and its slope is per minute', () => {
  const timeline = Array.from({ length: 31 }, (_, i) => point(i * 2, 8 * i));
  assert.equal(lastWindow(timeline.slice(0, 30), 60), undefined, '58 s of data');
  const w = lastWindow(timeline, 60)!;
  assert.deepEqual([w.startSec, w.endSec, w.points], [0, 60, 31]);
  assert.ok(Math.abs(w.slopePerMinute - 240) < 1e-9, '8 users every 2 s');
  assert.equal(w.meanUsers, 120);
  assert.equal(isEquilibrium(w, 0.5), false);
});

test('equilibrium when |slope| is within the percentage of the mean', () => {
  const flat = Array.from({ length: 31 }, (_, i) => point(i * 2, i % 2 ? 208 : 200));
  const w = lastWindow(flat, 60)!;
  assert.ok(Math.abs(w.slopePerMinute) < 1);
  assert.equal(isEquilibrium(w, 0.5), true);
  const drifting = Array.from({ length: 31 }, (_, i) => point(i * 2, 200 + i));
  const d = lastWindow(drifting, 60)!;
  assert.ok(Math.abs(d.slopePerMinute - 30) < 1e-9);
  assert.equal(isEquilibrium(d, 10), false, '30/min is 14 % of 215');
  assert.equal(isEquilibrium(d, 15), true);
});
