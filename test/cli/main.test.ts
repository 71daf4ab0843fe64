import { test } from 'node:test';
import assert from 'node:assert/strict';
import { captureIO, type CommandModule } from '../../src/cli/io.ts';
import { main, runCommand } from '../../src/cli/main.ts';
import { InputError } from '../../src/util/errors.ts';
import { VERSION } from '../../src/cli/version.ts';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const throwing = (error: unknown): CommandModule => ({
  usage: 'usage',
  run: async () => {
    throw error;
  },
});

test('a crash inside a command is inconclusive (2) with its cause, never the exit code of a failed gate', async () => {
  const io = captureIO();
  const code = await runCommand('compare', throwing(new TypeError("Cannot read properties of undefined (reading 'v')")), [], io);
  assert.equal(code, 2);
  assert.match(
    io.stderr.join('\n'),
    /^loadgate compare: internal error, so no verdict can be given \(exit 2, inconclusive\):\nTypeError: Cannot read properties of undefined/,
  );
});

test('bad input from a command is exit 3 with its message', async () => {
  const io = captureIO();
  const code = await runCommand('run', throwing(new InputError('--baseline: required: the baseline version')), [], io);
  assert.equal(code, 3);
  assert.deepEqual(io.stderr, ['loadgate run: --baseline: required: the baseline version']);
});

test('a command result passes through unchanged', async () => {
  const io = captureIO();
  assert.equal(await runCommand('compare', { usage: '', run: async () => 1 }, [], io), 1);
  assert.deepEqual(io.stderr, []);
});

test('an unknown command is bad input and lists the commands', async () => {
  const io = captureIO();
  assert.equal(await main(['frobnicate'], io), 3);
  assert.match(io.stderr.join('\n'), /unknown command "frobnicate"[\s\S]*compare/);
});

test('a bare loadgate prints the help and exits 0; --version prints the package version', async () => {
  for (const argv of [[], ['--help'], ['-h']]) {
    const io = captureIO();
    assert.equal(await main(argv, io), 0, argv.join(' '));
    assert.match(io.stdout.join('\n'), /^loadgate \d+\.\d+\.\d+\n\nUsage: loadgate <command> \[options\][\s\S]*\n  compare /);
    assert.deepEqual(io.stderr, []);
  }
  const packageVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  assert.equal(VERSION, packageVersion);
  for (const flag of ['--version', '-V']) {
    const io = captureIO();
    assert.equal(await main([flag], io), 0);
    assert.deepEqual(io.stdout, [packageVersion]);
  }
});

test('a missing or malformed duration says what is expected, not only "Invalid input"', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'loadgate-cli-'));
  try {
    const file = join(dir, 'gate.yml');
    const gate = (test: string) => `version: 1\nname: g\ntarget: { system: synapse }\nbench: { kind: local }\ntests:\n  - ${test}\n`;
    writeFileSync(file, gate('{ type: bounded, users: 4, rampUp: 5s }'));
    const missing = captureIO();
    assert.equal(await main(['validate', file], missing), 3);
    assert.match(missing.stderr.join('\n'), /tests\[0\]\.duration: required: a duration such as "90s", "15m" or "1h30m", or a number of seconds/);
    writeFileSync(file, gate('{ type: bounded, users: 4, rampUp: 5s, duration: [1] }'));
    const wrong = captureIO();
    assert.equal(await main(['validate', file], wrong), 3);
    assert.match(wrong.stderr.join('\n'), /tests\[0\]\.duration: expected a duration such as "90s"/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
