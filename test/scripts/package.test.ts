/**
 * The published package is the self-contained bundle: `npm pack` makes the tarball the
 * release publishes; it holds dist/loadgate.js and the files the bundle loads by URL, the
 * MIT licence, and declares no dependency, so an empty directory installs it offline (no
 * registry is reached, nothing but the package lands in node_modules). There the
 * installed `loadgate` runs its help, `validate` of a shipped example (whose `builtin:`
 * noise model resolves inside the package) and `plan`; then the README's step 1 as
 * written, `npx … validate .github/loadgate.yml`, in that directory as a product repository.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const skip = existsSync(join(ROOT, 'dist', 'loadgate.js')) ? false : 'dist/loadgate.js not built yet (npm run build)';

interface Manifest {
  name: string;
  version: string;
  license: string;
  private?: boolean;
  bin: Record<string, string>;
  publishConfig?: { access?: string; provenance?: boolean };
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  bundleDependencies?: unknown;
}

test('the repository carries the MIT licence its package.json names', async () => {
  const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as Manifest;
  assert.equal(manifest.license, 'MIT');
  const licence = await readFile(join(ROOT, 'LICENSE'), 'utf8');
  assert.match(licence, /^MIT License\n\nCopyright \(c\) \d{4} /);
  assert.match(licence, /Permission is hereby granted, free of charge, to any person obtaining a copy/);
  assert.match(licence, /THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND/);
});

test("the package version is CHANGELOG.md's newest section (the release workflow also wants nothing unreleased)", async () => {
  const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as Manifest;
  const changelog = await readFile(join(ROOT, 'CHANGELOG.md'), 'utf8');
  const released = [...changelog.matchAll(/^## \[([^\]]+)\]/gm)].map((m) => m[1]).filter((s) => s !== 'Unreleased');
  assert.equal(released[0], manifest.version, `package.json says ${manifest.version}; CHANGELOG.md's newest section is ${released[0]}`);
});

test(
  'npm pack gives a scoped, public package of the bundle alone, with no dependencies, that runs after an offline install',
  { skip, timeout: 5 * 60_000 },
  async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as Manifest;
    assert.match(manifest.name, /^@[a-z0-9-]+\/loadgate$/, 'a scoped name: only the scope owner can publish it');
    assert.notEqual(manifest.private, true);
    assert.equal(manifest.publishConfig?.access, 'public');
    // npm decides provenance itself (only from a public repository); forcing it fails a private one with E422.
    assert.equal(manifest.publishConfig?.provenance, undefined, 'publishConfig does not force provenance');
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies', 'bundleDependencies'] as const) {
      assert.equal(manifest[field], undefined, `package.json declares no ${field}: the bundle inlines them`);
    }
    const work = await mkdtemp(join(tmpdir(), 'lg-package-'));
    try {
      const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8' })) as {
        filename: string;
        files: { path: string }[];
      }[];
      const files = packed[0]!.files.map((f) => f.path);
      for (const needed of [
        'LICENSE',
        'README.md',
        'CHANGELOG.md',
        'bin/loadgate.js',
        'dist/loadgate.js',
        'noise/aws-mattermost-duet.json',
        'examples/aws-mattermost.yml',
      ]) {
        assert.ok(files.includes(needed), `the tarball holds ${needed}`);
      }
      // Every file the bundle loads by URL, relative to dist/ (a directory: something in it).
      const bundle = await readFile(join(ROOT, 'dist', 'loadgate.js'), 'utf8');
      const assets = [...bundle.matchAll(/new URL\("([^"]+)", import\.meta\.url\)/g)].map((m) => posix.normalize(posix.join('dist', m[1] as string)));
      assert.ok(assets.length >= 4, assets.join(', '));
      for (const asset of assets) {
        assert.ok(asset.endsWith('/') ? files.some((f) => f.startsWith(asset)) : files.includes(asset), `the tarball holds ${asset}, which the bundle loads`);
      }
      // And the scenarios' own imports beside them.
      for (const lib of ['src/engine/k6/scenarios/lib/mattermost-bodies.js', 'src/engine/k6/scenarios/lib/metrics.js']) assert.ok(files.includes(lib), lib);
      assert.deepEqual(
        files.filter((f) => /\.(ts|mts|cts)$/.test(f) && !f.endsWith('.d.ts')),
        [],
        'no TypeScript sources: the package runs the bundle',
      );
      assert.ok(
        !files.some((f) => f.startsWith('test/') || f.startsWith('reports/') || f.startsWith('node_modules/')),
        'no tests, reports or dependencies in the tarball',
      );

      const consumer = join(work, 'consumer');
      await mkdir(consumer);
      await writeFile(join(consumer, 'package.json'), '{"name":"consumer","private":true}\n');
      // Offline: a package with a dependency would need the registry and fail here.
      const install = spawnSync('npm', ['install', '--offline', '--no-audit', '--no-fund', join(work, packed[0]!.filename)], {
        cwd: consumer,
        encoding: 'utf8',
        timeout: 2 * 60_000,
      });
      assert.equal(install.status, 0, install.stderr);
      assert.ok(!(await readdir(consumer)).includes('src'), 'nothing of loadgate beside the install');
      const installed = (await readdir(join(consumer, 'node_modules'))).filter((d) => !d.startsWith('.'));
      assert.deepEqual(installed, [manifest.name.split('/')[0]], 'nothing but the package itself is installed');
      assert.deepEqual(await readdir(join(consumer, 'node_modules', manifest.name.split('/')[0]!)), [manifest.name.split('/')[1]]);
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
      const plan = spawnSync(bin, ['plan', '--config', example, '--max-cost', '1000'], { cwd: consumer, encoding: 'utf8' });
      assert.equal(plan.status, 0, plan.stderr);
      assert.match(plan.stdout, /provisioning/);
      assert.match(plan.stdout, /\$\d+\.\d\d/);

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
      const npx = spawnSync('npx', ['--offline', step1[1] as string, 'validate', '--users-file', usersFile, '.github/loadgate.yml'], {
        cwd: consumer,
        encoding: 'utf8',
      });
      assert.equal(npx.status, 0, npx.stderr);
      assert.match(npx.stdout, /^\.github\/loadgate\.yml: ok .*noise model builtin:aws-mattermost-duet/);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  },
);

test('no README or docs line runs the unscoped `npx loadgate`, a name anyone could claim on npm', async () => {
  const docs = (await readdir(join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  for (const file of ['README.md', ...docs, 'examples/local-synapse.yml', 'examples/local-synapse-duet.yml']) {
    const text = await readFile(join(ROOT, file), 'utf8');
    const lines = text.split('\n').flatMap((l, i) => (/npx (--[a-z-]+ )*loadgate\b/.test(l) ? [`${file}:${i + 1}: ${l.trim()}`] : []));
    assert.deepEqual(lines, [], `${file} runs the unscoped package name`);
  }
});
