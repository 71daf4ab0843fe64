import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { changedFunctions, lineChanges, locate, packagePath, type PythonTree } from '../../../src/chat-servers/synapse/changed-functions.ts';
import { pythonFunctions } from '../../../src/chat-servers/synapse/python-functions.ts';
import { RELEASES, synapseTrees } from '../../support/synapse-installs.ts';

const BEFORE = `import x

class Handler:
    @decorator
    async def persist(
        self,
        events: list,
    ) -> None:
        for e in events:
            store(e)

        return None

    def __init__(self):
        self.a = 1


def helper(a):
    return a + 1
`;

// persist gains a hashing loop; __init__ moves down a line but keeps its body; helper is gone; fresh is new.
const AFTER = `import x
import hashlib

class Handler:
    @decorator
    async def persist(
        self,
        events: list,
    ) -> None:
        for e in events:
            for _ in range(1000):
                hashlib.sha256(e).digest()
            store(e)

        return None

    def __init__(self):
        self.a = 1


def fresh():
    pass
`;

test('functions are named and placed as CPython does: qualified names, a decorated one at its decorator', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-pyfn-'));
  try {
    await writeFile(join(dir, 'h.py'), BEFORE);
    await writeFile(join(dir, 'bad.py'), 'def broken(:\n');
    const found = await pythonFunctions('python3', [join(dir, 'h.py'), join(dir, 'bad.py')]);
    const fns = found.get(join(dir, 'h.py'));
    assert.ok(Array.isArray(fns));
    assert.deepEqual(
      fns.map((f) => [f.qualname, f.first, f.line, f.end]),
      [
        ['Handler', 3, 3, 15],
        ['Handler.persist', 4, 5, 12],
        ['Handler.__init__', 14, 14, 15],
        ['helper', 18, 18, 19],
      ],
    );
    assert.match(String(found.get(join(dir, 'bad.py'))), /SyntaxError/);
    assert.deepEqual(lineChanges(['a', 'b', 'c'], ['a', 'x', 'c', 'd']), { added: 2, removed: 1 });
    assert.equal(packagePath('/x/venv/lib/python3.11/site-packages/synapse/handlers/message.py'), 'synapse/handlers/message.py');
    assert.equal(packagePath('synapse/util/caches.py'), 'synapse/util/caches.py');
    assert.equal(packagePath('/usr/lib/python3.11/asyncio/events.py'), undefined, 'outside the installed packages');
    assert.equal(packagePath('<frozen importlib._bootstrap>'), undefined);
    // Two functions of one name and no line: not told apart, rather than the first taken.
    const twice = [
      { qualname: 'f', first: 1, line: 1, end: 2 },
      { qualname: 'f', first: 4, line: 4, end: 5 },
    ];
    assert.match(String(locate(twice, 'f', undefined)), /2 functions are named f/);
    assert.equal(locate(twice, 'f', 4), twice[1]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('each hot function is compared between the two trees: changed with its size, unchanged, added, removed or not found', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-changed-'));
  try {
    for (const [side, text] of [
      ['a', BEFORE],
      ['b', AFTER],
    ] as const) {
      await mkdir(join(dir, side, 'synapse'), { recursive: true });
      await writeFile(join(dir, side, 'synapse', 'h.py'), text);
    }
    const venvFile = '/venv/lib/python3.11/site-packages/synapse/h.py';
    const result = await changedFunctions({ baseline: { root: join(dir, 'a'), python: 'python3' }, candidate: { root: join(dir, 'b'), python: 'python3' } }, [
      // py-spy's name and line for a decorated method: the qualified name at the decorator.
      { name: 'Handler.persist', file: venvFile, line: 5 },
      { name: 'Handler.__init__', file: 'synapse/h.py' },
      { name: 'helper', file: 'synapse/gone.py' },
      { name: 'fresh', file: 'synapse/h.py', line: 21 },
      { name: 'gone', file: 'synapse/h.py' },
      { name: 'select', file: '/usr/lib/python3.11/selectors.py' },
    ]);
    const by = (n: string) => result.find((r) => r.name === n);
    assert.deepEqual(by('Handler.persist'), {
      name: 'Handler.persist',
      file: venvFile,
      line: 5,
      path: 'synapse/h.py',
      status: 'changed',
      added: 2,
      removed: 0,
      baselineLine: 4,
      candidateLine: 5,
    });
    assert.equal(by('Handler.__init__')?.status, 'unchanged', 'moved, not changed');
    assert.equal(by('helper')?.status, 'not-found', 'a file in neither tree');
    assert.equal(by('fresh')?.status, 'added');
    assert.deepEqual(by('gone'), { name: 'gone', file: 'synapse/h.py', path: 'synapse/h.py', status: 'not-found', why: 'no function gone in synapse/h.py' });
    assert.equal(by('select')?.status, 'not-found');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

// The real installed source of the two releases the local gate compares, installed here if absent.
let trees: Record<(typeof RELEASES)[number], PythonTree>;
before(
  async () => {
    trees = await synapseTrees(RELEASES);
  },
  { timeout: 15 * 60_000 },
);

const run = promisify(execFile);

/** Ground truth from the interpreter itself: CPython's own code objects, or inspect's source of an object imported from the tree. */
async function python(tree: PythonTree, code: string, ...args: string[]): Promise<unknown> {
  const { stdout } = await run(tree.python, ['-c', code, ...args], { cwd: tree.root, maxBuffer: 1 << 26 });
  return JSON.parse(stdout);
}

const CODE_OBJECTS = `
import json, sys, types
out = {}
for path in sys.argv[1:]:
    found = []
    def walk(code):
        for k in code.co_consts:
            if isinstance(k, types.CodeType):
                found.append([k.co_qualname, k.co_firstlineno])
                walk(k)
    walk(compile(open(path, 'rb').read(), path, 'exec'))
    out[path] = sorted(found)
json.dump(out, sys.stdout)
`;

const SOURCE_OF = `
import importlib, inspect, json, sys
obj = importlib.import_module(sys.argv[1])
for part in sys.argv[2].split('.'):
    obj = getattr(obj, part)
lines, first = inspect.getsourcelines(inspect.unwrap(obj))
print(json.dumps({'first': first, 'source': ''.join(lines)}))
`;

async function sourceOf(tree: PythonTree, module: string, qualname: string): Promise<{ first: number; source: string }> {
  return (await python(tree, SOURCE_OF, module, qualname)) as { first: number; source: string };
}

test(
  'on the installed Synapse 1.163.2: every code object of every file is found with the name and first line CPython gives it',
  { timeout: 120_000 },
  async () => {
    const tree = trees['1.163.2'];
    const files = ((await readdir(join(tree.root, 'synapse'), { recursive: true })) as string[])
      .filter((f) => f.endsWith('.py'))
      .map((f) => join(tree.root, 'synapse', f));
    assert.ok(files.length > 500, `the whole package: ${files.length} files`);
    const truth = (await python(tree, CODE_OBJECTS, ...files)) as Record<string, [string, number][]>;
    const ours = await pythonFunctions(tree.python, files);
    let objects = 0;
    for (const file of files) {
      const fns = ours.get(file);
      assert.ok(Array.isArray(fns), `${file}: ${String(fns)}`);
      const byName = (a: [string, number], b: [string, number]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]);
      assert.deepEqual(fns.map((f): [string, number] => [f.qualname, f.first]).sort(byName), [...(truth[file] ?? [])].sort(byName), file);
      objects += fns.length;
    }
    assert.ok(objects > 9000, `${objects} code objects`);
  },
);

/** The status a hot function must have, from inspect's source of the same object in both trees. */
async function truthOf(module: string, qualname: string): Promise<{ baselineLine: number; candidateLine: number; same: boolean }> {
  const [b, c] = await Promise.all([sourceOf(trees['1.162.0'], module, qualname), sourceOf(trees['1.163.2'], module, qualname)]);
  return { baselineLine: b.first, candidateLine: c.first, same: b.source === c.source };
}

test(
  'on the installed Synapse 1.162.0 and 1.163.2: a decorated handler among fifteen on_GETs, an @overload-ed function and a nested one',
  { timeout: 120_000 },
  async () => {
    const hot = [
      // @cancellable: py-spy reports it at the decorator's line (722), one above its def.
      { name: 'RoomMemberListRestServlet.on_GET', file: `${trees['1.163.2'].root}/synapse/rest/client/room.py`, line: 722 },
      // Seven @overload stubs precede the implementation, all named parse_integer.
      { name: 'parse_integer', file: 'synapse/http/servlet.py', line: 97 },
      // stream.py holds four nested functions named f; the qualified name tells them apart.
      { name: 'StreamWorkerStore.get_membership_changes_for_user.<locals>.f', file: 'synapse/storage/databases/main/stream.py' },
      // decorated (@cancellable) in a file of several auth classes with methods of similar names
      { name: 'InternalAuth._wrapped_get_user_by_req', file: 'synapse/api/auth/internal.py', line: 139 },
    ];
    const [result, ...truths] = await Promise.all([
      changedFunctions({ baseline: trees['1.162.0'], candidate: trees['1.163.2'] }, hot),
      truthOf('synapse.rest.client.room', 'RoomMemberListRestServlet.on_GET'),
      truthOf('synapse.http.servlet', 'parse_integer'),
      truthOf('synapse.api.auth.internal', 'InternalAuth._wrapped_get_user_by_req'),
    ]);
    const expected = [truths[0], truths[1], undefined, truths[2]];
    expected.forEach((want, i) => {
      const got = result[i];
      if (!want || !got) return;
      assert.equal(got.status, want.same ? 'unchanged' : 'changed', `${hot[i]?.name}: ${JSON.stringify(got)}`);
      assert.ok(got.status === 'changed' || got.status === 'unchanged');
      assert.deepEqual([got.baselineLine, got.candidateLine], [want.baselineLine, want.candidateLine], hot[i]?.name);
    });
    assert.deepEqual([expected[0]?.baselineLine, expected[0]?.candidateLine], [731, 722], 'the handler moved between the releases');
    // The nested f: its own code object's first line, in both trees.
    const nested = result[2];
    assert.ok(nested && (nested.status === 'unchanged' || nested.status === 'changed'), JSON.stringify(nested));
    const firstLine = `import json, synapse.storage.databases.main.stream as m\nprint(json.dumps([k.co_firstlineno for k in m.StreamWorkerStore.get_membership_changes_for_user.__code__.co_consts if getattr(k, 'co_name', '') == 'f']))`;
    assert.deepEqual(
      [nested.baselineLine, nested.candidateLine],
      [((await python(trees['1.162.0'], firstLine)) as number[])[0], ((await python(trees['1.163.2'], firstLine)) as number[])[0]],
    );
  },
);

test('on real Synapse source with a renamed file: the function is found in the file the candidate no longer has', { timeout: 120_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-renamed-'));
  try {
    // The candidate: 1.163.2's synapse/http/ with servlet.py renamed to servlet_parsing.py.
    const candidate = join(dir, 'candidate');
    await cp(join(trees['1.163.2'].root, 'synapse', 'http'), join(candidate, 'synapse', 'http'), { recursive: true });
    await rename(join(candidate, 'synapse/http/servlet.py'), join(candidate, 'synapse/http/servlet_parsing.py'));
    const baseline = join(dir, 'baseline');
    await cp(join(trees['1.162.0'].root, 'synapse', 'http'), join(baseline, 'synapse', 'http'), { recursive: true });
    const [result] = await changedFunctions(
      { baseline: { root: baseline, python: trees['1.162.0'].python }, candidate: { root: candidate, python: trees['1.163.2'].python } },
      [{ name: 'parse_integer', file: 'synapse/http/servlet_parsing.py', line: 97 }],
    );
    const want = await truthOf('synapse.http.servlet', 'parse_integer');
    assert.deepEqual(result, {
      name: 'parse_integer',
      file: 'synapse/http/servlet_parsing.py',
      line: 97,
      path: 'synapse/http/servlet_parsing.py',
      baselinePath: 'synapse/http/servlet.py',
      status: want.same ? 'unchanged' : 'changed',
      baselineLine: want.baselineLine,
      candidateLine: want.candidateLine,
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
