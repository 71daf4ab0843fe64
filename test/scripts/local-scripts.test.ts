/**
 * The main job's scripts, run in a copy of the repository's layout with every command
 * they would install or start replaced by a stub that records its arguments: what
 * scripts/gate-local.sh passes to `loadgate run`, and what scripts/setup.sh installs for
 * the gate and, with --tests, for the tests.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileTree } from '../support/file-tree.ts';

const script = (name: string) => readFileSync(join('scripts', name), 'utf8');

/** A stub command that appends one line per call, its arguments joined by tabs, to <root>/calls/<name>. */
const stub = (name: string, then = '') => `#!/usr/bin/env bash\nprintf '%s\\n' "$(IFS=$'\\t'; echo "$*")" >> "$STUB_CALLS/${name}"\n${then}`;

function layout(
  files: Record<string, string>,
  stubs: Record<string, string>,
): { root: string; run: (args: string[], env?: Record<string, string>) => { status: number | null; stderr: string }; calls: (name: string) => string[][] } {
  const root = fileTree(
    { ...files, 'scripts/go-tools.txt': script('go-tools.txt'), ...Object.fromEntries(Object.entries(stubs).map(([n, body]) => [`stubs/${n}`, body])) },
    'lg-scripts-',
  );
  for (const n of Object.keys(stubs)) chmodSync(join(root, 'stubs', n), 0o755);
  mkdirSync(join(root, 'calls'));
  return {
    root,
    run: (args, env = {}) => {
      const r = spawnSync('bash', args, {
        cwd: root,
        encoding: 'utf8',
        env: { PATH: `${join(root, 'stubs')}:${process.env.PATH}`, HOME: root, STUB_CALLS: join(root, 'calls'), ...env },
      });
      return { status: r.status, stderr: r.stderr };
    },
    calls: (name) =>
      existsSync(join(root, 'calls', name))
        ? readFileSync(join(root, 'calls', name), 'utf8')
            .trimEnd()
            .split('\n')
            .map((l) => l.split('\t'))
        : [],
  };
}

test("gate-local.sh writes to a git-ignored folder under runs/local/, never over the committed sample, and warm-starts only from that profile's earlier gates on this machine", (t) => {
  const { root, run, calls } = layout({ 'scripts/gate-local.sh': script('gate-local.sh'), 'scripts/setup.sh': stub('setup') }, { npx: stub('npx') });
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const first = run(['scripts/gate-local.sh', '--max-repeats', '4']);
  assert.equal(first.status, 0, first.stderr);
  const out = 'runs/local/local-synapse-duet/1.162.0-vs-1.163.2';
  // The profile's folder is created for the first gate on a machine: its history starts there.
  assert.deepEqual(calls('npx')[0], [
    '--no-install',
    'loadgate',
    'run',
    '--config',
    'examples/local-synapse-duet.yml',
    '--baseline',
    '1.162.0',
    '--candidate',
    '1.163.2',
    '--out',
    out,
    '--history',
    'runs/local/local-synapse-duet',
    '--max-repeats',
    '4',
  ]);
  assert.ok(existsSync(join(root, 'runs/local/local-synapse-duet')));
  assert.deepEqual(calls('setup'), [['']], 'the gate set-up, without --tests');
  // The versions a gate of the history takes.
  assert.equal(run(['scripts/gate-local.sh'], { LOADGATE_BASELINE: '1.160.0', LOADGATE_CANDIDATE: '1.161.0' }).status, 0);
  assert.deepEqual(calls('npx')[1]?.slice(5, 13), [
    '--baseline',
    '1.160.0',
    '--candidate',
    '1.161.0',
    '--out',
    'runs/local/local-synapse-duet/1.160.0-vs-1.161.0',
    '--history',
    'runs/local/local-synapse-duet',
  ]);
  assert.equal(run(['scripts/gate-local.sh'], { LOADGATE_CREEP_ANCHOR: '1.160.0' }).status, 0);
  assert.deepEqual(calls('npx')[2]?.slice(13), ['--creep-anchor', '1.160.0'], 'the creep check, when asked for');
  // The sequential profile has its own folder, so neither profile warm-starts from the other's capacity.
  assert.equal(run(['scripts/gate-local.sh'], { LOADGATE_CONFIG: 'examples/local-synapse.yml' }).status, 0);
  assert.deepEqual(calls('npx')[3]?.slice(9), ['--out', 'runs/local/local-synapse/1.162.0-vs-1.163.2', '--history', 'runs/local/local-synapse']);
  for (const dir of [out, 'runs/local/local-synapse/1.162.0-vs-1.163.2']) {
    const ignored = spawnSync('git', ['check-ignore', '-q', `${dir}/verdict.json`], { encoding: 'utf8' });
    assert.equal(ignored.status, 0, `${dir} is git-ignored in this repository`);
  }
});

