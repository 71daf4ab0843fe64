import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publishFinish } from '../../src/github/publish.ts';
import { addReportNotes } from '../../src/github/report-notes.ts';
import { MAX_COMMITTED_FILES, packForCommit } from '../../src/github/report-pack.ts';
import { tarGz } from '../../src/github/tar.ts';
import { GitHubStandin, startStandin } from '../support/github-standin/server.ts';
import { contextFor, pngGraph, verdictFile, writeReport } from './fixtures.ts';

const BASELINE = 'v1.2.0';
const CANDIDATE = 'v1.3.0-rc1';
const BRANCH = `perf-report/${BASELINE}-vs-${CANDIDATE}`;
const DIR = `reports/${BASELINE}-vs-${CANDIDATE}`;

let warm: GitHubStandin;
before(async () => {
  warm = await startStandin();
});
after(() => warm.close());

function untar(archive: Buffer): Map<string, Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'lg-untar-'));
  try {
    writeFileSync(join(dir, 'a.tar.gz'), archive);
    execFileSync('tar', ['-xzf', 'a.tar.gz'], { cwd: dir });
    const out = new Map<string, Buffer>();
    const walk = (rel: string) => {
      for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
        const path = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) walk(path);
        else if (path !== 'a.tar.gz') out.set(path, readFileSync(join(dir, path)));
      }
    };
    walk('');
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('tar.gz: GNU tar reads it back byte for byte, long paths and binary content included', () => {
  const long = `results/${'d'.repeat(90)}/${'f'.repeat(80)}.json`;
  const entries = [
    { path: 'results/a.json', content: Buffer.from('{"a":1}\n') },
    { path: 'results/empty.json', content: Buffer.alloc(0) },
    { path: 'results/block.bin', content: Buffer.alloc(512, 7) },
    { path: long, content: pngGraph('x') },
  ];
  const files = untar(tarGz(entries));
  assert.deepEqual([...files.keys()].sort(), entries.map((e) => e.path).sort());
  for (const e of entries) assert.ok(files.get(e.path)?.equals(e.content), e.path);
  assert.ok(tarGz(entries).equals(tarGz(entries)), 'the same files give the same bytes');
});

function runFiles(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    path: `results/${i % 2 ? 'candidate' : 'baseline'}-t${Math.floor(i / 40)}-${i % 40}.json`,
    content: Buffer.from(`{"run":${i}}\n`),
  }));
}

test('small reports are committed file by file', () => {
  const files = [{ path: 'README.md', content: Buffer.from('# r\n') }, ...runFiles(40)];
  const packed = packForCommit(files);
  assert.equal(packed.files.length, 41);
  assert.deepEqual(packed.packed, []);
});

test('800 run results (20 tests x 20 repeats x 2) are packed into one archive, graphs stay plain', () => {
  const graphs = Array.from({ length: 180 }, (_, i) => ({ path: `graphs/g${i}.png`, content: Buffer.from([i]) }));
  const files = [{ path: 'README.md', content: Buffer.from('# r\n') }, { path: 'verdict.json', content: Buffer.from('{}') }, ...graphs, ...runFiles(800)];
  const packed = packForCommit(files);
  assert.ok(packed.files.length <= MAX_COMMITTED_FILES, `${packed.files.length} files`);
  assert.deepEqual(packed.packed, ['results']);
  assert.ok(packed.files.some((f) => f.path === 'graphs/g179.png'));
  const archive = packed.files.find((f) => f.path === 'results.tar.gz');
  assert.ok(archive);
  const inside = untar(archive.content);
  assert.equal(inside.size, 800);
  assert.equal(inside.get('results/baseline-t0-0.json')?.toString(), '{"run":0}\n');
  assert.match(packed.notes[0] ?? '', /800 files of `results\/` are packed in `results\.tar\.gz`/);
});

test('report notes go first in the README comments, or in their own section', () => {
  const readme = '# Performance Comparison `a` vs `b`\n\n**Verdict: PASS**\n\n## Comments\n\n- finding one\n- finding two\n\n## Setup\n';
  const [out] = addReportNotes([{ path: 'README.md', content: Buffer.from(readme) }], ['Baseline choice: v1 is the newest.']);
  assert.match(out?.content.toString() ?? '', /## Comments\n\n- Baseline choice: v1 is the newest\.\n- finding one\n/);
  const [bare] = addReportNotes([{ path: 'README.md', content: Buffer.from('# Title\n\nbody\n') }], ['a note']);
  assert.equal(bare?.content.toString(), '# Title\n\n## Notes from publishing\n\n- a note\n\nbody\n');
});

test('publish: a report of 800 run results is committed within the budget, with the archive and a note', async (t) => {
  const s = await new GitHubStandin({ tags: [BASELINE] }).start();
  t.after(() => s.close());
  const sha = s.commitOnDefaultBranch('rc1');
  s.addTag(CANDIDATE, sha);
  const extra: Record<string, string> = {};
  for (const f of runFiles(800)) extra[f.path] = f.content.toString();
  const report = await writeReport(verdictFile('pass'), extra);
  t.after(() => report.cleanup());
  const result = await publishFinish(contextFor(s), { checkName: 'loadgate', baseline: BASELINE, candidate: CANDIDATE, reportDir: report.dir });
  assert.equal(result.reportError, undefined, result.reportError?.message);
  const files = s.filesOnBranch(BRANCH);
  const mine = [...files.keys()].filter((p) => p.startsWith(`${DIR}/`));
  assert.ok(mine.length <= MAX_COMMITTED_FILES, `${mine.length} files committed`);
  assert.ok(files.has(`${DIR}/results.tar.gz`));
  assert.equal([...files.keys()].filter((p) => p.startsWith(`${DIR}/results/`)).length, 0);
  assert.equal(untar(files.get(`${DIR}/results.tar.gz`) as Buffer).size, 801, 'the fixture run result and the 800');
  assert.match(files.get(`${DIR}/README.md`)?.toString() ?? '', /packed in `results\.tar\.gz`/);
  assert.ok(s.requests.filter((r) => r.method !== 'get').length < 500 / 2, 'two publishes fit in the hourly content budget');
  assert.equal(s.checkRuns[0]?.conclusion, 'success');
  assert.deepEqual(s.rejected, []);
});

test('publish: the baseline choice is written into the committed README', async (t) => {
  const s = await new GitHubStandin({ tags: [BASELINE] }).start();
  t.after(() => s.close());
  s.addTag(CANDIDATE, s.commitOnDefaultBranch('rc1'));
  const report = await writeReport(verdictFile('pass'));
  t.after(() => report.cleanup());
  const reason = 'v1.2.0 is the newest stable release below v1.3.0-rc1 in semver order (3 tags looked at)';
  const choice = {
    candidate: CANDIDATE,
    baseline: BASELINE,
    reason,
    considered: 3,
    skipped: { prerelease: 1, notBelow: 0, notVersion: 1, patternMismatch: 0 },
  };
  await publishFinish(contextFor(s), { checkName: 'loadgate', baseline: BASELINE, candidate: CANDIDATE, reportDir: report.dir, baselineChoice: choice });
  const files = s.filesOnBranch(BRANCH);
  const readme = files.get(`${DIR}/README.md`)?.toString() ?? '';
  assert.ok(readme.includes(`Baseline choice: ${reason}.`), readme);
  assert.equal(JSON.parse(files.get(`${DIR}/baseline-choice.json`)?.toString() ?? '{}').reason, reason);
  assert.ok(readFileSync(join(report.dir, 'README.md'), 'utf8').indexOf('Baseline choice') < 0, 'the report directory itself is not modified');
});
