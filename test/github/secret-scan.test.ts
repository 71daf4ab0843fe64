import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findSecrets, secretsFromEnv } from '../../src/github/secret-scan.ts';
import { pngGraph } from './fixtures.ts';
import { runCli } from '../support/cli.ts';

// Shapes only: made up for the test, valid for no service.
const SESSION_TOKEN = 'IQoJb3JpZ2luX2VjEFAKEFAKEFAKEsessiontoken0123456789';
const ID_REQUEST_TOKEN = 'actions-id-request-token-0123456789abcdef';

test('secret-looking variable names: AWS, GitHub and Actions credentials are picked, others are not', () => {
  const names = secretsFromEnv({
    AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    AWS_SESSION_TOKEN: SESSION_TOKEN,
    AWS_ACCESS_KEY_ID: 'ASIAEXAMPLEEXAMPLE12',
    GITHUB_TOKEN: 'ghs_0123456789abcdefghijklmnopqrstuvwxyz',
    ACTIONS_ID_TOKEN_REQUEST_TOKEN: ID_REQUEST_TOKEN,
    ACTIONS_RUNTIME_TOKEN: 'runtime-token-0123456789',
    DB_PASSWORD: 'hunter2hunter2',
    AWS_REGION: 'us-east-1',
    HOME: '/home/runner',
    SHORT_TOKEN: 'abc',
  }).map((s) => s.name);
  assert.deepEqual(names.sort(), [
    'ACTIONS_ID_TOKEN_REQUEST_TOKEN',
    'ACTIONS_RUNTIME_TOKEN',
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'DB_PASSWORD',
    'GITHUB_TOKEN',
  ]);
});

test('credential shapes are found in text and in binary files; ordinary report content is not', () => {
  const png = Buffer.concat([pngGraph('a'), Buffer.from('AKIAABCDEFGHIJKLMNOP'), pngGraph('b')]);
  const findings = findSecrets(
    [
      { name: 'graphs/x.png', content: png },
      { name: 'logs/a.txt', content: 'token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB' },
      { name: 'logs/b.txt', content: '-----BEGIN OPENSSH PRIVATE KEY-----\nabc' },
      { name: 'logs/c.txt', content: 'id eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvOm8vcjplbnZpcm9ubWVudDpiZW5jaCJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ' },
      { name: 'results/ok.json', content: '{"api":{"GET /_matrix/client/v3/sync":{"p99":120}},"fingerprint":"sha256:0123456789abcdef"}' },
      { name: 'graphs/ok.png', content: pngGraph('ok') },
    ],
    [],
  );
  assert.deepEqual(
    findings.map((f) => `${f.item}: ${f.what}`),
    [
      'graphs/x.png: an AWS access key ID',
      'logs/a.txt: a GitHub token',
      'logs/b.txt: a private key',
      'logs/c.txt: a JSON Web Token (such as an OIDC ID token)',
    ],
  );
});

test('scan-report: a report holding the AWS session token is refused, naming the file and variable, never the value', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lg-scan-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'logs'));
  await writeFile(join(dir, 'README.md'), '# report\n');
  await writeFile(join(dir, 'logs', 'provision.log'), `export AWS_SESSION_TOKEN=${SESSION_TOKEN}\n`);
  const r = await runCli(['scan-report', '--report', dir], { AWS_SESSION_TOKEN: SESSION_TOKEN, ACTIONS_ID_TOKEN_REQUEST_TOKEN: ID_REQUEST_TOKEN });
  assert.equal(r.code, 3);
  assert.match(r.err, /logs\/provision\.log contains the value of AWS_SESSION_TOKEN/);
  assert.match(r.err, /will not let the report leave this job/);
  assert.ok(!(r.out + r.err).includes(SESSION_TOKEN), 'the value is never printed');
});

test('scan-report: a clean report passes; a missing directory is bad input', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lg-scan-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'verdict.json'), '{"verdict":"pass"}\n');
  await writeFile(join(dir, 'graph.png'), pngGraph('clean'));
  const ok = await runCli(['scan-report', '--report', dir], { AWS_SESSION_TOKEN: SESSION_TOKEN });
  assert.equal(ok.code, 0, ok.err);
  assert.match(ok.err, /2 files .* no secret found/);
  const missing = await runCli(['scan-report', '--report', join(dir, 'nope')], {});
  assert.equal(missing.code, 3);
  assert.match(missing.err, /cannot read report directory/);
});
