import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * test/serial.txt's rule, checked: scripts/run-tests.sh runs the files it lists (and every
 * file under test/e2e/ and test/integration/) one at a time, the rest concurrently. A file
 * that imports what starts a real program of the bench or CI, or fills the shared cache,
 * must be listed, or two such files could run at once.
 */
const STARTS_A_REAL_PROGRAM =
  /support\/(act|aws-act-bench)|synapse-installs|src\/bench\/local\/|chat-servers\/synapse\/(install|server|local)\.ts|k6-binary|engine\/k6\/(install|runner)\.ts|metrics\/prometheus\.ts|py-spy|history\/otava|pyroscope-standin|profiling-standins/;

const testFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
  );

const listed = readFileSync('test/serial.txt', 'utf8')
  .split('\n')
  .map((line) => line.replace(/#.*/, '').trim().split(/\s+/)[0] ?? '')
  .filter(Boolean);

test('test/serial.txt lists every test file outside test/e2e and test/integration that starts a real program, and only those', () => {
  const byFolder = (f: string) => f.startsWith('test/e2e/') || f.startsWith('test/integration/');
  // This file names the programs in its pattern and starts none.
  const self = 'test/scripts/serial-tests.test.ts';
  const starting = testFiles('test')
    .filter((f) => f !== self && !byFolder(f) && STARTS_A_REAL_PROGRAM.test(readFileSync(f, 'utf8')))
    .sort();
  assert.deepEqual([...listed].sort(), starting);
});
