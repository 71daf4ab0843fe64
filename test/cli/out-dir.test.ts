import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { main } from '../../src/cli/main.ts';
import { captureIO } from '../../src/cli/io.ts';
import { OUT_MARKER } from '../../src/util/out-dir.ts';
import { asInput, bounded, withTempDir } from '../support/runs.ts';

/** Two run results to compare, outside the directories under test. */
async function inputs(dir: string): Promise<string[]> {
  await mkdir(join(dir, 'in'));
  const b = join(dir, 'in', 'b.json');
  const c = join(dir, 'in', 'c.json');
  await writeFile(b, JSON.stringify(asInput(bounded('1.0.0'))));
  await writeFile(c, JSON.stringify(asInput(bounded('1.1.0', 0, { apiFactor: 1.02 }))));
  return ['--baseline', b, '--candidate', c];
}

/** Every file under dir with its content, to show nothing was touched. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) files[join(entry.parentPath, entry.name).slice(dir.length)] = await readFile(join(entry.parentPath, entry.name), 'utf8');
  }
  return files;
}

test("compare refuses a directory holding someone's files (exit 3, naming it and the fix) and changes nothing in it", async () => {
  await withTempDir(async (dir) => {
    const args = await inputs(dir);
    const project = join(dir, 'project');
    await mkdir(join(project, 'results'), { recursive: true });
    await writeFile(join(project, 'README.md'), '# My project\n');
    await writeFile(join(project, 'results', 'mine.txt'), 'my numbers\n');
    const before = await snapshot(project);
    for (const extra of [[], ['--verdict-only']]) {
      const io = captureIO();
      assert.equal(await main(['compare', ...args, '--out', project, ...extra], io), 3, io.stderr.join('\n'));
      assert.match(
        io.stderr.join('\n'),
        new RegExp(`^loadgate compare: --out: ${project} already holds files loadgate did not write \\(README\\.md, results\\); .*Name another directory`),
      );
      assert.deepEqual(await snapshot(project), before);
    }
  });
});

test('compare --out . in a directory with other files is refused and leaves them as they were', async () => {
  await withTempDir(async (dir) => {
    const args = await inputs(dir);
    const repo = join(dir, 'repo');
    await mkdir(join(repo, 'src'), { recursive: true });
    await writeFile(join(repo, 'README.md'), '# repo\n');
    await writeFile(join(repo, 'src', 'main.ts'), 'export {};\n');
    const before = await snapshot(repo);
    const cwd = process.cwd();
    process.chdir(repo);
    try {
      const io = captureIO();
      assert.equal(await main(['compare', ...args, '--out', '.'], io), 3);
      assert.match(io.stderr.join('\n'), /--out: \. already holds files loadgate did not write \(README\.md, src\)/);
    } finally {
      process.chdir(cwd);
    }
    assert.deepEqual(await snapshot(repo), before);
  });
});

test('compare writes again into its own directory, replacing only what it wrote: files added there since are kept', async () => {
  await withTempDir(async (dir) => {
    const args = await inputs(dir);
    const out = join(dir, 'out');
    assert.equal(await main(['compare', ...args, '--out', out], captureIO()), 2);
    const marker = JSON.parse(await readFile(join(out, OUT_MARKER), 'utf8'));
    assert.equal(marker.writtenBy, 'loadgate');
    assert.ok(marker.files.includes('README.md') && marker.files.includes('verdict.json'), JSON.stringify(marker.files));
    // A person's files beside the report, among its graphs and among its results.
    await writeFile(join(out, 'notes.md'), 'mine\n');
    await writeFile(join(out, 'graphs', 'my-chart.png'), 'not a loadgate graph');
    await writeFile(join(out, 'results', 'mine.txt'), 'my numbers\n');
    await writeFile(join(out, 'results', 'mine.json'), '{}');
    const io = captureIO();
    assert.equal(await main(['compare', ...args, '--out', out], io), 2, io.stderr.join('\n'));
    assert.equal(await readFile(join(out, 'notes.md'), 'utf8'), 'mine\n');
    assert.equal(await readFile(join(out, 'graphs', 'my-chart.png'), 'utf8'), 'not a loadgate graph');
    assert.equal(await readFile(join(out, 'results', 'mine.txt'), 'utf8'), 'my numbers\n');
    assert.equal(await readFile(join(out, 'results', 'mine.json'), 'utf8'), '{}');
    assert.match(await readFile(join(out, 'README.md'), 'utf8'), /^# Performance Comparison/);
    // --verdict-only removes the report it wrote, and only that.
    assert.equal(await main(['compare', ...args, '--out', out, '--verdict-only'], captureIO()), 2);
    assert.deepEqual((await readdir(out)).sort(), [OUT_MARKER, 'graphs', 'notes.md', 'results', 'verdict.json']);
    assert.deepEqual(await readdir(join(out, 'graphs')), ['my-chart.png']);
  });
});

test('a file loadgate would write but did not (a README.md put in its directory) is neither replaced nor deleted', async () => {
  await withTempDir(async (dir) => {
    const args = await inputs(dir);
    const out = join(dir, 'out');
    assert.equal(await main(['compare', ...args, '--out', out, '--verdict-only'], captureIO()), 2);
    await writeFile(join(out, 'README.md'), '# Mine\n');
    for (const extra of [[], ['--verdict-only']]) {
      const io = captureIO();
      const code = await main(['compare', ...args, '--out', out, ...extra], io);
      if (extra.length) {
        assert.equal(code, 2, 'a verdict alone does not touch the README it did not write');
      } else {
        assert.equal(code, 3);
        assert.match(io.stderr.join('\n'), /--out: .*README\.md was not written by loadgate, so it is neither replaced nor deleted; move it out/);
      }
      assert.equal(await readFile(join(out, 'README.md'), 'utf8'), '# Mine\n');
    }
  });
});

test("an --out that is a file, or whose marker is not loadgate's, is refused", async () => {
  await withTempDir(async (dir) => {
    const args = await inputs(dir);
    await writeFile(join(dir, 'file'), 'x');
    const io = captureIO();
    assert.equal(await main(['compare', ...args, '--out', join(dir, 'file')], io), 3);
    assert.match(io.stderr.join('\n'), /--out: .*file is a file, not a directory/);
    await mkdir(join(dir, 'fake'));
    await writeFile(join(dir, 'fake', OUT_MARKER), '{"files": []}');
    const fake = captureIO();
    assert.equal(await main(['compare', ...args, '--out', join(dir, 'fake')], fake), 3);
    assert.match(fake.stderr.join('\n'), /is not loadgate's output marker/);
  });
});
