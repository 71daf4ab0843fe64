import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadGateConfig } from '../../src/config/load.ts';
import { chatServerOf } from '../../src/chat-servers/registry.ts';
import { hashTree, isBuildValue } from '../../src/chat-servers/build-source.ts';
import { runResultSchema } from '../../src/results/schema.ts';
import { runTarget } from '../../src/bench/gate-plan.ts';
import { AppNodes } from '../../src/bench/aws/app-nodes.ts';
import { mattermostNodes } from '../../src/chat-servers/mattermost/nodes.ts';
import { installScript } from '../../src/bench/aws/scripts.ts';
import type { RemoteResult, RemoteShell } from '../../src/bench/aws/remote-shell.ts';
import { InputError } from '../../src/util/errors.ts';
import { installKey } from '../../src/chat-servers/synapse/install.ts';

const BUILD_URL = 'https://pr-builds.example.com/mattermost/commit/0123abc/mattermost-enterprise-linux-amd64.tar.gz';
// The label pattern results/schema.ts gives target.version.
const LABEL = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

test('a --baseline/--candidate value is a build when it is a path or a URL, a release label otherwise', () => {
  for (const v of ['./synapse', '../x.whl', '/abs/dir', 'file:dist/a.whl', '~/src', 'https://h/x.tar.gz']) assert.ok(isBuildValue(v), v);
  for (const v of ['1.163.2', 'v10.12.0', 'v11.0.1-rc2']) assert.ok(!isBuildValue(v), v);
});

test('Mattermost: a build tarball URL is a side; it skips versionPattern, keeps the config patch, and is named by a label results accept', async () => {
  const config = await loadGateConfig('examples/aws-mattermost-sequential.yml');
  const mattermost = chatServerOf('mattermost');
  const side = mattermost.side('candidate', BUILD_URL, ['ServiceSettings.EnableLinkPreviews=false'], config.target, []);
  assert.equal(side.releaseUrl, BUILD_URL, 'the nodes install the build as given');
  assert.deepEqual(side.build, { kind: 'url', url: BUILD_URL, sha256: side.build?.sha256 });
  assert.match(side.build?.sha256 ?? '', /^[0-9a-f]{64}$/);
  assert.match(side.label ?? '', /^mattermost-enterprise-linux-amd64\+url\.[0-9a-f]{12}$/);
  assert.match(side.label ?? '', LABEL);
  assert.deepEqual(side.configPatch, { ServiceSettings: { EnableLinkPreviews: false } });
  assert.doesNotThrow(() => installScript(side.releaseUrl ?? ''), 'the install script takes it');
  // Two builds with the same file name stay apart.
  const other = mattermost.side('candidate', BUILD_URL.replace('0123abc', '4567def'), [], config.target, []);
  assert.notEqual(other.label, side.label);
  // The run result records the build.
  const target = runTarget('mattermost', { label: side.label ?? '', build: side.build });
  assert.deepEqual(runResultSchema.shape.target.parse(target), target);
  // A released version is unchanged.
  const release = mattermost.side('baseline', 'v10.12.0', [], config.target, []);
  assert.equal(release.build, undefined);
  assert.equal(release.releaseUrl, 'https://releases.mattermost.com/10.12.0/mattermost-10.12.0-linux-amd64.tar.gz');
});

test('Mattermost: a build URL the nodes cannot fetch safely is refused naming the flag and the fix', async () => {
  const config = await loadGateConfig('examples/aws-mattermost-sequential.yml');
  const mattermost = chatServerOf('mattermost');
  const refused = (value: string, why: RegExp) =>
    assert.throws(
      () => mattermost.side('candidate', value, [], config.target, []),
      (e: unknown) =>
        e instanceof InputError && /^--candidate: /.test(e.message) && why.test(e.message) && /give a build tarball such as https:/.test(e.message),
    );
  refused('http://builds.example.com/mm.tar.gz', /must be an https:\/\/ URL/);
  refused('https://builds.example.com/mm.zip', /must name a \.tar\.gz build tarball/);
  refused("https://builds.example.com/m'm.tar.gz", /must not contain spaces, quotes/);
  refused('https://user:secret@builds.example.com/mm.tar.gz', /must not hold credentials/);
  // Mattermost builds are remote: a local path is not one.
  assert.throws(
    () => mattermost.side('baseline', './mattermost.tar.gz', [], config.target, []),
    /--baseline: "\.\/mattermost\.tar\.gz" must be an https:\/\/ URL/,
  );
});

