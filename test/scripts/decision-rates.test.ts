import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { DOC, decisionRatesTable, withTable } from '../../scripts/make-decision-rates.ts';

test('the decision-rates table in the docs is what loadgate simulate gives today (npm run decision-rates)', async () => {
  const doc = await readFile(DOC, 'utf8');
  const table = await decisionRatesTable();
  assert.equal(withTable(doc, table), doc, `${DOC} is stale: run npm run decision-rates`);
  // The shipped profiles never fail an unchanged release more than the 1 % budget at the model's noise.
  const noChange = table.split('\n').find((l) => l.startsWith('| No change |'))!;
  for (const cell of noChange.split('|').slice(2, -1)) assert.ok(Number(cell.split('/')[1]) <= 1, noChange);
});

test('a document without the markers is refused, naming them', () => {
  assert.throws(() => withTable('# no markers\n', 'x'), /markers <!-- decision-rates:begin --> … <!-- decision-rates:end --> are missing/);
});
