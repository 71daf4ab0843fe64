import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appendRecord, parseHistoryText, readHistory } from '../../src/history/store.ts';
import { ancestors, chainCheck, chooseAnchor, lineOf } from '../../src/history/chain.ts';
import { seriesOf } from '../../src/history/series.ts';
import { InputError } from '../../src/util/errors.ts';

const FIXTURES = 'test/fixtures/history';
const OWNER = { product: 'synapse', profile: 'synapse-local-duet' };

test('a good history reads back every record, oldest first, and chains its steps: log ratios add, and so do their variances', async () => {
  const records = await readHistory(join(FIXTURES, 'good'), OWNER);
  assert.deepEqual(
    records.map((r) => `${r.baseline}>${r.candidate}`),
    ['1.160.0>1.161.0', '1.161.0>1.162.0', '1.162.0>1.163.2'],
  );
  const choice = chooseAnchor('1.160.0', records, '1.163.2', '1.164.0');
  assert.equal(choice.anchor, '1.160.0');
  assert.deepEqual(
    choice.steps?.map((r) => r.candidate),
    ['1.161.0', '1.162.0', '1.163.2'],
  );
  const chained = chainCheck(choice.steps!, 'unbounded.supportedUsers');
  assert.ok(!('missing' in chained));
  assert.ok(Math.abs(chained.logRatio - (-0.0213 - 0.0187 - 0.0241)) < 1e-12);
  assert.ok(Math.abs(chained.variance - 3 * 0.0148 ** 2) < 1e-12);
  assert.equal(chained.df, 12);
  // The series: the level since 1.160.0 at every release, its interval widening with each step.
  const { releases, series } = seriesOf(records, '1.163.2', 0.95);
  assert.deepEqual(releases, ['1.160.0', '1.161.0', '1.162.0', '1.163.2']);
  const users = series.find((s) => s.id === 'unbounded.supportedUsers')!;
  const widths = users.points.map((p) => p.interval[1] - p.interval[0]);
  assert.ok(widths[1]! < widths[2]! && widths[2]! < widths[3]!, String(widths));
  assert.ok(Math.abs(users.points[3]!.deltaPct - Math.expm1(-0.0641) * 100) < 1e-9);
});

