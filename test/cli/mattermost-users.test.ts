import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { main } from '../../src/cli/main.ts';
import { captureIO } from '../../src/cli/io.ts';
import { loadTestNgUserProblems } from '../../src/bench/aws/agent-users.ts';
import { withTempDir } from '../support/runs.ts';

test('mattermost-users --config writes the accounts the AWS example needs, which validate accepts as its users file', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'loadgate-users.txt');
    const io = captureIO();
    assert.equal(await main(['mattermost-users', '--config', 'examples/aws-mattermost.yml', '--out', file], io), 0, io.stderr.join('\n'));
    const text = await readFile(file, 'utf8');
    const lines = text.trimEnd().split('\n');
    // The example's largest test: 12000 users per side on 6 agents of 2000 each.
    assert.equal(lines.length, 12_000);
    assert.equal(lines[0], 'testuser-1@example.com testPass123$');
    assert.equal(lines.at(-1), 'testuser-12000@example.com testPass123$');
    assert.deepEqual(loadTestNgUserProblems(text), [], "load-test-ng's users-file format");
    assert.match(io.stderr.join('\n'), /LOADGATE_ADMIN_EMAIL=sysadmin@sample\.mattermost\.com LOADGATE_ADMIN_PASSWORD=Sys@dmin-sample1/);
    const validate = captureIO();
    assert.equal(await main(['validate', '--users-file', file, 'examples/aws-mattermost.yml'], validate), 0, validate.stderr.join('\n'));
    assert.match(validate.stdout.join('\n'), /users file loadgate-users\.txt \(12000 users\)/);
  });
});

test('mattermost-users refuses a count below what the config needs, a bad prefix, and nothing to count', async () => {
  await withTempDir(async (dir) => {
    const small = captureIO();
    assert.equal(await main(['mattermost-users', '--config', 'examples/aws-mattermost.yml', '--count', '100'], small), 3);
    assert.match(small.stderr.join('\n'), /--count: 100 accounts, but test "unbounded" of examples\/aws-mattermost\.yml needs 12000/);
    const prefix = captureIO();
    assert.equal(await main(['mattermost-users', '--count', '2', '--prefix', 'Test User'], prefix), 3);
    assert.match(prefix.stderr.join('\n'), /--prefix: "Test User" cannot start a Mattermost username/);
    assert.equal(await main(['mattermost-users'], captureIO()), 3);
    const local = join(dir, 'local.yml');
    await writeFile(local, await readFile('examples/local-synapse-duet.yml', 'utf8'));
    const io = captureIO();
    assert.equal(await main(['mattermost-users', '--config', local], io), 3);
    assert.match(io.stderr.join('\n'), /bench\.kind is local; the users file is the AWS bench's/);
  });
});
