import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mergeRecordings, parseCollapsed } from '../../src/chat-servers/synapse/py-spy-raw.ts';
import { runResultSchema, type RunResult } from '../../src/results/schema.ts';
import { asInput, bounded } from './runs.ts';

/**
 * Real py-spy recordings (test/fixtures/profiles/record.sh): a request loop profiled in
 * duets, both sides at once on one core, against itself (aa-*) and against a copy that
 * spends extra CPU in load_rows on every request (inj-*).
 */
const DIR = join(import.meta.dirname, '..', 'fixtures', 'profiles');
const manifest = JSON.parse(readFileSync(join(DIR, 'manifest.json'), 'utf8')) as { rateHz: number; seconds: number; requests: Record<string, number> };

function recorded(name: string, version: string, repeat: number): RunResult {
  const stacks = parseCollapsed(readFileSync(join(DIR, `${name}.txt`), 'utf8'), name);
  const profile = mergeRecordings([{ stacks, weight: 1, coveredSec: manifest.seconds }], {
    tool: 'py-spy 0.4.3',
    sampleSec: 1 / manifest.rateHz,
    windowSec: manifest.seconds,
  });
  const run = asInput(bounded(version, repeat));
  const requests = manifest.requests[name];
  assert.ok(requests, `manifest.json has no request count for ${name}`);
  return runResultSchema.parse({ ...run, totals: { ...run.totals, requests }, profile });
}

export function duets(kind: 'aa' | 'inj', count: number): { baseline: RunResult[]; candidate: RunResult[] } {
  const ds = Array.from({ length: count }, (_, i) => i + 1);
  return {
    baseline: ds.map((d) => recorded(`${kind}-${d}-baseline`, '1.0.0', d - 1)),
    candidate: ds.map((d) => recorded(`${kind}-${d}-candidate`, '1.1.0', d - 1)),
  };
}
