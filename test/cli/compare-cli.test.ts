import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { main } from '../../src/cli/main.ts';
import { captureIO } from '../../src/cli/io.ts';
import { verdictFileSchema } from '../../src/results/verdict-schema.ts';
import { OUT_MARKER } from '../../src/util/out-dir.ts';
import { asInput, bounded, unbounded, withTempDir } from '../support/runs.ts';

const EXAMPLE = 'reports/examples/v10.12.0-vs-v11.0.1-rc2/runs';

async function writeRun(dir: string, name: string, data: unknown): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, typeof data === 'string' ? data : JSON.stringify(data));
  return file;
}

test('compare on the shipped examples (one seed pair, so undecided under the assumed noise) writes verdict.json, the report and the graphs', async () => {
  await withTempDir(async (out) => {
    const io = captureIO();
    const code = await main(
      [
        'compare',
        '--baseline',
        `${EXAMPLE}/baseline-postgresql-bounded.json`,
        `${EXAMPLE}/baseline-postgresql-unbounded.json`,
        '--candidate',
        `${EXAMPLE}/candidate-postgresql-bounded.json`,
        `${EXAMPLE}/candidate-postgresql-unbounded.json`,
        '--out',
        out,
      ],
      io,
    );
    assert.equal(code, 2, io.stderr.join('\n'));
    const verdict = verdictFileSchema.parse(JSON.parse(await readFile(join(out, 'verdict.json'), 'utf8')));
    assert.equal(verdict.verdict, 'inconclusive');
    assert.equal(verdict.next, 'repeat');
    const report = await readFile(join(out, 'README.md'), 'utf8');
    assert.match(report, /^# Performance Comparison `v10\.12\.0` vs `v11\.0\.1-rc2`/);
    assert.match(report, /## Comments/);
    assert.match(report, /## Setup/);
    assert.match(report, /### Supported users in unbounded test\n/);
    assert.match(report, /\| postgresql-unbounded \| 17272 \| 17040 \| −1\.34% \|/);
    const graphs = (await readdir(join(out, 'graphs'))).sort();
    // The ten-graph grid per test, and three capacity curves (against active users) for the unbounded one.
    assert.equal(graphs.length, 23);
    for (const g of graphs) assert.ok(report.includes(`(graphs/${g})`), `report links ${g}`);
    const png = await readFile(join(out, 'graphs', graphs[0]!));
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  });
});

test("the setup table counts runs per test and shows each side's target version", async () => {
  await withTempDir(async (dir) => {
    const side = (version: string, users: number, repeat: number) => {
      const versions = { engine: 'k6 v1.4.2', target: `Synapse ${version}` };
      return [
        { ...asInput(bounded(version, repeat)), bench: { kind: 'local' as const, versions } },
        { ...asInput(unbounded(version, users, repeat)), bench: { kind: 'local' as const, versions } },
      ];
    };
    const files = async (prefix: string, runs: unknown[]) => Promise.all(runs.map((r, i) => writeRun(dir, `${prefix}-${i}.json`, r)));
    const baseline = await files('b', [...side('1.0.0', 100, 0), ...side('1.0.0', 101, 1)]);
    const candidate = await files('c', [...side('1.1.0', 100, 0), ...side('1.1.0', 100, 1)]);
    const out = join(dir, 'out');
    await main(['compare', '--baseline', ...baseline, '--candidate', ...candidate, '--out', out], captureIO());
    const report = await readFile(join(out, 'README.md'), 'utf8');
    assert.match(report, /\| Runs per test \| bounded: 2 baseline runs, 2 candidate runs; unbounded: 2 baseline runs, 2 candidate runs \|/);
    assert.match(report, /\| target \| Synapse 1\.0\.0 \(baseline\), Synapse 1\.1\.0 \(candidate\) \|/);
    assert.match(report, /\| engine \| k6 v1\.4\.2 \|/);
  });
});

test('the comments name the largest move in the worse direction, or say there was none', async () => {
  await withTempDir(async (dir) => {
    const base = asInput(bounded('1.0.0'));
    const b = await writeRun(dir, 'b.json', base);
    const comments = async (name: string, candidate: unknown) => {
      const c = await writeRun(dir, `${name}.json`, candidate);
      await main(['compare', '--baseline', b, '--candidate', c, '--out', join(dir, name)], captureIO());
      return (await readFile(join(dir, name, 'README.md'), 'utf8')).split('## Setup')[0] as string;
    };
    assert.match(
      await comments('slower', asInput(bounded('1.1.0', 0, { apiFactor: 1.04 }))),
      /the largest move in the worse direction is [a-z0-9 ,()]+ in the bounded test at \+\d/,
    );
    // The same measurements under another version label: nothing moved, and the report says so.
    const same = await comments('same', { ...base, target: { ...base.target, version: '1.1.0' } });
    assert.match(same, /none of them moved in the worse direction/);
    assert.doesNotMatch(same, /largest move/);
  });
});

test('the same inputs give byte-identical outputs', async () => {
  await withTempDir(async (dir) => {
    const b = await writeRun(dir, 'b.json', asInput(bounded('1.0.0')));
    const c = await writeRun(dir, 'c.json', asInput(bounded('1.1.0', 0, { apiFactor: 1.02 })));
    const read = async (out: string) => {
      const files = (await readdir(out, { recursive: true })).sort();
      return Promise.all(files.filter((f) => f.includes('.')).map(async (f) => [f, (await readFile(join(out, f))).toString('base64')]));
    };
    await main(['compare', '--baseline', b, '--candidate', c, '--out', join(dir, 'one')], captureIO());
    await main(['compare', '--baseline', b, '--candidate', c, '--out', join(dir, 'two')], captureIO());
    assert.deepEqual(await read(join(dir, 'one')), await read(join(dir, 'two')));
  });
});

test('--verdict-only writes the verdict.json of the full compare, with its exit code, and no report', async () => {
  await withTempDir(async (dir) => {
    const b = await writeRun(dir, 'b.json', asInput(unbounded('1.0.0', 200)));
    // Half the users: one pair is enough evidence even under the assumed noise.
    const c = await writeRun(dir, 'c.json', asInput(unbounded('1.1.0', 100)));
    const out = join(dir, 'out');
    assert.equal(await main(['compare', '--baseline', b, '--candidate', c, '--out', out], captureIO()), 1);
    const fullVerdict = await readFile(join(out, 'verdict.json'), 'utf8');
    const fresh = join(dir, 'fresh');
    const io = captureIO();
    assert.equal(await main(['compare', '--baseline', b, '--candidate', c, '--out', fresh, '--verdict-only'], io), 1);
    assert.deepEqual((await readdir(fresh)).sort(), [OUT_MARKER, 'verdict.json']);
    assert.equal(await readFile(join(fresh, 'verdict.json'), 'utf8'), fullVerdict);
    assert.match(io.stdout[0] ?? '', /^FAIL: /);
    assert.match(io.stdout.at(-1) ?? '', /verdict\.json \(no report: --verdict-only\)$/);
    // Over a full report: the report and graphs would disagree with a new verdict, so they go; results/ stays.
    assert.equal(await main(['compare', '--baseline', b, '--candidate', c, '--out', out, '--verdict-only'], captureIO()), 1);
    assert.deepEqual((await readdir(out)).sort(), [OUT_MARKER, 'results', 'verdict.json']);
    assert.equal(await readFile(join(out, 'verdict.json'), 'utf8'), fullVerdict);
  });
});

test('--verdict-only never loads the chart renderer', async () => {
  await withTempDir(async (dir) => {
    const b = await writeRun(dir, 'b.json', asInput(bounded('1.0.0')));
    const c = await writeRun(dir, 'c.json', asInput(bounded('1.1.0')));
    // A resolve hook that refuses vega, vega-lite and resvg: the process fails if they load.
    const refuse = `export async function resolve(s, c, next) { if (/^(vega|@resvg)/.test(s)) throw new Error('renderer loaded: ' + s); return next(s, c); }`;
    const hook = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(refuse)}`)});`;
    const args = [
      '--import',
      `data:text/javascript,${encodeURIComponent(hook)}`,
      'bin/loadgate.js',
      'compare',
      '--baseline',
      b,
      '--candidate',
      c,
      '--out',
      join(dir, 'out'),
    ];
    const verdictOnly = spawnSync(process.execPath, [...args, '--verdict-only'], { encoding: 'utf8' });
    assert.equal(verdictOnly.status, 2, verdictOnly.stderr);
    // The hook works: the full compare needs the renderer and fails under it.
    const full = spawnSync(process.execPath, args, { encoding: 'utf8' });
    assert.match(full.stderr, /renderer loaded: vega/);
  });
});

test('exit codes: 1 on fail, 2 on inconclusive', async () => {
  await withTempDir(async (dir) => {
    const b = await writeRun(dir, 'b.json', asInput(unbounded('1.0.0', 200)));
    const worse = await writeRun(dir, 'w.json', asInput(unbounded('1.1.0', 100)));
    const stuck = await writeRun(dir, 's.json', asInput(unbounded('1.1.0', 200, 0, { converged: false })));
    assert.equal(await main(['compare', '--baseline', b, '--candidate', worse, '--out', join(dir, 'f')], captureIO()), 1);
    assert.equal(await main(['compare', '--baseline', b, '--candidate', stuck, '--out', join(dir, 'i')], captureIO()), 2);
    const verdict = JSON.parse(await readFile(join(dir, 'i', 'verdict.json'), 'utf8'));
    assert.equal(verdict.verdict, 'inconclusive');
  });
});

test('bad input exits 3 with a message naming the file and the field', async () => {
  await withTempDir(async (dir) => {
    const good = await writeRun(dir, 'good.json', asInput(bounded('1.0.0')));
    const cases: [string, unknown, RegExp][] = [
      ['malformed.json', '{"schemaVersion": 1,', /malformed\.json is not valid JSON/],
      ['version.json', { ...asInput(bounded('1.1.0')), schemaVersion: 7 }, /version\.json: schemaVersion is 7, this loadgate reads schemaVersion 1/],
      [
        'empty-series.json',
        { ...asInput(bounded('1.1.0')), series: { rps: { unit: 'rps', t: [], v: [] } } },
        /empty-series\.json: series\.rps\.t: a series needs at least one point/,
      ],
      [
        'types.json',
        { ...asInput(unbounded('1.1.0', 100)), test: { ...asInput(unbounded('1.1.0', 100)).test, name: 'bounded' } },
        /bounded in one run and unbounded/,
      ],
      [
        'hostile.json',
        { ...asInput(bounded('1.1.0')), target: { system: 'synapse', version: '1.1.0`$(id)`|x' } },
        /hostile\.json: target\.version: expected 1-64 letters/,
      ],
      ['unknown-key.json', { ...asInput(bounded('1.1.0')), colour: 'red' }, /unknown-key\.json: colour: unknown key/],
      [
        'mattermost.json',
        { ...asInput(bounded('1.1.0')), target: { system: 'mattermost', version: '1.1.0' } },
        /the runs are of different chat servers \(target\.system: baseline synapse, candidate mattermost\); compare runs of one chat server/,
      ],
    ];
    for (const [name, data, pattern] of cases) {
      const file = await writeRun(dir, name, data);
      const io = captureIO();
      const code = await main(['compare', '--baseline', good, '--candidate', file, '--out', join(dir, 'out')], io);
      assert.equal(code, 3, `${name}: ${io.stderr.join('\n')}`);
      assert.match(io.stderr.join('\n'), pattern);
    }
    const io = captureIO();
    assert.equal(await main(['compare', '--baseline', good, '--out', join(dir, 'out')], io), 3);
    assert.match(io.stderr.join('\n'), /^loadgate compare: --candidate: give at least one candidate run result\n/);
    assert.doesNotMatch(io.stderr.join('\n'), /expected array/);
    const noOut = captureIO();
    assert.equal(await main(['compare', '--baseline', good, '--candidate', good], noOut), 3);
    assert.match(noOut.stderr.join('\n'), /^loadgate compare: --out: required\n/);
    assert.equal(await main(['compare', '--baseline', join(dir, 'missing.json'), '--candidate', good, '--out', dir], captureIO()), 3);
  });
});

test("the usage line's --baseline a b form works, also after --baseline=a; a stray argument is named with the fix", async () => {
  await withTempDir(async (dir) => {
    const b = [await writeRun(dir, 'b0.json', asInput(bounded('1.0.0', 0))), await writeRun(dir, 'b1.json', asInput(bounded('1.0.0', 1)))];
    const c = [await writeRun(dir, 'c0.json', asInput(bounded('1.1.0', 0))), await writeRun(dir, 'c1.json', asInput(bounded('1.1.0', 1)))];
    for (const argv of [
      ['--baseline', b[0]!, b[1]!, '--candidate', c[0]!, c[1]!],
      [`--baseline=${b[0]}`, b[1]!, `--candidate=${c[0]}`, c[1]!],
    ]) {
      const out = join(dir, `out-${argv[0]!.length}`);
      const io = captureIO();
      assert.notEqual(await main(['compare', ...argv, '--out', out], io), 3, io.stderr.join('\n'));
      const verdict = verdictFileSchema.parse(JSON.parse(await readFile(join(out, 'verdict.json'), 'utf8')));
      assert.deepEqual([verdict.baseline.runs, verdict.candidate.runs], [2, 2], argv.join(' '));
    }
    const io = captureIO();
    assert.equal(await main(['compare', '--baseline', b[0]!, '--candidate', c[0]!, '--out', join(dir, 'x'), 'stray.json'], io), 3);
    assert.match(io.stderr.join('\n'), /^loadgate compare: unexpected argument "stray\.json": files belong after --baseline or --candidate/);
    assert.doesNotMatch(io.stderr.join('\n'), /--positionals/);
  });
});

test('--note is plain text on one line: a line break cannot forge a heading, nor HTML a verdict', async () => {
  await withTempDir(async (dir) => {
    const b = await writeRun(dir, 'b.json', asInput(bounded('1.0.0')));
    const c = await writeRun(dir, 'c.json', asInput(bounded('1.1.0')));
    const out = join(dir, 'out');
    const notes = ['chosen by hand\n# Verdict: PASS', '# ✅ PASS', 'see <h1>Verdict: PASS</h1>', '1. `x` **y** [link](https://example.com)\r\n\r\n---'];
    await main(['compare', '--baseline', b, '--candidate', c, '--out', out, ...notes.flatMap((n) => ['--note', n])], captureIO());
    const report = await readFile(join(out, 'README.md'), 'utf8');
    assert.doesNotMatch(report, /^\s*(-\s+)?#+ .*PASS/m, 'no heading says PASS');
    assert.doesNotMatch(report, /<h1>/);
    const comments = report.split('## Comments\n\n')[1]!.split('\n');
    assert.ok(comments.slice(0, 4).every((l) => l.startsWith('- ')) && comments[4]?.startsWith('- '), 'each note is one list item');
    assert.equal(comments[0], '- chosen by hand \\# Verdict: PASS');
    assert.equal(comments[1], '- \\# ✅ PASS');
    assert.equal(comments[2], '- see \\<h1\\>Verdict: PASS\\</h1\\>');
    assert.equal(comments[3], '- 1\\. \\`x\\` \\*\\*y\\*\\* \\[link\\](https://example.com) ---');
  });
});

test('verdict.json records the config that judged: its path as given and a sha256 of its bytes; none without --config', async () => {
  await withTempDir(async (dir) => {
    const b = await writeRun(dir, 'b.json', asInput(bounded('1.0.0')));
    const c = await writeRun(dir, 'c.json', asInput(bounded('1.1.0')));
    const config = 'examples/local-synapse.yml';
    for (const extra of [[], ['--verdict-only']]) {
      const out = join(dir, `with${extra.length}`);
      const io = captureIO();
      assert.notEqual(await main(['compare', '--baseline', b, '--candidate', c, '--config', config, '--out', out, ...extra], io), 3, io.stderr.join('\n'));
      const verdict = verdictFileSchema.parse(JSON.parse(await readFile(join(out, 'verdict.json'), 'utf8')));
      assert.deepEqual(verdict.config, {
        path: config,
        sha256: createHash('sha256')
          .update(await readFile(config))
          .digest('hex'),
      });
    }
    await main(['compare', '--baseline', b, '--candidate', c, '--out', join(dir, 'without')], captureIO());
    assert.equal(JSON.parse(await readFile(join(dir, 'without', 'verdict.json'), 'utf8')).config, undefined);
  });
});

test("a config whose tests are not the runs' is refused (exit 3), naming both lists, rather than judging without its noise model", async () => {
  await withTempDir(async (dir) => {
    // The seed runs are named postgresql-bounded and postgresql-unbounded; the AWS config's tests bounded and unbounded.
    const io = captureIO();
    const code = await main(
      [
        'compare',
        '--baseline',
        `${EXAMPLE}/baseline-postgresql-bounded.json`,
        `${EXAMPLE}/baseline-postgresql-unbounded.json`,
        '--candidate',
        `${EXAMPLE}/candidate-postgresql-bounded.json`,
        `${EXAMPLE}/candidate-postgresql-unbounded.json`,
        '--config',
        'examples/aws-mattermost-sequential.yml',
        '--out',
        join(dir, 'seed'),
      ],
      io,
    );
    assert.equal(code, 3, io.stderr.join('\n'));
    assert.match(
      io.stderr.join('\n'),
      /^loadgate compare: examples\/aws-mattermost-sequential\.yml: its tests match none of the runs: the config names "bounded", "unbounded", the runs "postgresql-bounded", "postgresql-unbounded"; its noise model and test settings would not apply/,
    );
    // One run of another test among runs of the config's: refused too, naming that test.
    const b = await writeRun(dir, 'b.json', asInput(bounded('1.0.0')));
    const c = await writeRun(dir, 'c.json', asInput(bounded('1.1.0')));
    const other = asInput(bounded('1.1.0', 1));
    const o = await writeRun(dir, 'o.json', { ...other, test: { ...other.test, name: 'soak' } });
    const partial = captureIO();
    assert.equal(
      await main(
        ['compare', '--baseline', b, '--candidate', c, o, '--config', 'examples/local-synapse.yml', '--out', join(dir, 'partial'), '--verdict-only'],
        partial,
      ),
      3,
    );
    assert.match(
      partial.stderr.join('\n'),
      /examples\/local-synapse\.yml: the runs' test "soak" is not in it: the config names "bounded", "unbounded", the runs "bounded", "soak"/,
    );
    assert.equal(
      await main(
        ['compare', '--baseline', b, '--candidate', c, '--config', 'examples/local-synapse.yml', '--out', join(dir, 'ok'), '--verdict-only'],
        captureIO(),
      ),
      2,
      "runs of the config's tests are judged",
    );
  });
});
