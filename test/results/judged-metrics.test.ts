import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RELATIVE_METRICS } from '../../src/results/judged-metrics.ts';
import type { RunResult } from '../../src/results/schema.ts';
import { unbounded } from '../support/runs.ts';

const cpuPerUser = RELATIVE_METRICS.find((m) => m.key === 'cpuPerUser')!;

/** A run whose CPU and connected users are given per 5 s over 0–60 s, measured over 20–40 s. */
function run(cpu: number[], users: number[]): RunResult {
  const t = cpu.map((_, i) => i * 5);
  return {
    ...unbounded('1.162.0', 30),
    stableWindow: { startSec: 20, endSec: 40 },
    series: { cpuPercent: { unit: 'percent', t, v: cpu }, connectedUsers: { unit: 'users', t, v: users } },
  };
}

test("CPU per user is the stable window's mean CPU over its mean connected users, and gates in both test types", () => {
  const cpu = [5, 10, 20, 30, 40, 44, 42, 46, 44, 50, 60, 70, 80];
  const users = [2, 5, 10, 15, 20, 22, 21, 23, 22, 25, 30, 35, 40];
  // Window 20–40 s: points 4..8; CPU (40+44+42+46+44)/5 = 43.2, users (20+22+21+23+22)/5 = 21.6.
  assert.ok(Math.abs(cpuPerUser.extract(run(cpu, users))! - 2) < 1e-12);
  assert.deepEqual(cpuPerUser.gatesIn, ['bounded', 'unbounded']);
  assert.equal(cpuPerUser.worse, 'higher');
  // No users connected, or no CPU series: not measured, rather than a division by zero.
  assert.equal(
    cpuPerUser.extract(
      run(
        cpu,
        cpu.map(() => 0),
      ),
    ),
    undefined,
  );
  assert.equal(cpuPerUser.extract({ ...run(cpu, users), series: { connectedUsers: { unit: 'users', t: [20], v: [3] } } }), undefined);
});
