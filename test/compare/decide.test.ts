import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideRate, decideRelative } from '../../src/compare/decide.ts';

test('single run: a change inside the noise floor passes', () => {
  const d = decideRelative([17272], [17040], 5, 5, 'lower', 0.95);
  assert.equal(d.verdict, 'pass');
  assert.equal(d.method, 'noise-floor');
  assert.ok(Math.abs(d.deltaPct - -1.343) < 0.01);
});

test('single run: a 10% loss of supported users fails', () => {
  assert.equal(decideRelative([1000], [900], 5, 5, 'lower', 0.95).verdict, 'fail');
});

test('single run: an improvement never fails, whatever its size', () => {
  assert.equal(decideRelative([1000], [1500], 5, 5, 'lower', 0.95).verdict, 'pass');
  assert.equal(decideRelative([100], [40], 10, 10, 'higher', 0.95).verdict, 'pass');
});

test('single run: beyond tolerance but inside a wider noise floor is inconclusive', () => {
  assert.equal(decideRelative([100], [112], 10, 15, 'higher', 0.95).verdict, 'inconclusive');
});

test('repeats: interval wholly within tolerance passes, wholly beyond fails, straddling is inconclusive', () => {
  assert.equal(decideRelative([1000, 1010, 990], [995, 1003, 992], 5, 5, 'lower', 0.95).verdict, 'pass');
  assert.equal(decideRelative([1000, 1010, 990], [900, 905, 893], 5, 5, 'lower', 0.95).verdict, 'fail');
  const wide = decideRelative([1000, 1100, 900], [950, 1000, 1020], 5, 5, 'lower', 0.95);
  assert.equal(wide.verdict, 'inconclusive');
  assert.equal(wide.method, 't-interval');
});

test('rates at or below the healthy level pass whatever their change', () => {
  const d = decideRate([{ events: 1, requests: 1e6 }], [{ events: 20, requests: 1e6 }], 25, 0.025, 0.95);
  assert.equal(d.verdict, 'pass');
});

test('a doubled error rate with many events fails; with few events it is inconclusive', () => {
  assert.equal(decideRate([{ events: 5000, requests: 1e6 }], [{ events: 10000, requests: 1e6 }], 25, 0.025, 0.95).verdict, 'fail');
  assert.equal(decideRate([{ events: 4, requests: 10000 }], [{ events: 8, requests: 10000 }], 25, 0.025, 0.95).verdict, 'inconclusive');
});

test('errors from zero: a new error rate well above the healthy level fails', () => {
  assert.equal(decideRate([{ events: 0, requests: 1e5 }], [{ events: 500, requests: 1e5 }], 25, 0.025, 0.95).verdict, 'fail');
});
