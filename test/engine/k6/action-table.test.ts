import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { CEILING_ACTION_FREQUENCIES } from '../../../src/target/mattermost/defaults.ts';

/**
 * One action-frequency table: the k6 scenario keeps a copy (it runs under k6, which cannot
 * import the TypeScript defaults), and this test holds the copy equal to
 * src/target/mattermost/defaults.ts, the table gate configs and load-test-ng's check use.
 */
test('the Mattermost scenario carries the same ceiling-test action table as the TypeScript defaults', () => {
  const script = readFileSync(new URL('../../../src/engine/k6/scenarios/mattermost.js', import.meta.url), 'utf8');
  const block = /const CEILING_ACTIONS = \{([\s\S]*?)\n\};/.exec(script);
  assert.ok(block, 'CEILING_ACTIONS found in mattermost.js');
  const entries = [...block[1]!.matchAll(/^\s*([A-Za-z]+):\s*([0-9.eE+-]+),?\s*(?:\/\/.*)?$/gm)].map((m) => [m[1], Number(m[2])] as const);
  const lines = block[1]!.split('\n').filter((l) => l.trim() && !l.trim().startsWith('//'));
  assert.equal(entries.length, lines.length, 'every line of the table is a plain "Name: number" entry');
  assert.deepEqual(Object.fromEntries(entries), { ...CEILING_ACTION_FREQUENCIES });
});
