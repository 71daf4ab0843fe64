import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadGateConfig } from '../../src/config/load.ts';
import { chatServerOf } from '../../src/chat-servers/registry.ts';
import { ensureSynapse } from '../../src/chat-servers/synapse/install.ts';
import { synapseTrees } from '../support/synapse-installs.ts';

/**
 * A candidate given as a Synapse wheel: a modified build of the cached 1.163.2 release,
 * installed into its own venv keyed by its content hash. Offline: the release venv's
 * installed distributions are packed back into wheels by scripts/repack-wheels.py, one
 * line appended to synapse/__init__.py, to make a wheelhouse pip installs from with
 * PIP_NO_INDEX.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const skip = process.env.LOADGATE_SKIP_INTEGRATION === '1' ? 'LOADGATE_SKIP_INTEGRATION=1' : false;
// The release's installed tree (installed into the tests' cache here when absent).
let SITE = '';
before(
  async () => {
    if (!skip) SITE = (await synapseTrees(['1.163.2']))['1.163.2'].root;
  },
  { timeout: 15 * 60_000 },
);

const REPACK = join(ROOT, 'scripts/repack-wheels.py');

test('a Synapse wheel is installed into its own venv keyed by its content hash, apart from the release it modifies', { skip, timeout: 600_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-wheel-'));
  try {
    const wheelhouse = join(dir, 'wheels');
    const edits = join(dir, 'edits.json');
    await writeFile(edits, JSON.stringify([{ file: 'synapse/__init__.py', append: '\nLOADGATE_TEST_BUILD = "modified"\n' }]));
    await promisify(execFile)('python3', [REPACK, SITE, wheelhouse, '--edits', edits], { maxBuffer: 1 << 24 });
    const wheel = join(wheelhouse, 'matrix_synapse-1.163.2-cp310-abi3-manylinux_2_28_x86_64.whl');
    assert.ok(existsSync(wheel), 'the modified Synapse wheel was packed');

    const config = await loadGateConfig(join(ROOT, 'examples/local-synapse-duet.yml'));
    const side = chatServerOf('synapse').side(
      'candidate',
      `./wheels/${'matrix_synapse-1.163.2-cp310-abi3-manylinux_2_28_x86_64.whl'}`,
      [],
      config.target,
      [],
      dir,
    );
    assert.equal(side.version, '1.163.2');
    assert.ok(side.build?.kind === 'wheel');

    const cacheDir = join(dir, 'cache');
    const env = { PIP_NO_INDEX: process.env.PIP_NO_INDEX, PIP_FIND_LINKS: process.env.PIP_FIND_LINKS };
    process.env.PIP_NO_INDEX = '1';
    process.env.PIP_FIND_LINKS = wheelhouse;
    let install;
    try {
      install = await ensureSynapse({ version: side.version, build: side.build, cacheDir, packageName: 'matrix-synapse', logFile: join(dir, 'pip.log') });
    } finally {
      for (const [k, v] of Object.entries(env)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    assert.equal(install.venvDir, join(cacheDir, 'synapse', `build-${side.build.sha256.slice(0, 16)}`));
    const { stdout } = await promisify(execFile)(install.python, ['-c', 'import synapse, psycopg2; print(synapse.__version__, synapse.LOADGATE_TEST_BUILD)']);
    assert.equal(stdout.trim().split(/\s+/).slice(-2).join(' '), '1.163.2 modified', 'the venv runs the build, not the release');
    const marker = JSON.parse(await readFile(join(install.venvDir, 'loadgate-installed.json'), 'utf8')) as { sha256?: string };
    assert.equal(marker.sha256, side.build.sha256);
    // Installed once: a second call finds the marker and reuses the venv.
    const again = await ensureSynapse({ version: side.version, build: side.build, cacheDir, packageName: 'matrix-synapse' });
    assert.equal(again.venvDir, install.venvDir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
