import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { COST_DOCS, renderCostDocs } from '../../scripts/make-cost-docs.ts';

test('the cost figures in docs/aws.md and docs/github.md are what loadgate plan gives today (npm run cost-docs)', async () => {
  for (const file of new Set(Object.values(COST_DOCS).map((b) => b.file))) {
    const text = await readFile(file, 'utf8');
    assert.equal(await renderCostDocs(file, text), text, `${file} is stale: run npm run cost-docs`);
  }
});

test('the preset table is every preset at its worst case, the figure max-cost caps', async () => {
  const text = await readFile('docs/aws.md', 'utf8');
  const table = /<!-- cost-docs: presets -->\n([\s\S]*?)<!-- \/cost-docs -->/.exec(text)?.[1] ?? '';
  assert.equal(table.trim().split('\n').length, 2 + 17, 'perfcomp and the 16 ceiling presets');
  assert.match(table, /\| Worst case \| Worst-case cost \|/);
});
