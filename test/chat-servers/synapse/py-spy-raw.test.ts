import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mergeRecordings, parseCollapsed } from '../../../src/chat-servers/synapse/py-spy-raw.ts';
import { storedProfileSchema } from '../../../src/results/profile.ts';

/**
 * py-spy 0.4.3 attached for 10 s at 20 Hz (`record --format raw --function --nonblocking`)
 * to a Synapse 1.163.2 (SQLite) serving a few client-API requests: py-spy reported
 * "Samples: 212".
 */
const RAW = readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'profiles', 'synapse-1.163.2.txt'), 'utf8');

test('a real Synapse recording parses into frames with their file and first line, every sample kept', () => {
  const parsed = parseCollapsed(RAW, 'synapse-1.163.2.txt');
  assert.equal(
    parsed.stacks.reduce((n, s) => n + s.samples, 0),
    212,
  );
  assert.ok(Math.max(...parsed.stacks.map((s) => s.frames.length)) > 40, 'Twisted stacks are deep');
  assert.deepEqual(
    parsed.frames.find((f) => f.name === 'VersionsRestServlet.on_GET'),
    { name: 'VersionsRestServlet.on_GET', file: 'synapse/rest/client/versions.py', line: 50 },
  );
  assert.ok(parsed.frames.every((f) => f.file !== '' && f.line !== undefined));
  // Frames are shared between stacks, not repeated.
  assert.equal(new Set(parsed.frames.map((f) => `${f.name} ${f.file} ${f.line}`)).size, parsed.frames.length);
});

test('segments straddling the window count pro rata, and the stored profile validates', () => {
  const parsed = parseCollapsed(RAW, 'synapse-1.163.2.txt');
  const profile = mergeRecordings(
    [
      { stacks: parsed, weight: 1, coveredSec: 10 },
      { stacks: parsed, weight: 0.25, coveredSec: 2.5 },
      { stacks: parsed, weight: 0, coveredSec: 0 },
    ],
    { tool: 'py-spy 0.4.3', sampleSec: 0.05, windowSec: 12.5 },
  );
  assert.ok(profile);
  assert.equal(profile.coveredSec, 12.5);
  assert.ok(Math.abs(profile.stacks.reduce((n, s) => n + s.samples, 0) - 212 * 1.25) < 1e-9);
  assert.equal(profile.stacks.length, parsed.stacks.length, 'the same stacks merge');
  assert.ok(storedProfileSchema.safeParse(profile).success);
  assert.equal(mergeRecordings([{ stacks: parsed, weight: 0, coveredSec: 0 }], { tool: 't', sampleSec: 0.05, windowSec: 10 }), undefined);
});
