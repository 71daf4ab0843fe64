import { test } from 'node:test';
import assert from 'node:assert/strict';
import { captureIO, type CommandModule } from '../../src/cli/io.ts';
import { main, runCommand } from '../../src/cli/main.ts';
import { InputError } from '../../src/util/errors.ts';

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
  assert.match(io.stderr.join('\n'), /^loadgate compare: internal error, so no verdict can be given \(exit 2, inconclusive\):\nTypeError: Cannot read properties of undefined/);
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