test('the app nodes install a build URL and check its licence as for a release, but accept whatever version it reports', async () => {
  const scripts: string[] = [];
  const shell: RemoteShell = {
    run(ids, script) {
      scripts.push(script);
      const stdout = script.includes('license/client') ? '{"IsLicensed":"true"}' : script.includes(' version') ? '11.1.0.99.abc.false\n' : '';
      return Promise.resolve(new Map(ids.map((id): [string, RemoteResult] => [id, { instanceId: id, status: 'Success', exitCode: 0, stdout, stderr: '' }])));
    },
  };
  const nodes = new AppNodes({
    server: mattermostNodes,
    shell,
    nodes: [{ id: 'i-0aaaaaaaaaaaaaaa1', name: 'app0' }],
    firstStartTimeoutSec: 60,
    startTimeoutSec: 60,
  });
  const running = await nodes.prepare({ label: 'mattermost-enterprise-linux-amd64+url.0123456789ab', releaseUrl: BUILD_URL, configPatch: {} });
  assert.equal(running.get('app0'), '11.1.0.99.abc.false');
  assert.ok(
    scripts.some((s) => s.includes('restore-dataset') || s.includes('restore')),
    'the dataset is restored first',
  );
  assert.ok(scripts.some((s) => s.includes(`install '${BUILD_URL}'`)));
  assert.ok(
    scripts.some((s) => s.includes('license/client')),
    'the licence is still checked',
  );
  // A release must still report its own version.
  await assert.rejects(
    nodes.prepare({
      label: 'v10.12.0',
      version: 'v10.12.0',
      releaseUrl: 'https://releases.mattermost.com/10.12.0/mattermost-10.12.0-linux-amd64.tar.gz',
      configPatch: {},
    }),
    /app0 runs 11\.1\.0\.99\.abc\.false \(expected 10\.12\.0\.\*\)/,
  );
});

test('Synapse: a wheel or a source directory is a side named by its version and content hash, with its own install', async () => {
  const config = await loadGateConfig('examples/local-synapse-duet.yml');
  const synapse = chatServerOf('synapse');
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-build-'));
  try {
    const wheel = join(dir, 'matrix_synapse-1.163.2-cp310-abi3-manylinux_2_28_x86_64.whl');
    await writeFile(wheel, 'not really a zip');
    const w = synapse.side('candidate', `file:${wheel}`, [], config.target, [], '/');
    assert.equal(w.version, '1.163.2');
    assert.equal(w.build?.kind, 'wheel');
    assert.match(w.label ?? '', /^1\.163\.2\+whl\.[0-9a-f]{12}$/);
    assert.equal(installKey({ version: w.version, build: w.build }), `build-${w.build?.sha256.slice(0, 16)}`, 'never the release 1.163.2 venv');
    assert.equal(installKey({ version: '1.163.2' }), '1.163.2');

    const src = join(dir, 'synapse-src');
    await mkdir(join(src, 'synapse'), { recursive: true });
    await writeFile(join(src, 'pyproject.toml'), '[tool.poetry]\nname = "matrix-synapse"\nversion = "1.164.0rc1"\n');
    await writeFile(join(src, 'synapse', '__init__.py'), 'x = 1\n');
    const s = synapse.side('baseline', './synapse-src', ['event_cache_size=20K'], config.target, [], dir);
    assert.equal(s.build?.kind, 'source');
    assert.equal(s.version, '1.164.0rc1');
    assert.deepEqual(
      s.sideOverrides.map((o) => o.text),
      ['event_cache_size=20K'],
    );
    // The hash follows the content, not build outputs.
    const before = hashTree(src);
    await mkdir(join(src, 'synapse', '__pycache__'));
    await writeFile(join(src, 'synapse', '__pycache__', 'x.pyc'), 'cache');
    assert.equal(hashTree(src), before);
    await writeFile(join(src, 'synapse', '__init__.py'), 'x = 2\n');
    assert.notEqual(hashTree(src), before);

    const refused = (value: string, why: RegExp) =>
      assert.throws(
        () => synapse.side('candidate', value, [], config.target, [], dir),
        (e: unknown) => e instanceof InputError && why.test(e.message),
      );
    refused('./missing', /^--candidate: no file or directory .*missing; give a Synapse wheel/);
    await writeFile(join(dir, 'synapse.tar.gz'), '');
    refused('./synapse.tar.gz', /is not a wheel \(expected a file named <name>-<version>-<tags>\.whl\)/);
    await mkdir(join(dir, 'empty'));
    refused('./empty', /has no pyproject\.toml; give the root of a Synapse checkout/);
    refused('https://example.com/synapse.whl', /Synapse builds are local files/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
