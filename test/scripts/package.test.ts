/**
 * The CLI installs without loadgate's source: `npm pack` makes the tarball the release
 * publishes, a clean directory installs it from the tarball and the npm registry (its
 * dependencies; nothing else is reached), and the installed `loadgate` runs: its help,
 * and `validate` of a shipped example, whose `builtin:` noise model resolves inside the
 * package; then the README's step 1 as written, `npx … validate .github/loadgate.yml`, in
 * that directory as a product repository.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const skip = process.env.LOADGATE_SKIP_INTEGRATION === '1' ? 'LOADGATE_SKIP_INTEGRATION=1 (installs from the npm registry)' : false;

test('npm pack gives a scoped, public package whose loadgate runs after a clean install', { skip, timeout: 10 * 60_000 }, async () => {
  const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { name: string; private?: boolean; bin: Record<string, string>; publishConfig?: { access?: string } };
  assert.match(manifest.name, /^@[a-z0-9-]+\/loadgate$/, 'a scoped name: only the scope owner can publish it');
  assert.notEqual(manifest.private, true);
  assert.equal(manifest.publishConfig?.access, 'public');
  const work = await mkdtemp(join(tmpdir(), 'lg-package-'));
  try {
    const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8' })) as { filename: string; files: { path: string }[] }[];
    const files = packed[0]!.files.map((f) => f.path);
    for (const needed of ['bin/loadgate.js', 'src/cli/main.ts', 'noise/aws-mattermost-duet.json', 'examples/aws-mattermost.yml', 'grafana/dashboards/loadgate-comparison.json']) assert.ok(files.includes(needed), `the tarball holds ${needed}`);
    assert.ok(!files.some((f) => f.startsWith('test/') || f.startsWith('reports/') || f.startsWith('node_modules/')), 'no tests, reports or dependencies in the tarball');

    const consumer = join(work, 'consumer');
    execFileSync('mkdir', ['-p', consumer]);
    await writeFile(join(consumer, 'package.json'), '{"name":"consumer","private":true}\n');
    const install = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(work, packed[0]!.filename)], { cwd: consumer, encoding: 'utf8', timeout: 8 * 60_000 });
    assert.equal(install.status, 0, install.stderr);
    assert.ok(!(await readdir(consumer)).includes('src'), 'nothing of loadgate beside the install');
    const bin = join(consumer, 'node_modules', '.bin', 'loadgate');
    const help = spawnSync(bin, ['--help'], { cwd: consumer, encoding: 'utf8' });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^loadgate \d+\.\d+\.\d+\n\nUsage: loadgate <command>/);
    const example = join(consumer, 'node_modules', ...manifest.name.split('/'), 'examples', 'aws-mattermost.yml');
    // The AWS example's run logs in the dataset's users: validate checks the users file too.
    await writeFile(join(consumer, 'users.txt'), Array.from({ length: 24_000 }, (_, i) => `user${i}@example.com pw-${i}`).join('\n'));
    const validate = spawnSync(bin, ['validate', '--users-file', 'users.txt', example], { cwd: consumer, encoding: 'utf8' });
    assert.equal(validate.status, 0, validate.stderr);
    assert.match(validate.stdout, /noise model builtin:aws-mattermost-duet \(assumed\)/);

    // The README's step 1, literally, in the product repository the tarball was installed
    // into: the example copied to .github/loadgate.yml and checked with npx, offline (the
    // installed package answers; nothing is fetched).
    await mkdir(join(consumer, '.github'));
    await copyFile(join(ROOT, 'examples', 'aws-mattermost.yml'), join(consumer, '.github', 'loadgate.yml'));
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    // The command may wrap across lines in the README.
    const step1 = /`npx (@[a-z0-9-]+\/loadgate) validate --users-file (\S+)\s+\.github\/loadgate\.yml`/.exec(readme);
    assert.ok(step1, "the README's step 1 checks .github/loadgate.yml and its users file with npx");
    assert.equal(step1[1], manifest.name, 'the README names the published package');
    const usersFile = step1[2] as string;
    // The dataset's users, committed beside the config (load-test-ng's `login password` lines).
    await writeFile(join(consumer, usersFile), Array.from({ length: 24_000 }, (_, i) => `user${i}@example.com pw-${i}`).join('\n') + '\n');
    const npx = spawnSync('npx', ['--offline', step1[1] as string, 'validate', '--users-file', usersFile, '.github/loadgate.yml'], { cwd: consumer, encoding: 'utf8' });
    assert.equal(npx.status, 0, npx.stderr);
    assert.match(npx.stdout, /^\.github\/loadgate\.yml: ok .*noise model builtin:aws-mattermost-duet/);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});
