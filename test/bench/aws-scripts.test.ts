import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  UPLOAD_CHUNK_BYTES,
  clientLicenceScript,
  dumpLoadWarning,
  readinessScript,
  configureScript,
  installScript,
  restoreDatasetScript,
  shq,
  startK6Script,
  startScript,
  stopScript,
  uploadScripts,
  versionScript,
} from '../../src/bench/aws/scripts.ts';

/** The scripts the gate sends through SSM, run here with bash in a relocated home. */
const run = (script: string, home: string, input?: string): string =>
  execFileSync('bash', ['-c', script], { env: { PATH: process.env.PATH, LOADGATE_HOME: home }, encoding: 'utf8', ...(input !== undefined ? { input } : {}) });

test('single quoting survives every character bash treats specially', () => {
  for (const value of ["it's", '$(reboot)', '`id`', 'a"b', 'back\\slash', 'new\nline', '*', '; rm -rf /', "''", '']) {
    assert.equal(execFileSync('bash', ['-c', `printf '%s' ${shq(value)}`], { encoding: 'utf8' }), value);
  }
});

test('uploads arrive intact in chunks, are skipped when unchanged, and a torn upload is refused', () => {
  const home = mkdtempSync(join(tmpdir(), 'loadgate-upload-'));
  try {
    const content = Buffer.from(Array.from({ length: 4_000 }, (_, i) => `user${i} pass'${i}$\n`).join(''));
    const scripts = uploadScripts('scenarios/lib/users.txt', content);
    assert.ok(scripts.length > 3, `chunked: ${scripts.length} scripts`);
    for (const s of scripts) assert.ok(Buffer.byteLength(s) < UPLOAD_CHUNK_BYTES + 1024, 'each fits one SSM command');
    for (const s of scripts) run(s, home);
    const target = join(home, 'scenarios', 'lib', 'users.txt');
    assert.deepEqual(readFileSync(target), content);
    assert.equal((statSync(target).mode & 0o777).toString(8), '644');
    // Same digest: every script is a no-op, the last says so.
    const before = statSync(target).mtimeMs;
    const outputs = scripts.map((s) => run(s, home));
    assert.equal(outputs.at(-1), 'unchanged\n');
    assert.equal(statSync(target).mtimeMs, before);
    // A chunk lost on the way: the digest check refuses the file.
    const other = uploadScripts('other.txt', content);
    for (const s of [other[0]!, ...other.slice(2)].slice(0, -1)) run(s, home);
    assert.throws(
      () => run(other.at(-1)!, home),
      (e: Error & { stderr?: string }) => /upload of other\.txt is corrupt/.test(String(e.stderr)),
    );
    assert.throws(() => uploadScripts('../etc/passwd', 'x'), /not a safe relative path/);
    assert.throws(() => uploadScripts('/etc/passwd', 'x'), /not a safe relative path/);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('payloads reach the helpers byte for byte; unsafe values are refused before a script exists', () => {
  const home = mkdtempSync(join(tmpdir(), 'loadgate-payload-'));
  try {
    // A stand-in helper on PATH that prints its arguments and stdin.
    const bin = join(home, 'bin');
    execFileSync('bash', [
      '-c',
      `mkdir -p ${bin} && for h in loadgate-mattermost loadgate-agent; do printf '#!/bin/bash\\nprintf "%%s|" "$@"; echo; cat\\n' > ${bin}/$h; chmod +x ${bin}/$h; done`,
    ]);
    const env = { PATH: `${bin}:${process.env.PATH}`, LOADGATE_HOME: home };
    const patch = { ServiceSettings: { SiteURL: "http://x/'$(id)'" }, TeamSettings: { MaxUsersPerTeam: 300 } };
    const configured = execFileSync('bash', ['-c', configureScript(patch)], { env, encoding: 'utf8' });
    assert.deepEqual(JSON.parse(configured.split('\n').slice(1).join('\n')), patch);
    assert.match(configured, /^configure\|/);
    const started = execFileSync(
      'bash',
      ['-c', startK6Script('scenarios/mattermost.js', { LOADGATE_ACTIONS: '{"CreatePost":1}', K6_NO_USAGE_REPORT: 'true' })],
      { env, encoding: 'utf8' },
    );
    assert.equal(started, `start-k6|${home}/scenarios/mattermost.js|\nLOADGATE_ACTIONS='{"CreatePost":1}'\nK6_NO_USAGE_REPORT='true'\n`);
    assert.throws(() => startK6Script('scenarios/mattermost.js', { PATH: '/tmp' }), /PATH is not a LOADGATE_ or K6_ variable/);
    assert.throws(() => startK6Script('scenarios/mattermost.js', { LOADGATE_SEARCH_TERMS: "it's" }), /holds a quote or a line break/);
    assert.throws(() => installScript("https://releases.mattermost.com/x.tar.gz'; reboot"), /not a release tarball URL/);
    assert.throws(() => installScript('http://releases.mattermost.com/10.12.0/mattermost.tar.gz'), /not a release tarball URL/);
    const installed = execFileSync('bash', ['-c', installScript('https://releases.mattermost.com/10.12.0/mattermost-10.12.0-linux-amd64.tar.gz')], {
      env,
      encoding: 'utf8',
    });
    assert.equal(installed, 'install|https://releases.mattermost.com/10.12.0/mattermost-10.12.0-linux-amd64.tar.gz|\n');
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('a duet slot reaches the helpers as --slot a|b, its licence at its own port; no slot keeps the sequential calls', () => {
  const url = 'https://releases.mattermost.com/10.12.0/mattermost-10.12.0-linux-amd64.tar.gz';
  assert.match(installScript(url), /\nloadgate-mattermost install 'https:/);
  assert.match(installScript(url, 'b'), /\nloadgate-mattermost --slot b install 'https:/);
  assert.match(configureScript({}, 'a'), /\| loadgate-mattermost --slot a configure\n$/);
  assert.match(startScript(60, 'b'), /\nloadgate-mattermost --slot b start 60\n$/);
  assert.match(stopScript('b'), /\nloadgate-mattermost --slot b stop\n$/);
  assert.match(versionScript('b'), /\nloadgate-mattermost --slot b version\n$/);
  assert.match(restoreDatasetScript('b'), /\nloadgate-dataset --slot b restore\n[^]*psql "\$PSQL_URL_B"/);
  assert.match(restoreDatasetScript(), /\nloadgate-dataset restore\n[^]*psql "\$PSQL_URL"/);
  assert.match(clientLicenceScript(), /"\$\{LOADGATE_MATTERMOST_URL:-http:\/\/127\.0\.0\.1:8065\}\/api\/v4\/license\/client/);
  assert.match(clientLicenceScript(8165), /"\$\{LOADGATE_MATTERMOST_URL_8165:-http:\/\/127\.0\.0\.1:8165\}\/api\/v4\/license\/client/);
  assert.throws(() => stopScript('c' as 'a'), /not a duet slot: "c"/);
  assert.throws(() => clientLicenceScript(0), /not a port/);
});

test("app node readiness prints the dump load's error count, which the gate turns into a warning", () => {
  const home = mkdtempSync(join(tmpdir(), 'loadgate-ready-'));
  try {
    const bin = join(home, 'bin');
    mkdirSync(bin);
    for (const tool of ['cloud-init', 'loadgate-mattermost']) writeFileSync(join(bin, tool), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const ready = () =>
      execFileSync('bash', ['-c', readinessScript('loadgate-mattermost')], {
        env: { PATH: `${bin}:${process.env.PATH}`, LOADGATE_HOME: home },
        encoding: 'utf8',
      });
    assert.equal(ready(), 'ready\n');
    assert.equal(dumpLoadWarning(ready()), undefined);
    // What loadgate-dataset prepare writes (app.sh.tftpl; run against PostgreSQL in aws-dataset.test.ts).
    writeFileSync(
      join(home, 'dataset-load.txt'),
      'dump-load-errors: 2\ndump-load-error: psql:<stdin>:1: ERROR:  unrecognized configuration parameter "transaction_timeout"\ndump-load-error: psql:<stdin>:9: ERROR:  role "mmuser" does not exist\n',
    );
    const warning = dumpLoadWarning(ready());
    assert.match(
      warning ?? '',
      /^the dataset's dump loaded with 2 psql error\(s\), which did not stop the load \(as with load-test-ng\); check they are harmless \(\/var\/log\/loadgate-dump\.log on app0\): .*transaction_timeout.* \| .*role "mmuser" does not exist/,
    );
    writeFileSync(join(home, 'dataset-load.txt'), 'dump-load-errors: 0\n');
    assert.equal(dumpLoadWarning(ready()), undefined);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
