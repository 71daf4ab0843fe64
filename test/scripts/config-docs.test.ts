import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { configReference, DOC_PATH, renderConfigDocs, SCHEMA_PATH } from '../../scripts/make-config-docs.ts';

const schema = JSON.parse(readFileSync(SCHEMA_PATH, 'utf8'));

test('docs/config.md is what scripts/make-config-docs.ts makes from the committed schema', () => {
  const page = readFileSync(DOC_PATH, 'utf8');
  assert.equal(renderConfigDocs(page, schema), page, 'docs/config.md is stale: run `npm run config-docs` (after `npm run schema`)');
});

test('every field of the gate config schema has a row in the reference', () => {
  const reference = configReference(schema);
  for (const key of [
    'version',
    'target.versionPattern',
    'bench.aws.database.dumpUrl',
    'engine.idle.rateMultiplier',
    'tests[] (type: unbounded).health[].threshold',
    'tests[] (type: bounded).earlyStop.minHold',
    'repeats',
    'maxRepeats',
    'noiseModel',
  ]) {
    assert.ok(reference.includes('`' + key + '`'), `no row for ${key}`);
  }
  assert.match(reference, /tolerances\.\{[^}]*supportedUsers[^}]*\}\.weight/);
});

test('a description change in the schema shows up in the page', () => {
  const changed = structuredClone(schema);
  changed.properties.maxRepeats.description = 'A changed description';
  const page = readFileSync(DOC_PATH, 'utf8');
  const next = renderConfigDocs(page, changed);
  assert.notEqual(next, page);
  assert.match(next, /A changed description/);
});

test('a page without the markers is refused rather than overwritten', () => {
  assert.throws(() => renderConfigDocs('# no markers\n', schema), /markers/);
});
