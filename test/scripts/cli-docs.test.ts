import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { commandDocs, DOC_PATH, renderCliDocs } from '../../scripts/make-cli-docs.ts';
import { COMMANDS } from '../../src/cli/main.ts';

test('docs/cli.md is what scripts/make-cli-docs.ts makes from the commands', async () => {
  const page = readFileSync(DOC_PATH, 'utf8');
  assert.equal(renderCliDocs(page, await commandDocs()), page, 'docs/cli.md is stale: run `npm run cli-docs`');
});

test('every command has a heading and its usage in the page', async () => {
  const page = readFileSync(DOC_PATH, 'utf8');
  for (const name of Object.keys(COMMANDS)) {
    assert.ok(page.includes(`### \`${name}\``), `no heading for ${name}`);
    assert.ok(page.includes(`Usage: loadgate ${name}`), `no usage for ${name}`);
  }
});

test('a changed flag description shows up in the page', async () => {
  const page = readFileSync(DOC_PATH, 'utf8');
  const docs = await commandDocs();
  const changed = docs.map((d) => (d.name === 'run' ? { ...d, usage: d.usage.replace('Only these tests (by name)', 'A changed description') } : d));
  const next = renderCliDocs(page, changed);
  assert.notEqual(next, page);
  assert.match(next, /--tests <a,b> +A changed description/);
});

test('a page without the markers is refused rather than overwritten', async () => {
  assert.throws(() => renderCliDocs('# no markers\n', []), /markers/);
});
