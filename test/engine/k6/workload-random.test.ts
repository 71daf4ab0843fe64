import { test } from 'node:test';
import assert from 'node:assert/strict';
// Plain JavaScript shared with the k6 scenario, which k6 imports as is.
import { hashSeed, seededRandom, workloadRandom } from '../../../src/engine/k6/scenarios/lib/workload-random.js';

type Draw = () => number;
const draws = (next: Draw, n: number) => Array.from({ length: n }, () => next());

test('the same seed and VU give the same workload draws; another VU or seed gives others', () => {
  const a = draws((workloadRandom as (seed: string, vu: number) => Draw)('unbounded#3', 7), 1000);
  const b = draws((workloadRandom as (seed: string, vu: number) => Draw)('unbounded#3', 7), 1000);
  assert.deepEqual(a, b);
  const otherVu = draws((workloadRandom as (seed: string, vu: number) => Draw)('unbounded#3', 8), 1000);
  const otherSeed = draws((workloadRandom as (seed: string, vu: number) => Draw)('unbounded#4', 7), 1000);
  assert.ok(a.filter((x, i) => x === otherVu[i]).length < 5);
  assert.ok(a.filter((x, i) => x === otherSeed[i]).length < 5);
  // Without a seed: Math.random itself.
  assert.equal((workloadRandom as (seed: string | undefined, vu: number) => Draw)(undefined, 7), Math.random);
});

test('the seeded draws are uniform on [0, 1): ten equal bins of 100 000 draws each hold 10 % ± 0.3 %', () => {
  const next = (seededRandom as (seed: number) => Draw)((hashSeed as (text: string) => number)('bounded#0:1'));
  const bins = new Array<number>(10).fill(0);
  for (let i = 0; i < 100_000; i++) {
    const x = next();
    assert.ok(x >= 0 && x < 1);
    bins[Math.floor(x * 10)]!++;
  }
  for (const count of bins) assert.ok(Math.abs(count / 100_000 - 0.1) < 0.003, String(bins));
});
