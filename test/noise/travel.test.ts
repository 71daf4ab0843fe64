/**
 * A config copied out of loadgate's examples into a product repository keeps its noise
 * model: `builtin:<name>` resolves to loadgate's own noise/ wherever the CLI runs from.
 * The model is then checked against the config: an assumed one (it describes a bench and
 * a mode) survives a renamed gate and a nudged test; a measured one does not, and a model
 * of another bench is refused, naming what differs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { main } from '../../src/cli/main.ts';
import { loadGateConfig } from '../../src/config/load.ts';
import { loadNoiseModel } from '../../src/noise/model.ts';
import { captureIO } from '../../src/cli/io.ts';
import { parseRunOptions } from '../../src/run/options.ts';
import { withTempDir } from '../support/runs.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'loadgate.js');

/** The CLI as a product repository runs it: its own working directory, loadgate elsewhere. */
function cli(cwd: string, ...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** An example copied to <dir>/.github/loadgate.yml, with some edits. */
function adopt(dir: string, example: string, edit: (text: string) => string = (t) => t): string {
  mkdirSync(join(dir, '.github'), { recursive: true });
  const text = edit(readFileSync(join(ROOT, 'examples', example), 'utf8'));
  writeFileSync(join(dir, '.github', 'loadgate.yml'), text);
  return '.github/loadgate.yml';
}

/** The dataset's users file the AWS examples' run needs (validate checks it): 12 agents' worth of accounts. */
function usersFile(dir: string): string {
  const file = join(dir, 'users.txt');
  writeFileSync(file, Array.from({ length: 24_000 }, (_, i) => `user${i}@example.com pw-${i}`).join('\n'));
  return file;
}

async function validate(file: string): Promise<{ code: number; out: string; err: string }> {
  const io = captureIO();
  const code = await main(['validate', '--users-file', usersFile(dirname(file)), file], io);
  return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n') };
}

test('examples/aws-mattermost.yml copied into another repository validates and plans, with the model it names', async () => {
  await withTempDir(async (dir) => {
    const file = adopt(dir, 'aws-mattermost.yml');
    const checked = cli(dir, 'validate', '--users-file', usersFile(dir), file);
    assert.equal(checked.code, 0, checked.err);
    assert.match(checked.out, /: ok \(2 tests, bench aws, target mattermost, noise model builtin:aws-mattermost-duet \(assumed\)\)/);
    const plan = cli(dir, 'plan', '--config', file);
    assert.equal(plan.code, 0, plan.err);
    assert.match(plan.out, /\$/, 'plan prints the cost');
  });
});

test('every example names its model as builtin: and validates from another directory', async () => {
  await withTempDir(async (dir) => {
    for (const example of ['local-synapse.yml', 'local-synapse-duet.yml', 'aws-mattermost-sequential.yml']) {
      const file = adopt(dir, example);
      assert.match(readFileSync(join(dir, file), 'utf8'), /^noiseModel: builtin:[a-z-]+$/m, example);
      const r = await validate(join(dir, file));
      assert.equal(r.code, 0, `${example}: ${r.err}`);
      assert.match(r.out, /noise model builtin:/, example);
    }
  });
});

test('an assumed model keeps a renamed gate and a nudged health threshold', async () => {
  await withTempDir(async (dir) => {
    const file = join(
      dir,
      adopt(dir, 'aws-mattermost.yml', (t) =>
        t.replace(/^name: .*$/m, 'name: chat-server-gate').replace('        threshold: 0.025\n', '        threshold: 0.03\n'),
      ),
    );
    const r = await validate(file);
    assert.equal(r.code, 0, r.err);
    const model = await loadNoiseModel(join(ROOT, 'noise', 'aws-mattermost-duet.json'), await loadGateConfig(file));
    assert.equal(model.kind, 'assumed');
  });
});

test('a measured model is refused for another test shape, naming the test, and for a renamed gate', async () => {
  await withTempDir(async (dir) => {
    const shape = await validate(
      join(
        dir,
        adopt(dir, 'local-synapse.yml', (t) => t.replace(/^(\s+maxUsers: )(\d+)$/m, (_, k: string, n: string) => `${k}${Number(n) + 10}`)),
      ),
    );
    assert.equal(shape.code, 3);
    assert.match(shape.err, /noise model was measured with other test shapes \(test unbounded differs from the model's\)/);
    const renamed = await validate(
      join(
        dir,
        adopt(dir, 'local-synapse.yml', (t) => t.replace(/^name: .*$/m, 'name: other')),
      ),
    );
    assert.equal(renamed.code, 3);
    assert.match(renamed.err, /noise model is for profile "synapse-local", the config is "other"/);
  });
});

test('a model of another bench is refused, naming the field, whether measured or assumed', async () => {
  await withTempDir(async (dir) => {
    const preset = await validate(
      join(
        dir,
        adopt(dir, 'aws-mattermost.yml', (t) => t.replace('    preset: perfcomp\n', '    preset: 2XL.220\n')),
      ),
    );
    assert.equal(preset.code, 3);
    assert.match(preset.err, /noise model is of another bench \(bench\.aws\.preset: the model's "perfcomp", the config's "2XL\.220"\)/);
    const nodes = await validate(
      join(
        dir,
        adopt(dir, 'aws-mattermost.yml', (t) => t.replace('    preset: perfcomp\n', '    preset: perfcomp\n    appInstanceType: c7i.4xlarge\n')),
      ),
    );
    assert.equal(nodes.code, 3);
    assert.match(nodes.err, /bench\.aws\.appInstanceType: the model's the preset's, the config's "c7i\.4xlarge"/);
    const cpus = await validate(
      join(
        dir,
        adopt(dir, 'local-synapse.yml', (t) => t.replace("targetCpus: '0'", "targetCpus: '0-1'").replace("engineCpus: '1'", "engineCpus: '2'")),
      ),
    );
    assert.equal(cpus.code, 3, cpus.err);
    assert.match(cpus.err, /bench\.local\.targetCpus: the model's "0", the config's "0-1"; bench\.local\.engineCpus: the model's "1", the config's "2"/);
  });
});

test('an unknown builtin model is bad input listing the shipped ones; the shipped files are never written over', async () => {
  await withTempDir(async (dir) => {
    const r = await validate(
      join(
        dir,
        adopt(dir, 'aws-mattermost.yml', (t) => t.replace('builtin:aws-mattermost-duet', 'builtin:aws-mattermost-duo')),
      ),
    );
    assert.equal(r.code, 3);
    assert.match(
      r.err,
      /noiseModel: "builtin:aws-mattermost-duo" is not a model loadgate ships; the built-in ones are builtin:aws-mattermost, builtin:aws-mattermost-duet, builtin:local-synapse, builtin:local-synapse-duet/,
    );
    const file = join(dir, adopt(dir, 'local-synapse.yml'));
    await assert.rejects(
      parseRunOptions(['--config', file, '--baseline', '1.162.0', '--candidate', '1.163.2', '--out', join(dir, 'out'), '--update-noise-model']),
      /--update-noise-model: .* names builtin:local-synapse, a model loadgate ships, which is not written over/,
    );
  });
});
