import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * The release workflow, run step by step against stand-ins: its version check against
 * CHANGELOG.md and package.json, and its publish step against the npm stand-in
 * (test/support/npm-standin.mjs), which follows npm's own rules: trusted publishing by the
 * job's OIDC token, provenance only from a public repository (E422 from a private one).
 */

const ROOT = join(import.meta.dirname, '..', '..');
type Step = { name?: string; run?: string; env?: Record<string, string>; uses?: string };
type Job = { needs?: string | string[]; permissions?: Record<string, string>; steps: Step[] };
const workflow = () => parse(readFileSync(join(ROOT, '.github', 'workflows', 'release.yml'), 'utf8')) as { jobs: Record<string, Job> };

const VERSION = '1.1.0';
const NAME = '@loadgate/loadgate';
const REPOSITORY = 'loadgate/loadgate';

/** Evaluates the `${{ … }}` expressions a release step's env uses, as GitHub would for this run. */
function expand(value: string, values: Record<string, string>): string {
  return value.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expr: string) => {
    if (expr in values) return values[expr] as string;
    throw new Error(`an expression the test does not know: ${expr}`);
  });
}

/** The job and step whose script runs `npm publish`. */
function publishStep(): { job: Job; step: Step } {
  for (const job of Object.values(workflow().jobs)) {
    const step = job.steps.find((s) => /\bnpm publish\b/.test(s.run ?? ''));
    if (step) return { job, step };
  }
  throw new Error('no step runs npm publish');
}

interface Registry {
  cli: string;
  visibility: 'private' | 'public';
  registry: Record<string, { versions: Record<string, { shasum: string; provenance: boolean; by: string }> }>;
  trustedPublishers: Record<string, { repository: string; workflow: string }>;
  validTokens: string[];
  calls: { args: string[]; token: boolean }[];
}

/** A tarball as `npm pack` makes one: package/package.json with the manifest. */
function tarball(dir: string): { file: string; shasum: string } {
  mkdirSync(join(dir, 'pack', 'package'), { recursive: true });
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(dir, 'pack', 'package', 'package.json'), JSON.stringify({ ...manifest, version: VERSION }));
  const file = join(dir, `loadgate-loadgate-${VERSION}.tgz`);
  execFileSync('tar', ['-czf', file, '-C', join(dir, 'pack'), 'package']);
  return { file, shasum: createHash('sha1').update(readFileSync(file)).digest('hex') };
}

