import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { judgeSkips, parseAllowlist, testResults, type AllowedSkip } from '../../scripts/skip-guard/check.ts';
import { fileTree } from '../support/file-tree.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MIXED = 'test/fixtures/skip-guard/mixed.fixture.ts';
const RUNS = 'test/fixtures/skip-guard/runs.fixture.ts';
const FAILS = 'test/fixtures/skip-guard/fails.fixture.ts';

const MIXED_SKIPS: AllowedSkip[] = [
  { file: MIXED, test: 'skips by option', why: 'the tool it needs is absent from the fixture' },
  { file: MIXED, test: 'is still to do', why: 'a todo in the fixture, listed like a skip' },
  { file: MIXED, test: 'a suite > skips while running', why: 'skips itself at run time in the fixture' },
];

/** `npm test`'s script on the fixture suites, with an allowlist of the given entries; CI as given. */
function runSuite(files: string[], skips: AllowedSkip[], ci: boolean): { code: number | null; out: string } {
  const dir = fileTree({ 'skips.json': JSON.stringify({ skips }) }, 'skip-guard-');
  try {
    // This file runs under node --test, whose context variable would make the inner runner report to this one.
    const { NODE_TEST_CONTEXT: _context, CI: _ci, ...env } = process.env;
    const run = spawnSync('bash', ['scripts/run-tests.sh', ...files], {
      cwd: ROOT,
      env: { ...env, LOADGATE_SKIP_ALLOWLIST: join(dir, 'skips.json'), ...(ci ? { CI: 'true' } : {}) },
      encoding: 'utf8',
      timeout: 120_000,
    });
    return { code: run.status, out: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("a run whose every skip and todo is listed passes, and the console keeps the runner's own report", () => {
  const { code, out } = runSuite([MIXED], MIXED_SKIPS, true);
  assert.equal(code, 0, out);
  assert.match(out, /^(# |ℹ )pass 1$/m, 'the console reporter still prints its summary');
  assert.match(out, /^skip guard: 3 skipped or todo, 3 of them listed with a reason, 0 stale/m);
});

test('a skip the allowlist does not name fails the run, naming the test under its suite and its reason', () => {
  const { code, out } = runSuite([MIXED], MIXED_SKIPS.slice(0, 2), false);
  assert.equal(code, 1, out);
  assert.match(out, /UNLISTED test\/fixtures\/skip-guard\/mixed\.fixture\.ts: a suite > skips while running \(skip: found nothing to check\)/);
  assert.doesNotMatch(out, /UNLISTED .*skips by option/);
});

test('a listed test that no longer skips is reported as stale: a warning on a developer machine, a failure under CI', () => {
  const stale: AllowedSkip = { file: RUNS, test: 'used to skip', why: 'it needed a tool the fixture once lacked' };
  const local = runSuite([MIXED, RUNS], [...MIXED_SKIPS, stale], false);
  assert.equal(local.code, 0, local.out);
  assert.match(local.out, /STALE {4}test\/fixtures\/skip-guard\/runs\.fixture\.ts: used to skip \(ran and did not skip\)/);
  const ci = runSuite([MIXED, RUNS], [...MIXED_SKIPS, stale], true);
  assert.equal(ci.code, 1, ci.out);
  assert.match(ci.out, /STALE .*used to skip/);
});

test('a failing test fails the run even when no test skips', () => {
  const { code, out } = runSuite([FAILS], [], true);
  assert.equal(code, 1, out);
  assert.match(out, /^(# |ℹ )fail 1$/m);
  assert.match(out, /^skip guard: 0 skipped or todo/m);
});

test('results are named after their suites and parent tests; entries for files that did not run are judged only when the file is gone', () => {
  const line = (name: string, nesting: number, extra: object = {}) => ({
    file: join(ROOT, 'test/a.test.ts'),
    name,
    nesting,
    suite: false,
    passed: true,
    ...extra,
  });
  // node:test reports subtests before the test that holds them.
  const results = testResults(
    [line('inner', 2, { skip: 'why' }), line('middle', 1), line('sibling', 1, { todo: true }), line('outer', 0), line('top', 0)],
    ROOT,
  );
  assert.deepEqual(
    results.map((r) => `${r.file}|${r.name}|${r.status}|${r.reason}`),
    [
      'test/a.test.ts|outer|ran|',
      'test/a.test.ts|outer > middle|ran|',
      'test/a.test.ts|outer > middle > inner|skip|why',
      'test/a.test.ts|outer > sibling|todo|',
      'test/a.test.ts|top|ran|',
    ],
  );
  const entry = (file: string, name: string): AllowedSkip => ({ file, test: name, why: 'a reason long enough' });
  const report = judgeSkips(
    results,
    [
      entry('test/a.test.ts', 'outer > middle > inner'),
      entry('test/a.test.ts', 'renamed'),
      entry('test/b.test.ts', 'elsewhere'),
      entry('test/gone.test.ts', 'x'),
    ],
    (file) => file === 'test/b.test.ts',
  );
  assert.deepEqual(
    report.listed.map((l) => l.result.name),
    ['outer > middle > inner'],
  );
  assert.deepEqual(
    report.unlisted.map((r) => r.name),
    ['outer > sibling'],
  );
  assert.deepEqual(
    report.stale.map((s) => `${s.entry.test}: ${s.found}`),
    ['renamed: missing', 'x: no file'],
  );
});

test('the allowlist refuses an entry without a reason, an unknown field, and a test listed twice', () => {
  const text = (skips: object[]) => JSON.stringify({ skips });
  assert.throws(
    () => parseAllowlist(text([{ file: 'test/a.test.ts', test: 'x', why: '' }]), 'skips.json'),
    /skips\.json: skips\.0\.why: .*each entry is \{ "file", "test", "why" \}/,
  );
  assert.throws(
    () => parseAllowlist(text([{ file: 'test/a.test.ts', test: 'x', why: 'long enough reason', reason: 'y' }]), 'skips.json'),
    /skips\.json: skips\.0: .*reason/,
  );
  const twice = { file: 'test/a.test.ts', test: 'x', why: 'long enough reason' };
  assert.throws(() => parseAllowlist(text([twice, twice]), 'skips.json'), /test\/a\.test\.ts "x" is listed twice/);
  assert.throws(() => parseAllowlist('{', 'skips.json'), /skips\.json: not JSON/);
});

test("the repository's allowlist parses, and each entry names an existing test file and a test in it", () => {
  const entries = parseAllowlist(readFileSync(join(ROOT, 'test/skips.json'), 'utf8'), 'test/skips.json');
  for (const entry of entries) {
    assert.ok(existsSync(join(ROOT, entry.file)), `${entry.file} exists`);
    // The test's own name, as written in its file (a single-quoted name escapes its apostrophes).
    const name = entry.test.split(' > ').at(-1) ?? '';
    const source = readFileSync(join(ROOT, entry.file), 'utf8');
    assert.ok(source.includes(name) || source.includes(name.replaceAll("'", "\\'")), `${entry.file} has a test named "${name}"`);
  }
});
