import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OUT_MARKER, OutDir } from '../../src/util/out-dir.ts';
import { InputError } from '../../src/util/errors.ts';
import { withTempDir } from '../support/runs.ts';

/**
 * The output directory's promise: nothing outside it is ever deleted or written, whatever
 * its marker lists and whatever links someone put inside it.
 */

async function marker(out: string): Promise<{ files: string[]; dirs: string[] }> {
  return JSON.parse(await readFile(join(out, OUT_MARKER), 'utf8')) as { files: string[]; dirs: string[] };
}

async function editMarker(out: string, edit: (m: { files: string[]; dirs: string[] }) => void): Promise<void> {
  const m = await marker(out);
  edit(m);
  await writeFile(join(out, OUT_MARKER), JSON.stringify(m));
}

const refused = (pattern: RegExp) => (error: unknown) => error instanceof InputError && pattern.test(error.message);

test('a marker entry that leaves the directory (results/../../x) deletes nothing outside it and is refused naming the marker', async () => {
  await withTempDir(async (dir) => {
    const out = join(dir, 'a', 'out');
    const victim = join(dir, 'x');
    await writeFile(victim, "not loadgate's\n");
    const o = await OutDir.open(out);
    await o.mkdir('results');
    await o.writeFile('results/r.json', '{}');
    await editMarker(out, (m) => m.files.push('results/../../../x'));
    await assert.rejects(
      async () => {
        const again = await OutDir.open(out);
        await again.removeWritten('results');
      },
      refused(/lists "results\/\.\.\/\.\.\/\.\.\/x", which is not a path inside/),
    );
    assert.equal(await readFile(victim, 'utf8'), "not loadgate's\n");
    assert.equal(await readFile(join(out, 'results', 'r.json'), 'utf8'), '{}', 'nothing inside was removed either');
  });
});

test('every kind of escaping or odd marker entry is refused when the directory is opened', async () => {
  for (const entry of ['../x', '/etc/passwd', 'results/../../x', './README.md', 'a//b', '.', OUT_MARKER, 'graphs/', '']) {
    await withTempDir(async (dir) => {
      const out = join(dir, 'out');
      await mkdir(out);
      await writeFile(join(out, OUT_MARKER), JSON.stringify({ writtenBy: 'loadgate', files: [entry], dirs: [] }));
      await assert.rejects(OutDir.open(out), refused(new RegExp(`${OUT_MARKER.replace('.', '\\.')} lists .* not a path inside`)), entry);
    });
  }
});

test('a symlinked graphs/ directory is never followed: neither its files deleted nor new ones written through it', async () => {
  await withTempDir(async (dir) => {
    const out = join(dir, 'out');
    const elsewhere = join(dir, 'my-charts');
    const o = await OutDir.open(out);
    await o.mkdir('graphs');
    await o.writeFile('graphs/a.png', 'loadgate graph');
    // Someone replaces the directory loadgate made by a link to their own, holding a file of the same name.
    await mkdir(elsewhere);
    await writeFile(join(elsewhere, 'a.png'), 'my chart');
    const { rm } = await import('node:fs/promises');
    await rm(join(out, 'graphs'), { recursive: true });
    await symlink(elsewhere, join(out, 'graphs'));
    const again = await OutDir.open(out);
    await assert.rejects(again.removeWritten('graphs'), refused(/graphs is a symbolic link/));
    await assert.rejects(again.writeFile('graphs/a.png', 'new graph'), refused(/graphs is a symbolic link/));
    await assert.rejects(again.mkdir('graphs'), refused(/graphs is a symbolic link/));
    assert.deepEqual(await readdir(elsewhere), ['a.png']);
    assert.equal(await readFile(join(elsewhere, 'a.png'), 'utf8'), 'my chart');
  });
});

test('a symlinked README.md or verdict.json is neither written through nor deleted', async () => {
  for (const name of ['README.md', 'verdict.json']) {
    await withTempDir(async (dir) => {
      const out = join(dir, 'out');
      const target = join(dir, 'precious.txt');
      await writeFile(target, 'precious\n');
      const o = await OutDir.open(out);
      await o.writeFile(name, 'ours');
      const { rm } = await import('node:fs/promises');
      await rm(join(out, name));
      await symlink(target, join(out, name));
      const again = await OutDir.open(out);
      await assert.rejects(again.writeFile(name, 'overwritten'), refused(new RegExp(`${name.replace('.', '\\.')} is a symbolic link`)), name);
      await assert.rejects(again.removeWritten(name), refused(new RegExp(`${name.replace('.', '\\.')} is a symbolic link`)), name);
      assert.equal(await readFile(target, 'utf8'), 'precious\n', name);
    });
  }
});

test('a symlinked marker is not written through', async () => {
  await withTempDir(async (dir) => {
    const out = join(dir, 'out');
    const target = join(dir, 'elsewhere.json');
    const o = await OutDir.open(out);
    await o.writeFile('verdict.json', '{}');
    const text = await readFile(join(out, OUT_MARKER), 'utf8');
    await writeFile(target, text);
    const { rm } = await import('node:fs/promises');
    await rm(join(out, OUT_MARKER));
    await symlink(target, join(out, OUT_MARKER));
    await assert.rejects(OutDir.open(out), refused(/\.loadgate-output\.json is a symbolic link/));
    assert.equal(await readFile(target, 'utf8'), text);
  });
});

test('files and directories loadgate wrote are still replaced and removed as before', async () => {
  await withTempDir(async (dir) => {
    const out = join(dir, 'out');
    const o = await OutDir.open(out);
    await o.mkdir('graphs');
    await o.writeFile('graphs/a.png', 'one');
    await o.writeFile('README.md', 'one');
    await o.writeFile('README.md', 'two');
    assert.equal(await readFile(join(out, 'README.md'), 'utf8'), 'two');
    await o.removeWritten('graphs');
    assert.deepEqual((await readdir(out)).sort(), [OUT_MARKER, 'README.md']);
    assert.deepEqual(await marker(out).then((m) => [m.files, m.dirs]), [['README.md'], []]);
  });
});
