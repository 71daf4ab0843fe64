/**
 * The local bench's ptrace step (action/lib/ptrace.sh), run by the provision action before
 * a local gate. What it reads is the runner's (GitHub's runner sets RUNNER_ENVIRONMENT to
 * github-hosted or self-hosted; Ubuntu runners boot with kernel.yama.ptrace_scope = 1 and
 * run jobs as a user with passwordless sudo); `sudo` here is a stand-in on PATH that records
 * what it was asked to run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../action/lib/ptrace.sh', import.meta.url));

function step(o: { scope: string; uid: string; runner?: string; sudoFails?: boolean }) {
  const dir = mkdtempSync(join(tmpdir(), 'loadgate-ptrace-'));
  try {
    writeFileSync(join(dir, 'scope'), `${o.scope}\n`);
    const calls = join(dir, 'sudo-calls');
    writeFileSync(join(dir, 'sudo'), `#!/bin/sh\necho "$*" >> ${JSON.stringify(calls)}\nexit ${o.sudoFails ? 1 : 0}\n`);
    chmodSync(join(dir, 'sudo'), 0o755);
    const env: NodeJS.ProcessEnv = { PATH: `${dir}${delimiter}${process.env.PATH ?? ''}`, LG_PTRACE_SCOPE_FILE: join(dir, 'scope'), LG_UID: o.uid };
    if (o.runner) env.RUNNER_ENVIRONMENT = o.runner;
    const r = spawnSync('bash', [SCRIPT], { env, encoding: 'utf8' });
    return { code: r.status, out: r.stdout + r.stderr, sudo: existsSync(calls) ? readFileSync(calls, 'utf8').trim() : '' };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('on a GitHub-hosted runner the scope is lowered with passwordless sudo, so profile: on can attach', () => {
  const r = step({ scope: '1', uid: '1001', runner: 'github-hosted' });
  assert.equal(r.code, 0);
  assert.equal(r.sudo, '-n sysctl -w kernel.yama.ptrace_scope=0');
  assert.match(r.out, /lowered from 1 to 0/);
});

test('a self-hosted runner is left alone and told the fix', () => {
  const r = step({ scope: '1', uid: '1001', runner: 'self-hosted' });
  assert.equal(r.code, 0);
  assert.equal(r.sudo, '');
  assert.match(r.out, /not GitHub-hosted, so it is left alone: .*sudo sysctl -w kernel\.yama\.ptrace_scope=0/);
});

test('nothing to do as root, at scope 0, or at scope 3 (no attaching until a reboot)', () => {
  for (const o of [
    { scope: '1', uid: '0' },
    { scope: '0', uid: '1001' },
    { scope: '3', uid: '1001' },
  ]) {
    const r = step({ ...o, runner: 'github-hosted' });
    assert.equal(r.code, 0);
    assert.equal(r.sudo, '', JSON.stringify(o));
  }
  assert.match(step({ scope: '3', uid: '1001', runner: 'github-hosted' }).out, /ptrace_scope is 3 .*set profile: off/);
});

test('a sudo that refuses does not fail the job: the gate itself then refuses profile: on with the fix', () => {
  const r = step({ scope: '2', uid: '1001', runner: 'github-hosted', sudoFails: true });
  assert.equal(r.code, 0);
  assert.match(r.out, /::warning::could not lower kernel\.yama\.ptrace_scope from 2/);
});