/** Runs the publish step as its job would, with `npm` on PATH being the stand-in. */
function runPublish(registry: Partial<Registry>): { status: number | null; out: string; state: Registry } {
  const dir = mkdtempSync(join(tmpdir(), 'lg-release-'));
  try {
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'npm'),
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(ROOT, 'test', 'support', 'npm-standin.mjs'))} "$@"\n`,
      { mode: 0o755 },
    );
    const { file, shasum } = tarball(dir);
    const statePath = join(dir, 'state.json');
    const initial: Registry = { cli: '11.6.2', visibility: 'private', registry: {}, trustedPublishers: {}, validTokens: [], calls: [], ...registry };
    writeFileSync(statePath, JSON.stringify(initial));
    const { job, step } = publishStep();
    const values: Record<string, string> = {
      'inputs.version': VERSION,
      'needs.check.outputs.name': NAME,
      'needs.check.outputs.tarball': file,
      'needs.check.outputs.shasum': shasum,
      'steps.pack.outputs.tarball': file,
      'github.repository': REPOSITORY,
      // A maintainer who stored an npm token as the repository secret.
      'secrets.NPM_TOKEN': 'npm_maintainers_token',
    };
    const env: Record<string, string> = {
      PATH: `${bin}:${process.env.PATH}`,
      HOME: dir,
      RUNNER_TEMP: dir,
      GITHUB_ACTIONS: 'true',
      GITHUB_REPOSITORY: REPOSITORY,
      GITHUB_RUN_ID: '4242',
      GITHUB_WORKFLOW_REF: `${REPOSITORY}/.github/workflows/release.yml@refs/heads/main`,
      NPM_STANDIN_STATE: statePath,
      // GitHub gives a job these only with `permissions: id-token: write`.
      ...(job.permissions?.['id-token'] === 'write'
        ? { ACTIONS_ID_TOKEN_REQUEST_URL: 'https://token.actions.example/', ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'request-token' }
        : {}),
    };
    for (const [k, v] of Object.entries(step.env ?? {})) env[k] = expand(v, values);
    // GitHub runs a `run:` step with bash -e -o pipefail.
    const run = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run as string], { cwd: dir, env, encoding: 'utf8' });
    return { status: run.status, out: `${run.stdout}${run.stderr}`, state: JSON.parse(readFileSync(statePath, 'utf8')) as Registry };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const existing = { versions: { '1.0.9': { shasum: 'f'.repeat(40), provenance: false, by: 'token' } } };
const trusted = { [NAME]: { repository: REPOSITORY, workflow: 'release.yml' } };

test('from a private repository the release publishes by trusted publishing, with no provenance npm would refuse (E422)', () => {
  const { status, out, state } = runPublish({
    visibility: 'private',
    registry: { [NAME]: existing },
    trustedPublishers: trusted,
    validTokens: ['npm_maintainers_token'],
  });
  assert.equal(status, 0, out);
  assert.deepEqual(
    state.registry[NAME]?.versions[VERSION] && { provenance: state.registry[NAME].versions[VERSION].provenance, by: state.registry[NAME].versions[VERSION].by },
    { provenance: false, by: 'oidc' },
  );
  assert.ok(
    state.calls.every((c) => !c.token),
    'no npm token is offered: trusted publishing only',
  );
});

test('from a public repository npm adds provenance by itself', () => {
  const { status, out, state } = runPublish({ visibility: 'public', registry: { [NAME]: existing }, trustedPublishers: trusted });
  assert.equal(status, 0, out);
  assert.equal(state.registry[NAME]?.versions[VERSION]?.provenance, true);
});

test('an old npm is upgraded first: trusted publishing needs 11.5.1', () => {
  const { status, out, state } = runPublish({ cli: '11.3.0', registry: { [NAME]: existing }, trustedPublishers: trusted });
  assert.equal(status, 0, out);
  assert.ok(state.calls.some((c) => c.args[0] === 'install' && c.args.includes('--global')));
  assert.equal(state.registry[NAME]?.versions[VERSION]?.by, 'oidc');
});

test("a package npm does not have yet stops before publishing, with the maintainer's one-time steps", () => {
  const { status, out, state } = runPublish({});
  assert.equal(status, 1);
  assert.match(
    out,
    /::error::@loadgate\/loadgate is not on npm yet: a maintainer must, once: \(1\) publish the version by hand, with the tarball this run packed \(gh run download 4242 -n package; npm publish .*loadgate-loadgate-1\.1\.0\.tgz --access public\).*\(2\) on npmjs\.com, @loadgate\/loadgate, Settings, Trusted publishing: GitHub Actions, repository loadgate\/loadgate, workflow release\.yml; \(3\) re-run this job/,
  );
  assert.ok(!state.calls.some((c) => c.args[0] === 'publish'));
});

test('without a trusted publisher npm refuses, and the error says what to set up', () => {
  const { status, out } = runPublish({ registry: { [NAME]: existing }, trustedPublishers: { [NAME]: { repository: REPOSITORY, workflow: 'publish.yml' } } });
  assert.equal(status, 1);
  assert.match(out, /ENEEDAUTH/);
  assert.match(out, /::error::npm refused @loadgate\/loadgate@1\.1\.0; .*the trusted publisher is missing or names another repository or workflow/);
});

test('a re-run after the maintainer published this very tarball skips the publish; another tarball of the version is refused', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lg-release-sum-'));
  let shasum: string;
  try {
    shasum = tarball(dir).shasum;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const same = runPublish({ registry: { [NAME]: { versions: { [VERSION]: { shasum, provenance: false, by: 'token' } } } }, trustedPublishers: trusted });
  assert.equal(same.status, 0, same.out);
  assert.match(same.out, /already on npm with this very tarball: nothing to publish/);
  const other = runPublish({
    registry: { [NAME]: { versions: { [VERSION]: { shasum: 'e'.repeat(40), provenance: false, by: 'token' } } } },
    trustedPublishers: trusted,
  });
  assert.equal(other.status, 1);
  assert.match(other.out, /npm already has @loadgate\/loadgate@1\.1\.0, another tarball .*release a new version/);
});

test('one story of authentication, and no tag moves before npm took the release', () => {
  const { jobs } = workflow();
  const text = JSON.stringify(jobs);
  assert.doesNotMatch(text, /NPM_TOKEN|NODE_AUTH_TOKEN|registry-url/, 'no npm token, and no .npmrc that expects one');
  assert.doesNotMatch(text, /--provenance/, "provenance is npm's decision, not forced");
  const { job } = publishStep();
  assert.deepEqual(job.permissions, { 'id-token': 'write' });
  const pushes = Object.entries(jobs).filter(([, j]) => j.steps.some((s) => /git .*push/.test(s.run ?? '')));
  assert.deepEqual(
    pushes.map(([id]) => id),
    ['tag'],
  );
  const needs = ([] as string[]).concat(jobs.tag?.needs ?? []);
  assert.ok(needs.includes('publish'), 'the tags move only after the publish');
  assert.ok(([] as string[]).concat(jobs.publish?.needs ?? []).includes('check'));
});

/** Runs the check job's version check in a directory holding these files. */
function checkVersion(files: Record<string, string>): { status: number | null; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'lg-release-version-'));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    execFileSync('git', ['init', '-q'], { cwd: dir });
    const step = workflow().jobs.check?.steps.find((s) => s.name === 'Check the version');
    assert.ok(step?.run);
    const run = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run], {
      cwd: dir,
      env: { PATH: process.env.PATH, VERSION },
      encoding: 'utf8',
    });
    return { status: run.status, out: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the version check wants package.json and CHANGELOG.md to agree, with nothing left unreleased', () => {
  const pkg = JSON.stringify({ version: VERSION });
  assert.equal(checkVersion({ 'package.json': pkg, 'CHANGELOG.md': `# Changelog\n\n## [Unreleased]\n\n## [${VERSION}]\n\n- x\n\n## [1.0.0]\n` }).status, 0);
  const unreleased = checkVersion({ 'package.json': pkg, 'CHANGELOG.md': `## [Unreleased]\n\n### Added\n- y\n\n## [${VERSION}]\n` });
  assert.equal(unreleased.status, 1);
  assert.match(unreleased.out, /CHANGELOG\.md lists unreleased changes/);
  const older = checkVersion({ 'package.json': pkg, 'CHANGELOG.md': `## [1.2.0]\n\n## [${VERSION}]\n` });
  assert.match(older.out, /CHANGELOG\.md's newest section is '1\.2\.0', not '## \[1\.1\.0\]'/);
  const bump = checkVersion({ 'package.json': JSON.stringify({ version: '1.0.0' }), 'CHANGELOG.md': `## [${VERSION}]\n` });
  assert.match(bump.out, /package\.json says 1\.0\.0; bump it to 1\.1\.0 first/);
});