test('a missing history folder is an empty history (the first gate of a profile); an appended record reads back as written', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lg-history-'));
  try {
    const folder = join(dir, 'history');
    assert.deepEqual(await readHistory(folder, OWNER), []);
    const [first] = await readHistory(join(FIXTURES, 'good'), OWNER);
    const file = await appendRecord(folder, first!);
    await appendRecord(folder, { ...first!, date: '2026-11-23T10:00:00.000Z' });
    assert.equal((await readFile(file, 'utf8')).split('\n').filter(Boolean).length, 2, 'append-only: a second gate of the same pair adds a line');
    assert.deepEqual(
      (await readHistory(folder, OWNER)).map((r) => r.date),
      ['2026-11-20T10:00:00.000Z', '2026-11-23T10:00:00.000Z'],
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a damaged record is refused by file and line, saying what is wrong and the fix, never skipped', async () => {
  await assert.rejects(readHistory(join(FIXTURES, 'damaged'), OWNER), (e: unknown) => {
    assert.ok(e instanceof InputError);
    assert.match(
      e.message,
      /damaged\/1\.161\.0-vs-1\.162\.0\.jsonl:2: not a JSON record \(.*\); the line is damaged: restore it from the report's history-record\.json, or delete it/,
    );
    return true;
  });
  const file = join(FIXTURES, 'damaged', 'z-missing-field.jsonl');
  assert.throws(
    () => parseHistoryText(require_(file), file, OWNER),
    (e: unknown) => e instanceof InputError && /z-missing-field\.jsonl:1: a damaged record \(checks\.2\.se: .*\); restore the line/.test(e.message),
  );
});

test("a foreign record is refused by name: another profile's, or a line that is no history record at all", async () => {
  await assert.rejects(
    readHistory(join(FIXTURES, 'foreign'), OWNER),
    (e: unknown) =>
      e instanceof InputError &&
      /foreign\/other-profile\.jsonl:1: a record of synapse profile "synapse-local" in the history of synapse profile "synapse-local-duet"; each profile keeps its own history.*move the file/.test(
        e.message,
      ),
  );
  const file = join(FIXTURES, 'foreign', 'verdict-line.jsonl');
  assert.throws(
    () => parseHistoryText(require_(file), file, OWNER),
    (e: unknown) =>
      e instanceof InputError &&
      /verdict-line\.jsonl:1: not a loadgate history record \(kind null, expected "loadgate-history"\); .*move this file out of it/.test(e.message),
  );
  // Read for its own profile, the same record is no longer foreign.
  assert.equal(parseHistoryText(require_(join(FIXTURES, 'foreign', 'other-profile.jsonl')), 'x', { product: 'synapse', profile: 'synapse-local' }).length, 1);
});

test("a product's two release branches: each chain follows its own line, and a pattern anchor takes the last match on that line", async () => {
  const records = await readHistory(join(FIXTURES, 'branches'), OWNER);
  // The main line: 1.160.0 → 1.161.0 → 1.162.0; the maintenance branch 1.160.0 → 1.160.1 → 1.160.2.
  const main = chooseAnchor('1.160.0', records, '1.162.0', '1.163.0');
  assert.deepEqual(
    main.steps?.map((r) => `${r.baseline}>${r.candidate}`),
    ['1.160.0>1.161.0', '1.161.0>1.162.0'],
  );
  const maintenance = chooseAnchor('1.160.0', records, '1.160.2', '1.160.3');
  assert.deepEqual(
    maintenance.steps?.map((r) => `${r.baseline}>${r.candidate}`),
    ['1.160.0>1.160.1', '1.160.1>1.160.2'],
  );
  // 1.160.* on the main line is 1.160.0 (1.160.1 and 1.160.2 are not its ancestors); on the branch, the baseline itself.
  assert.equal(chooseAnchor('1.160.*', records, '1.162.0', '1.163.0').anchor, '1.160.0');
  assert.equal(chooseAnchor('1.160.*', records, '1.160.2', '1.160.3').anchor, '1.160.2');
  assert.deepEqual(chooseAnchor('1.159.*', records, '1.162.0', '1.163.0'), {
    anchor: null,
    steps: null,
    why: 'no release matching 1.159.* before 1.163.0 in the history',
  });
  assert.equal(chooseAnchor('1.160.1', records, '1.162.0', '1.163.0').steps, null, 'the branch release is not on the main line');
  assert.deepEqual(
    lineOf(records, '1.162.0').map((r) => r.candidate),
    ['1.161.0', '1.162.0'],
  );
  assert.deepEqual(
    ancestors(records, '1.160.2').map((a) => a.release),
    ['1.160.2', '1.160.1', '1.160.0'],
  );
});

function require_(file: string): string {
  return readFileSync(file, 'utf8');
}

test('loadgate history prints the recorded gates oldest first, or CSV for other tools, and refuses a damaged history with exit 3', async () => {
  const { main } = await import('../../src/cli/main.ts');
  const lines: string[] = [];
  const errors: string[] = [];
  const io = { out: (l: string) => lines.push(l), err: (l: string) => errors.push(l) };
  assert.equal(await main(['history', join(FIXTURES, 'good')], io), 0);
  assert.deepEqual(
    lines
      .join('\n')
      .split('\n')
      .map((l) => l.split('  ').slice(0, 2).join('  ')),
    ['2026-11-20  1.160.0 → 1.161.0', '2026-11-21  1.161.0 → 1.162.0', '2026-11-22  1.162.0 → 1.163.2'],
  );
  assert.match(lines[0] ?? '', /supported users −2\.1 % \(se 1\.5 %\)/);
  lines.length = 0;
  assert.equal(await main(['history', '--format', 'csv', join(FIXTURES, 'good')], io), 0);
  const rows = lines.join('\n').split('\n');
  assert.equal(rows[0], 'date,product,profile,baseline,candidate,verdict,pairs,check,test,worse,gating,logRatio,se,df');
  assert.equal(rows.length, 1 + 3 * 3);
  assert.ok(
    rows.includes('2026-11-22T10:00:00.000Z,synapse,synapse-local-duet,1.162.0,1.163.2,pass,1,unbounded.supportedUsers,unbounded,lower,true,-0.0241,0.0148,12'),
  );
  assert.equal(await main(['history', join(FIXTURES, 'damaged')], io), 3);
  assert.match(errors.join('\n'), /1\.161\.0-vs-1\.162\.0\.jsonl:2: not a JSON record/);
  assert.equal(
    await main(['history', '--config', 'examples/local-synapse.yml', join(FIXTURES, 'good')], io),
    3,
    "another profile's history, for this config, is foreign",
  );
});
