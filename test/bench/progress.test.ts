import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Progress, formatStatus } from '../../src/bench/progress.ts';

test('status lines are throttled to one per interval and name phase, version, repeat, users, health and time left', () => {
  const lines: string[] = [];
  let now = 0;
  const p = new Progress((l) => lines.push(l), { githubActions: false, intervalMs: 5000, now: () => now });
  now = 0;
  p.begin('run 1/4');
  const fields = { version: '1.162.0', repeat: 0, users: 24, health: [{ name: 'CPU (%)', value: 91.234, threshold: 85 }], leftSec: 125 };
  p.status(fields);
  now = 3000;
  p.status(fields); // throttled
  now = 5000;
  p.status({ ...fields, users: 26 });
  assert.deepEqual(lines, [
    '== run 1/4 [+0s]',
    'run 1/4 | version 1.162.0 | repeat 1 | users 24 | CPU (%) 91.23 (> 85!) | 2m5s left',
    'run 1/4 | version 1.162.0 | repeat 1 | users 26 | CPU (%) 91.23 (> 85!) | 2m5s left',
  ]);
  assert.equal(formatStatus(undefined, { health: [{ name: 'p99 (s)', value: null, threshold: 2 }] }), 'p99 (s) n/a');
});

test('inside GitHub Actions each phase is a log group and problems are annotations', () => {
  const lines: string[] = [];
  let now = 1000;
  const p = new Progress((l) => lines.push(l), { githubActions: true, now: () => now });
  p.begin('set-up');
  now = 1000 + 95_000;
  p.info('k6 cached');
  p.begin('bench');
  p.problem('postgres: exited\nsee log');
  p.end();
  assert.deepEqual(lines, [
    '::group::set-up [+0s]',
    'k6 cached',
    '::endgroup::',
    '::group::bench [+1m35s]',
    '::error::postgres: exited%0Asee log',
    '::endgroup::',
  ]);
});
