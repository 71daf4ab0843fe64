import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareAndReport } from '../../src/compare/compare-and-report.ts';
import { attachChangedCode, NOT_INSTALLED } from '../../src/compare/changed-code.ts';
import { compareRuns } from '../../src/compare/compare-runs.ts';
import { tolerancesSchema } from '../../src/config/schema.ts';
import { renderMarkdown } from '../../src/report/markdown.ts';
import { changedFunctions, type PythonTree } from '../../src/chat-servers/synapse/changed-functions.ts';
import { LocalGateBench } from '../../src/bench/local/local-gate-bench.ts';
import type { RunOptions } from '../../src/bench/gate-plan.ts';
import type { Progress } from '../../src/bench/progress.ts';
import type { FunctionChange, ProfileDiff } from '../../src/results/profile.ts';
import { OutDir } from '../../src/util/out-dir.ts';
import { duets } from '../support/profiles.ts';
import { RELEASES, synapseTrees, TEST_CACHE_DIR } from '../support/synapse-installs.ts';
import { synapse } from '../../src/chat-servers/synapse/chat-server.ts';
import { bounded, withTempDir } from '../support/runs.ts';

const WORKLOAD = fileURLToPath(new URL('../fixtures/profiles/workload.py', import.meta.url));

/** The recorded workload as the candidate, and as the baseline without load_rows' injected loop (the "change"). */
async function trees(dir: string): Promise<{ baseline: PythonTree; candidate: PythonTree }> {
  const source = await readFile(WORKLOAD, 'utf8');
  const before = source.replace(/\n {4}if INJECTED == "load_rows":\n(?: {8}.*\n)+/, '\n');
  assert.notEqual(before, source, 'the injected block was taken out of the baseline');
  const roots = { baseline: { root: join(dir, 'a'), python: 'python3' }, candidate: { root: join(dir, 'b'), python: 'python3' } };
  for (const [{ root }, text] of [
    [roots.baseline, before],
    [roots.candidate, source],
  ] as const) {
    await mkdir(root, { recursive: true });
    await writeFile(join(root, 'workload.py'), text);
  }
  return roots;
}

const section = (readme: string, test: string) => {
  const start = readme.indexOf(`### The changed code behind the hot spots - ${test}`);
  return start < 0 ? '' : readme.slice(start, readme.indexOf('\n### ', start + 1));
};

test('the report names the grown function that changed between the installed trees, under its profile, and records it for a later compare', async () => {
  const { baseline, candidate } = duets('inj', 3);
  await withTempDir(async (dir) => {
    const roots = await trees(join(dir, 'trees'));
    const out = join(dir, 'report');
    let asked: string[] = [];
    await compareAndReport({
      baseline,
      candidate,
      outDir: out,
      changedFunctions: async (hot) => {
        asked = hot.map((f) => f.name);
        return changedFunctions(roots, hot);
      },
    });
    assert.equal(asked[0], 'load_rows', 'the significantly grown functions are asked about, the most grown first');
    const readme = await readFile(join(out, 'README.md'), 'utf8');
    const changed = section(readme, 'bounded');
    assert.ok(
      readme.indexOf('### Where the CPU went - bounded') < readme.indexOf('### The changed code behind the hot spots - bounded'),
      'under the profile section',
    );
    assert.match(changed, /\| `load_rows` \| `workload\.py`:25 \| \+4 \/ −0 lines \|/);
    const record = JSON.parse(await readFile(join(out, 'changed-code.json'), 'utf8'));
    assert.equal(record.baseline, '1.0.0');
    assert.equal(record.tests[0].test, 'bounded');
    assert.deepEqual(
      record.tests[0].functions.find((f: { name: string }) => f.name === 'load_rows'),
      { name: 'load_rows', file: 'workload.py', line: 25, path: 'workload.py', status: 'changed', added: 4, removed: 0, baselineLine: 25, candidateLine: 25 },
    );

    // compare again into the same directory, with no installs: the same report from the record.
    await compareAndReport({ baseline, candidate, outDir: out });
    assert.equal(await readFile(join(out, 'README.md'), 'utf8'), readme, 'the report is reproduced from changed-code.json');

    // Elsewhere, with neither installs nor a record: one line says so.
    const elsewhere = join(dir, 'elsewhere');
    await compareAndReport({ baseline, candidate, outDir: elsewhere });
    const other = section(await readFile(join(elsewhere, 'README.md'), 'utf8'), 'bounded');
    assert.equal(other.trim().split('\n').filter(Boolean).length, 2, 'a heading and one line');
    assert.ok(other.includes(NOT_INSTALLED));
    assert.equal(existsSync(join(elsewhere, 'changed-code.json')), false);
  });
});

