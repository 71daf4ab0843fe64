import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildPlan } from '../../../src/aws/bench-plan.ts';
import { readRunInfo } from '../../../src/aws/run-info.ts';
import { buildTfvars } from '../../../src/aws/tfvars.ts';
import { awsGate } from '../../aws/fixtures.ts';

/**
 * Finding 2: engine.version defaulted to k6's v1.4.2 for both engines, so the load-test-ng
 * download URL pointed at a release that does not exist. Each engine now has its own
 * default, and a load-test-ng version outside the supported releases is refused.
 */
function tfvarsFor(engine: Record<string, unknown>) {
  const config = awsGate({}, { engine });
  const plan = buildPlan(config, { dbSource: 'empty' });
  const run = readRunInfo({ repository: 'acme/chat', runId: '1', runAttempt: '1', commit: 'a'.repeat(40) }, {});
  return buildTfvars(config, plan.bench, run, { version: 'v10.12.0', controllerCidrs: [] }, plan.duration, new Date('2026-01-01T00:00:00Z')).bench;
}

test('each engine downloads a release of its own', () => {
  const ltng = tfvarsFor({ kind: 'load-test-ng' });
  assert.equal(
    ltng.loadtest_download_url,
    'https://github.com/mattermost/mattermost-load-test-ng/releases/download/v1.32.0/mattermost-load-test-ng-v1.32.0-linux-amd64.tar.gz',
  );
  assert.equal(ltng.agent_api_port, 4000);
  assert.equal(ltng.k6_version, undefined);
  const rc = tfvarsFor({ kind: 'load-test-ng', version: 'v1.33.0-rc2' });
  assert.match(rc.loadtest_download_url!, /download\/v1\.33\.0-rc2\/mattermost-load-test-ng-v1\.33\.0-rc2-linux-amd64\.tar\.gz$/);
  const k6 = tfvarsFor({ kind: 'k6' });
  assert.equal(k6.k6_version, 'v1.4.2');
  assert.equal(k6.agent_api_port, 6565);
  assert.throws(
    () => tfvarsFor({ kind: 'load-test-ng', version: 'v1.4.2' }),
    /engine.version: "v1.4.2" is not a load-test-ng release loadgate supports; use one of v1.29.0, v1.30.0, v1.31.0, v1.32.0, v1.33.0-rc2/,
  );
});
