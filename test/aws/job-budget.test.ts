/**
 * The run jobs' budget (action/lib/common.sh job_budget_seconds): the runner's limit less
 * the 20 minutes kept per job, or a lower run-job-budget; `prepare` (inputs.sh) refuses a
 * bad one before anything is provisioned.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JOB_MARGIN_SEC } from '../../src/aws/job-limits.ts';

const COMMON = join(import.meta.dirname, '..', '..', 'action', 'lib', 'common.sh');
const INPUTS = join(import.meta.dirname, '..', '..', 'action', 'lib', 'inputs.sh');

function budget(limit: string, asked: string): { code: number; out: string; err: string } {
  const temp = mkdtempSync(join(tmpdir(), 'loadgate-budget-'));
  try {
    const r = spawnSync('bash', ['-c', 'source "$0"; job_budget_seconds "$1" "$2"', COMMON, limit, asked], { encoding: 'utf8', env: { ...process.env, RUNNER_TEMP: temp } });
    return { code: r.status ?? -1, out: r.stdout.trim(), err: r.stderr };
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

test('the default budget is the runner limit less the margin the plan keeps', () => {
  for (const limit of [30, 45, 360, 7200]) assert.equal(budget(String(limit), '').out, String(limit * 60 - JOB_MARGIN_SEC));
});

test('run-job-budget lowers the budget, in loadgate duration syntax', () => {
  assert.deepEqual([budget('45', '140s').out, budget('360', '4h30m').out, budget('360', '1h5m30s').out, budget('45', '25m').out], ['140', '16200', '3930', '1500']);
});

test('a budget above the limit less 20 minutes, zero, or not a duration is refused with exit 3, naming the input', () => {
  for (const asked of ['26m', '0s', '90', '1.5m', '5x', '1m1h', '$(id)']) {
    const r = budget('45', asked);
    assert.equal(r.code, 3, `${asked}: exit 3`);
    assert.match(r.err, /run-job-budget: expected a duration such as 4h30m or 90s, above 0 and at most runner-limit-minutes less 20 minutes \(1500s\)/, asked);
  }
  const r = budget('29', '');
  assert.equal(r.code, 3);
  assert.match(r.err, /runner-limit-minutes: expected whole minutes, at least 30/);
});

test('prepare refuses a bad run-job-budget before it validates anything else', () => {
  const temp = mkdtempSync(join(tmpdir(), 'loadgate-budget-'));
  try {
    const r = spawnSync('bash', [INPUTS], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, RUNNER_TEMP: temp, INPUT_RUNNER_LIMIT_MINUTES: '45', INPUT_RUN_JOB_BUDGET: '30m', GITHUB_OUTPUT: join(temp, 'out') },
    });
    assert.equal(r.status, 3, r.stderr);
    assert.match(r.stderr, /::error::run-job-budget: .*at most runner-limit-minutes less 20 minutes \(1500s\)/);
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
});