test('setup.sh installs what the gate runs; with --tests also the test-only tools (act, actionlint, shellcheck, time, the devDependencies)', (t) => {
  const { root, run, calls } = layout(
    {
      'scripts/setup.sh': script('setup.sh'),
      'package-lock.json': '{}\n',
      '.cache/loadgate/k6/v1.4.2/k6': '',
      'test/support/pyroscope-standin/go.sum': 'pinned\n',
    },
    // Nothing is installed yet (dpkg-query finds no package); go and npm only record.
    { 'dpkg-query': stub('dpkg-query', 'exit 1\n'), 'apt-get': stub('apt-get'), sudo: stub('sudo', '"$@"\n'), npm: stub('npm'), go: stub('go') },
  );
  t.after(() => rmSync(root, { recursive: true, force: true }));
  chmodSync(join(root, '.cache/loadgate/k6/v1.4.2/k6'), 0o755);
  const gate = run(['scripts/setup.sh']);
  assert.equal(gate.status, 0, gate.stderr);
  const installed = (call: string[] | undefined) => call?.slice(call.indexOf('--no-install-recommends') + 1);
  assert.deepEqual(installed(calls('apt-get').find((c) => c.includes('install'))), ['fonts-dejavu-core', 'python3-venv']);
  // Every npm package is a devDependency (the published package is the bundle): the gate installs them all.
  assert.deepEqual(calls('npm'), [['ci', '--no-audit', '--no-fund', '--loglevel=error']]);
  assert.deepEqual(calls('go'), [], "k6 is cached; act and actionlint are not the gate's");
  // Without a cached k6 the gate's set-up builds none either: loadgate builds it beside the Synapse installs.
  rmSync(join(root, '.cache/loadgate/k6/v1.4.2/k6'));
  assert.equal(run(['scripts/setup.sh']).status, 0);
  assert.deepEqual(calls('go'), [], "k6 is left to the gate's own set-up");
  writeFileSync(join(root, '.cache/loadgate/k6/v1.4.2/k6'), '', { mode: 0o755 });

  // An install without the devDependencies (an older gate-only one) is in place: --tests redoes it and adds the test-only tools.
  mkdirSync(join(root, 'node_modules'));
  writeFileSync(join(root, 'node_modules/.package-lock.json'), '{}\n');
  utimesSync(join(root, 'package-lock.json'), new Date(0), new Date(0));
  const tests = run(['scripts/setup.sh', '--tests']);
  assert.equal(tests.status, 0, tests.stderr);
  assert.deepEqual(
    installed(
      calls('apt-get')
        .filter((c) => c.includes('install'))
        .at(-1),
    ),
    ['fonts-dejavu-core', 'python3-venv', 'time', 'shellcheck'],
  );
  assert.deepEqual(calls('npm').at(-1), ['ci', '--no-audit', '--no-fund', '--loglevel=error']);
  assert.deepEqual(
    calls('go').map((c) => c.at(-1)),
    ['github.com/nektos/act@v0.2.89', 'github.com/rhysd/actionlint/cmd/actionlint@v1.7.12', '.'],
  );
  // Everything in place: nothing more is installed.
  mkdirSync(join(root, 'node_modules/typescript'));
  for (const tool of ['act', 'actionlint']) writeFileSync(join(root, '.cache/bin', tool), '', { mode: 0o755 });
  const [npmBefore, goBefore] = [calls('npm').length, calls('go').length];
  assert.equal(run(['scripts/setup.sh', '--tests']).status, 0);
  assert.equal(calls('npm').length, npmBefore);
  assert.equal(calls('go').length, goBefore);
  assert.notEqual(run(['scripts/setup.sh', '--all']).status, 0, 'an unknown argument is refused');
});
