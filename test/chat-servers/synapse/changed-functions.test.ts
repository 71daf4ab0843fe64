import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { changedFunctions, defBlocks, lineChanges, packagePath } from '../../../src/chat-servers/synapse/changed-functions.ts';

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

test('def blocks are found with their enclosing classes, multi-line signatures and blank lines inside', () => {
  const blocks = defBlocks(BEFORE);
  assert.deepEqual(blocks.map((b) => [b.qualname, b.start, b.end]), [['Handler.persist', 5, 12], ['Handler.__init__', 14, 15], ['helper', 18, 19]]);
  assert.deepEqual(lineChanges(['a', 'b', 'c'], ['a', 'x', 'c', 'd']), { added: 2, removed: 1 });
  assert.equal(packagePath('/x/venv/lib/python3.11/site-packages/synapse/handlers/message.py'), 'synapse/handlers/message.py');
  assert.equal(packagePath('synapse/util/caches.py'), 'synapse/util/caches.py');
  assert.equal(packagePath('/usr/lib/python3.11/asyncio/events.py'), undefined, 'outside the installed packages');
  assert.equal(packagePath('<frozen importlib._bootstrap>'), undefined);
});

test('each hot function is compared between the two trees: changed with its size, unchanged, added, removed or not found', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-changed-'));
  try {
    for (const [side, text] of [['a', BEFORE], ['b', AFTER]] as const) {
      await mkdir(join(dir, side, 'synapse'), { recursive: true });
      await writeFile(join(dir, side, 'synapse', 'h.py'), text);
    }
    const venvFile = '/venv/lib/python3.11/site-packages/synapse/h.py';
    const result = await changedFunctions({ baseline: join(dir, 'a'), candidate: join(dir, 'b') }, [
      { name: 'persist', file: venvFile, line: 12 },
      { name: '__init__', file: 'synapse/h.py' },
      { name: 'helper', file: 'synapse/h.py' },
      { name: 'fresh', file: 'synapse/h.py' },
      { name: 'gone', file: 'synapse/h.py' },
      { name: 'select', file: '/usr/lib/python3.11/selectors.py' },
    ]);
    const by = (n: string) => result.find((r) => r.name === n);
    assert.deepEqual(by('persist'), { name: 'persist', file: venvFile, line: 12, path: 'synapse/h.py', status: 'changed', added: 2, removed: 0, baselineLine: 5, candidateLine: 6 });
    assert.equal(by('__init__')?.status, 'unchanged', 'moved, not changed');
    assert.equal(by('helper')?.status, 'removed');
    assert.equal(by('fresh')?.status, 'added');
    assert.deepEqual(by('gone'), { name: 'gone', file: 'synapse/h.py', path: 'synapse/h.py', status: 'not-found', why: 'no def gone in synapse/h.py' });
    assert.equal(by('select')?.status, 'not-found');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

const SITE = (v: string) => fileURLToPath(new URL(`../../../.cache/loadgate/synapse/${v}/lib/python3.11/site-packages`, import.meta.url));
const real = existsSync(SITE('1.162.0')) && existsSync(SITE('1.163.2')) ? false : 'no cached Synapse 1.162.0 and 1.163.2 venvs';

test('on the installed Synapse 1.162.0 and 1.163.2: the one __init__ that changed among many, and unchanged hot paths', { skip: real }, async () => {
  const result = await changedFunctions({ baseline: SITE('1.162.0'), candidate: SITE('1.163.2') }, [
    // errors.py has many __init__ methods; the line picks SlidingSyncUnknownPosition's, which gained a message parameter.
    { name: '__init__', file: `${SITE('1.163.2')}/synapse/api/errors.py`, line: 1008 },
    { name: '__init__', file: `${SITE('1.163.2')}/synapse/api/errors.py`, line: 203 },
    { name: 'create_event', file: 'synapse/handlers/message.py' },
  ]);
  assert.deepEqual(result.map((r) => (r.status === 'changed' ? [r.status, r.added, r.removed, r.candidateLine] : [r.status])), [['changed', 2, 2, 1007], ['unchanged'], ['unchanged']]);
});
