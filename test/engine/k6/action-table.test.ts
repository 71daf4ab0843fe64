import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { CEILING_ACTION_FREQUENCIES } from '../../../src/chat-servers/mattermost/defaults.ts';

/**
 * One action-frequency table, src/chat-servers/mattermost/defaults.ts: the runner passes it to the
 * k6 scenario (LOADGATE_ACTIONS) when the config names none, and the scenario accepts the
 * actions it implements. Both lists must be the same, or a default table would name an
 * action the scenario refuses, or the scenario would carry one no default ever runs.
 */
test('the Mattermost scenario implements exactly the actions of the ceiling-test table', () => {
  const script = readFileSync(new URL('../../../src/engine/k6/scenarios/mattermost.js', import.meta.url), 'utf8');
  const block = /\nconst actions = \{\n([\s\S]*?)\n\};\n/.exec(script);
  assert.ok(block, 'the actions object found in mattermost.js');
  const implemented = [...block[1]!.matchAll(/^ {2}([A-Z][A-Za-z]+)\(\) \{$/gm)].map((m) => m[1]);
  assert.deepEqual(implemented.sort(), Object.keys(CEILING_ACTION_FREQUENCIES).sort());
  assert.doesNotMatch(script, /SwitchChannel: 6\.5219/, 'the table lives in the TypeScript defaults only');
});
