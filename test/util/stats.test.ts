import { test } from 'node:test';
import assert from 'node:assert/strict';
import { median, normalQuantile, studentTCdf, studentTQuantile } from '../../src/util/stats.ts';

const close = (actual: number, expected: number, tol: number) => assert.ok(Math.abs(actual - expected) <= tol, `expected ${expected} ± ${tol}, got ${actual}`);

test('median: the middle value, or the mean of the two middle ones; NaN when empty', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.ok(Number.isNaN(median([])));
});

test('normal quantiles match published tables', () => {
  close(normalQuantile(0.975), 1.959964, 1e-6);
  close(normalQuantile(0.5), 0, 1e-9);
  close(normalQuantile(0.01), -2.326348, 1e-6);
});

test('Student t quantiles match published tables', () => {
  close(studentTQuantile(0.975, 1), 12.7062, 1e-3);
  close(studentTQuantile(0.975, 2), 4.3027, 1e-3);
  close(studentTQuantile(0.975, 5), 2.5706, 1e-3);
  close(studentTQuantile(0.95, 10), 1.8125, 1e-3);
  close(studentTQuantile(0.025, 4), -2.7764, 1e-3);
});

// Independent values: scipy 1.17.1 (python3, 2026-11-24), to 1e-8, so swapping t for the
// normal or changing the degrees of freedom fails here.
test('Student t quantiles and CDF against scipy.stats.t', () => {
  close(studentTQuantile(0.975, 3), 3.1824463052837078, 1e-8); // t.ppf(0.975, 3)
  close(studentTQuantile(0.975, 2), 4.302652729749462, 1e-8); // t.ppf(0.975, 2)
  close(studentTQuantile(0.995, 4), 4.604094871349992, 1e-8); // t.ppf(0.995, 4)
  close(studentTQuantile(0.975, 30), 2.0422724563012378, 1e-8); // t.ppf(0.975, 30)
  close(studentTCdf(2.0, 3), 0.9303370157205785, 1e-9); // t.cdf(2.0, 3)
  close(studentTCdf(-1.5, 7), 0.088649243494985, 1e-9); // t.cdf(-1.5, 7)
  assert.ok(studentTQuantile(0.975, 3) - normalQuantile(0.975) > 1, 't at 3 df is far from the normal');
});

// The reference values below are scipy.stats 1.17.1 (each call named beside them), checked
// against mpmath at 40 digits to agree within 5e-15 relative. The tolerance, 1e-11
// relative, is far below anything the verdict reads and far above the libraries' spread.
const closeRel = (actual: number, expected: number, rel = 1e-11) =>
  assert.ok(Math.abs(actual - expected) <= rel * Math.abs(expected), `expected ${expected} (± ${rel} relative), got ${actual}`);

test('normal quantile against scipy.stats.norm', () => {
  assert.equal(normalQuantile(0.5), 0); // norm.ppf(0.5), exact by symmetry
  closeRel(normalQuantile(0.975), 1.959963984540054); // norm.ppf(0.975)
  closeRel(normalQuantile(0.995), 2.5758293035489004); // norm.ppf(0.995)
  closeRel(normalQuantile(1e-6), -4.753424308822899); // norm.ppf(1e-6)
  for (const p of [0, 1, -0.1, 1.5, Number.NaN]) assert.throws(() => normalQuantile(p), /normalQuantile: p must be in \(0, 1\)/);
});

/** One row per df, as in a printed table: [df, [argument, expected], …], checked as f(argument, df). */
const byDf = (f: (x: number, df: number) => number, rows: ReadonlyArray<readonly [number, ...Array<readonly [number, number]>]>) => {
  for (const [df, ...cells] of rows) for (const [x, expected] of cells) closeRel(f(x, df), expected);
};

// Fractional df (7.3) is what Welch's interval asks for.
test('Student t quantile against scipy.stats.t, integer and fractional df', () => {
  // scipy.stats.t.ppf(p, df)
  byDf(studentTQuantile, [
    [1, [0.975, 12.706204736174694], [0.995, 63.656741162871526]],
    [2, [0.975, 4.302652729749462], [0.995, 9.924843200918287]],
    [5, [0.975, 2.5705818356363146], [0.995, 4.032142983555228]],
    [30, [0.975, 2.0422724563012378], [0.995, 2.7499956535672254]],
    [7.3, [0.975, 2.345066736547703], [0.025, -2.3450667365477034], [0.995, 3.451031655622185], [1e-6, -13.493523060744641]],
  ]);
});

test('Student t CDF against scipy.stats.t, integer and fractional df, and a far tail', () => {
  // scipy.stats.t.cdf(t, df)
  byDf(studentTCdf, [
    [1, [2, 0.8524163823495667], [-1.5, 0.18716704181099886]],
    [2, [2, 0.908248290463863], [-1.5, 0.13619656244550055]],
    [5, [2, 0.9490302605850708], [-1.5, 0.09695184012123664], [-40, 9.205981085886477e-8]],
    [30, [2, 0.9726874775185085], [-1.5, 0.072032964564323]],
    [7.3, [2, 0.9580294803329484], [-1.5, 0.08778154640154305]],
  ]);
});

test('the t quantile keeps its argument checks', () => {
  assert.throws(() => studentTQuantile(1, 5), /studentTQuantile: p must be in \(0, 1\)/);
  assert.throws(() => studentTQuantile(0.975, 0), /studentTQuantile: df must be > 0/);
  assert.throws(() => studentTQuantile(0.975, Number.NaN), /studentTQuantile: df must be > 0/);
});
