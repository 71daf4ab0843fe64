import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { compareAndReport } from '../../src/compare/compare-and-report.ts';
import { loadRunResult } from '../../src/results/load.ts';
import { diffProfiles } from '../../src/compare/profile-diff.ts';
import { flameGraphSvg } from '../../src/report/flame-graph.ts';
import { duets } from '../support/profiles.ts';
import { withTempDir } from '../support/runs.ts';

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

test('the report names the injected function first, with its table row and the flame graph as an image', async () => {
  const { baseline, candidate } = duets('inj', 3);
  await withTempDir(async (dir) => {
    await compareAndReport({ baseline, candidate, outDir: dir });
    const readme = await readFile(join(dir, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### Where the CPU went - bounded'));
    assert.ok(section.length > 0 && readme.includes('### Where the CPU went - bounded'), 'the section is in the report');
    assert.match(section, /the most grown function is `load_rows` in `workload\.py:25`/);
    const table = section.split('\n').filter((l) => l.startsWith('| `'));
    assert.ok(table.length >= 1 && table.length <= 10);
    assert.match(table[0] as string, /^\| `load_rows` \| `workload\.py:25` \|.*\| yes \|$/);
    assert.match(section, /!\[Differential flame graph - bounded\]\(graphs\/bounded\.profile-diff\.png\)/);
    const png = await readFile(join(dir, 'graphs', 'bounded.profile-diff.png'));
    assert.deepEqual(png.subarray(0, 4), PNG_MAGIC);
    // Not in the graph grid of the same test.
    assert.doesNotMatch(readme.slice(readme.indexOf('### Graphs')), /profile-diff/);
    // The copies in results/ keep the profiles: a later compare judges them again.
    const copy = await loadRunResult(join(dir, 'results', 'candidate-1.1.0-bounded-0.json'));
    assert.ok(copy.profile && copy.profile.stacks.length > 0);
  });
});

test('an A/A report says no function changed significantly', async () => {
  const { baseline, candidate } = duets('aa', 3);
  await withTempDir(async (dir) => {
    await compareAndReport({ baseline, candidate, outDir: dir });
    const readme = await readFile(join(dir, 'README.md'), 'utf8');
    assert.match(readme, /no function's CPU per request changed significantly/);
    assert.doesNotMatch(readme.slice(readme.indexOf('### Where the CPU went')), /\| yes \|/);
  });
});

test('the flame graph colours the injected function deep red and escapes names', () => {
  const { baseline, candidate } = duets('inj', 3);
  const diff = diffProfiles(baseline, candidate);
  assert.ok(diff);
  const svg = flameGraphSvg(diff, 'title <x>');
  assert.match(svg, /title &lt;x&gt;/);
  const block = svg.split('<g>').find((g) => g.includes('<title>load_rows (workload.py)'));
  assert.ok(block, 'load_rows has a frame');
  const [, r, g, b] = /fill="rgb\((\d+),(\d+),(\d+)\)"/.exec(block) ?? [];
  assert.ok(Number(r) === 250 && Number(g) < 120 && Number(b) < 120, `load_rows is deep red: rgb(${r},${g},${b})`);
  assert.ok(svg.includes('&lt;module&gt;'), 'the root frame name <module> is escaped');
});