test('an A/A report has no changed-code section, and a gate that finds nothing grown leaves no stale record', async () => {
  const { baseline, candidate } = duets('aa', 3);
  await withTempDir(async (dir) => {
    const out = join(dir, 'report');
    await compareAndReport({
      ...duets('inj', 3),
      outDir: out,
      changedFunctions: async (hot) => hot.map((f) => ({ ...f, status: 'unchanged' as const, baselineLine: 1, candidateLine: 1 })),
    });
    assert.ok(existsSync(join(out, 'changed-code.json')));
    let called = false;
    await compareAndReport({ baseline, candidate, outDir: out, changedFunctions: async () => ((called = true), []) });
    assert.equal(called, false, 'nothing grew, so nothing is asked');
    assert.doesNotMatch(await readFile(join(out, 'README.md'), 'utf8'), /changed code behind/);
    assert.equal(existsSync(join(out, 'changed-code.json')), false);
  });
});

// The two releases' installs in the test cache, made here when absent.
let installed: Record<(typeof RELEASES)[number], PythonTree>;
before(
  async () => {
    installed = await synapseTrees(RELEASES);
  },
  { timeout: 15 * 60_000 },
);

function grown(name: string, file: string, line: number | undefined, significant: boolean): FunctionChange {
  const side = { baseline: 1, candidate: 1.5 };
  return {
    name,
    file,
    ...(line !== undefined ? { line } : {}),
    selfPerKReq: side,
    totalPerKReq: side,
    change: 0.5,
    changePctOfTotal: 5,
    candidateSharePct: 5,
    z: 6,
    significant,
  };
}

test("the local bench diffs the cached Synapse 1.162.0 and 1.163.2 installs for the profile's significantly grown functions", async () => {
  const tolerances = tolerancesSchema.parse({});
  const comparison = compareRuns([bounded('1.162.0', 0)], [bounded('1.163.2', 0)], tolerances, { mode: 'sequential', minPairs: 1, maxPairs: 3 });
  const errors = `${installed['1.163.2'].root}/synapse/api/errors.py`;
  const diff: ProfileDiff = {
    pairs: 1,
    totalPerKReq: { baseline: 10, candidate: 11 },
    shrunk: [],
    rule: 'synthetic',
    problems: [],
    tree: { name: 'all', file: '', baseline: 10, candidate: 11, children: [] },
    grown: [
      grown('__init__', errors, 1008, true),
      grown('create_event', 'synapse/handlers/message.py', undefined, true),
      grown('encode_canonical_json', '/usr/lib/python3.11/json/encoder.py', undefined, true),
      grown('persist_events', 'synapse/storage/controllers/persist_events.py', undefined, false),
    ],
  };
  (comparison.tests[0] as { profile?: ProfileDiff }).profile = diff;
  const o = {
    cacheDir: TEST_CACHE_DIR,
    server: synapse,
    baseline: { role: 'baseline', label: '1.162.0', version: '1.162.0' },
    candidate: { role: 'candidate', label: '1.163.2', version: '1.163.2' },
  } as unknown as RunOptions;
  const bench = new LocalGateBench(o, {} as Progress, '/nonexistent');
  await withTempDir(async (dir) => {
    const out = await OutDir.open(dir);
    await attachChangedCode(out, comparison, (hot) => bench.changedFunctions(hot));
    const changed = comparison.tests[0]?.changedCode;
    assert.ok(changed && 'functions' in changed);
    assert.deepEqual(
      changed.functions.map((f) => [f.name, f.status]),
      [
        ['__init__', 'changed'],
        ['create_event', 'unchanged'],
        ['encode_canonical_json', 'not-found'],
      ],
      'the significant ones only',
    );
    const md = renderMarkdown(comparison, [], tolerances.listing);
    assert.match(section(md, 'bounded'), /1 of the 2 hot functions in the server's source changed between `1\.162\.0` and `1\.163\.2`/);
    assert.match(section(md, 'bounded'), /\| `__init__` \| `synapse\/api\/errors\.py`:1007 \| \+2 \/ −2 lines \|/);
  });
  // A side whose install is not in the cache: not known, rather than a wrong diff.
  const missing = new LocalGateBench(
    { ...o, candidate: { role: 'candidate', label: '0.0.1', version: '0.0.1' } } as RunOptions,
    {} as Progress,
    '/nonexistent',
  );
  assert.equal(await missing.changedFunctions([{ name: 'create_event', file: 'synapse/handlers/message.py' }]), undefined);
});

test('a changed-code.json that is not one is bad input naming the file and the fix, when the report needs it', async () => {
  await withTempDir(async (dir) => {
    const out = join(dir, 'report');
    await compareAndReport({
      ...duets('inj', 3),
      outDir: out,
      changedFunctions: async (hot) => hot.map((f) => ({ ...f, status: 'unchanged' as const, baselineLine: 1, candidateLine: 1 })),
    });
    await writeFile(join(out, 'changed-code.json'), '{"baseline": "1.0.0"}');
    await assert.rejects(
      compareAndReport({ ...duets('inj', 3), outDir: out }),
      (e: Error) => e.name === 'InputError' && /changed-code\.json: .*remove it, or compare into another --out directory/.test(e.message),
    );
    // Nothing grew: the report does not need it, so it is not read.
    await compareAndReport({ ...duets('aa', 3), outDir: out });
  });
});
