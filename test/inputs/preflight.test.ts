import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadGateConfig } from '../../src/config/load.ts';
import { preflightMissing, preflightProblem, type PreflightSettings } from '../../src/inputs/preflight.ts';
import { runCli } from '../support/cli.ts';

const ROOT = join(import.meta.dirname, '..', '..');
// The shipped Mattermost example: aws bench, load-test-ng, a Mattermost target.
const mattermost = await loadGateConfig(join(ROOT, 'examples', 'aws-mattermost.yml'));
const synapse = await loadGateConfig(join(ROOT, 'examples', 'local-synapse-duet.yml'));

function checkout(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'loadgate-preflight-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'perf'));
  writeFileSync(join(dir, 'perf', 'users.txt'), 'user-1@example.com secret1\n');
  return dir;
}

const complete: PreflightSettings = {
  secrets: new Set(['admin-email', 'admin-password', 'grafana-token']),
  variables: new Set(['LOADGATE_AWS_ROLE_ARN', 'LOADGATE_LICENSE_SECRET_ARN', 'LOADGATE_TF_STATE_BUCKET', 'LOADGATE_USERS_FILE', 'LOADGATE_GRAFANA_URL']),
  usersFile: 'perf/users.txt',
  grafanaUrl: 'https://grafana.example.com',
};

test('preflight: a Mattermost load-test-ng gate with everything set needs nothing more', (t) => {
  assert.deepEqual(preflightMissing(mattermost, 'aws', complete, checkout(t)), []);
});

test("preflight: the README's mistake (admin login set in the bench environment, so never passed) names both secrets and where they go", (t) => {
  const missing = preflightMissing(mattermost, 'aws', { ...complete, secrets: new Set(['grafana-token']) }, checkout(t));
  assert.deepEqual(
    missing.map((m) => m.name),
    ['the secret admin-email', 'the secret admin-password'],
  );
  assert.match(
    missing[0]!.fix,
    /repository \(or organisation\) secret LOADGATE_ADMIN_EMAIL and pass it in the caller's secrets: \(admin-email: \$\{\{ secrets\.LOADGATE_ADMIN_EMAIL \}\}\)/,
  );
  const problem = preflightProblem(missing, 'aws');
  assert.match(problem, /2 settings that are not set, so nothing was provisioned/);
  assert.doesNotMatch(problem, /[\r\n]/, 'one line: a step output and the check run reason');
});

test('preflight: each missing item of an AWS gate is named, the role and licence as secret or bench variable', (t) => {
  const missing = preflightMissing(mattermost, 'aws', { secrets: new Set(), variables: new Set(), grafanaUrl: 'https://grafana.example.com' }, checkout(t));
  assert.deepEqual(
    missing.map((m) => m.name),
    [
      'the secret aws-role-arn or the variable LOADGATE_AWS_ROLE_ARN',
      'the variable LOADGATE_TF_STATE_BUCKET',
      'the secret license-secret-arn or the variable LOADGATE_LICENSE_SECRET_ARN',
      'the secret admin-email',
      'the secret admin-password',
      'the variable LOADGATE_USERS_FILE',
      'the secret grafana-token',
    ],
  );
  assert.match(missing[1]!.fix, /bench environment/);
});

test('preflight: what a gate needs follows its config: a k6 Synapse gate on AWS needs no licence nor admin, no Grafana URL needs no token', (t) => {
  const k6 = { ...synapse, bench: { ...synapse.bench, kind: 'aws' as const } };
  const missing = preflightMissing(
    k6,
    'aws',
    { secrets: new Set(), variables: new Set(['LOADGATE_AWS_ROLE_ARN', 'LOADGATE_TF_STATE_BUCKET', 'LOADGATE_USERS_FILE']), usersFile: 'perf/users.txt' },
    checkout(t),
  );
  assert.deepEqual(missing, []);
  assert.deepEqual(preflightMissing(synapse, 'local', { secrets: new Set(), variables: new Set() }), [], 'the local bench needs nothing');
});

test('preflight: a users file the checkout lacks, or a path outside it, is named', (t) => {
  const dir = checkout(t);
  const absent = preflightMissing(mattermost, 'aws', { ...complete, usersFile: 'perf/user.txt' }, dir);
  assert.deepEqual(
    absent.map((m) => m.name),
    ['the users file perf/user.txt'],
  );
  assert.match(absent[0]!.fix, /branch the tag was cut from/);
  const outside = preflightMissing(mattermost, 'aws', { ...complete, usersFile: '../secrets.txt' }, dir);
  assert.match(outside[0]!.why, /inside the repository/);
  const badUrl = preflightMissing(mattermost, 'aws', { ...complete, grafanaUrl: 'grafana.example.com' }, dir);
  assert.deepEqual(
    badUrl.map((m) => m.name),
    ['the variable LOADGATE_GRAFANA_URL'],
  );
});

test('loadgate preflight exits 3 naming each missing secret, and writes the problem output', async (t) => {
  const dir = checkout(t);
  const output = join(dir, 'github-output');
  writeFileSync(output, '');
  const r = await runCli(
    [
      'preflight',
      '--config',
      'examples/aws-mattermost.yml',
      '--secrets',
      'grafana-token',
      '--variables',
      'LOADGATE_AWS_ROLE_ARN,LOADGATE_LICENSE_SECRET_ARN,LOADGATE_TF_STATE_BUCKET',
      '--github-output',
    ],
    { GITHUB_OUTPUT: output },
  );
  assert.equal(r.code, 3, r.err);
  assert.match(r.err, /the secret admin-email/);
  assert.match(r.err, /the secret admin-password/);
  assert.match(r.err, /the variable LOADGATE_USERS_FILE/);
  const { readFileSync } = await import('node:fs');
  assert.match(
    readFileSync(output, 'utf8'),
    /^problem=the aws bench needs 3 settings that are not set, so nothing was provisioned: \(1\) the secret admin-email/,
  );
  const ok = await runCli(['preflight', '--config', 'examples/local-synapse-duet.yml']);
  assert.equal(ok.code, 0, ok.err);
});
