#!/usr/bin/env node
/**
 * A stand-in for the `npm` CLI and the npm registry, for the release workflow's publish
 * step. It keeps the registry in the JSON file $NPM_STANDIN_STATE and follows these rules:
 *
 * - `npm --version`: the CLI's version (`cli` in the state); `npm install --global npm@X`
 *   sets it to 11.6.2 (the newest 11.x it knows).
 * - `npm view NAME name` and `npm view NAME@V dist.shasum`: exit 1 with E404 for a package the
 *   registry lacks ("Not Found") or a version it lacks ("No match found for version"), as
 *   npm 11.19.1 answers against registry.npmjs.org.
 * - `npm publish TARBALL`: authenticates like npm/cli lib/utils/oidc.js: only in GitHub
 *   Actions, only with ACTIONS_ID_TOKEN_REQUEST_URL and _TOKEN (the job's `id-token: write`),
 *   and only with npm 11.5.1 or later (docs.npmjs.com, "Trusted publishing for npm
 *   packages"), the token is exchanged for the package; the exchange succeeds only for an
 *   existing package whose trusted publisher names this repository and workflow file (the
 *   token's workflow_ref). Otherwise npm falls back to a token in NODE_AUTH_TOKEN (which the
 *   state may mark valid), else ENEEDAUTH. Provenance: asked for by `--provenance`,
 *   NPM_CONFIG_PROVENANCE=true or the tarball's publishConfig.provenance; left at its
 *   default, oidc.js turns it on only when the token says the repository is public (and
 *   the package is public). Provenance from a private repository is refused with E422
 *   (docs.npmjs.com, "Generating provenance statements": provenance needs a public source
 *   repository), so is one without OIDC (a token cannot sign it), and a version that
 *   exists with E403.
 *
 * Every call is appended to the state's `calls`, with whether a token was offered.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.env.NPM_STANDIN_STATE;
const state = JSON.parse(readFileSync(file, 'utf8'));
const args = process.argv.slice(2);
const save = () => writeFileSync(file, JSON.stringify(state, null, 2));
state.calls.push({ args, token: Boolean(process.env.NODE_AUTH_TOKEN) });

function fail(code, message) {
  save();
  process.stderr.write(`npm error code ${code}\nnpm error ${message}\n`);
  process.exit(1);
}

const atLeast = (version, floor) => {
  const [a, b] = [version, floor].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return true;
};

function view() {
  const [spec, field] = args.slice(1);
  const at = spec.lastIndexOf('@');
  const [name, version] = at > 0 ? [spec.slice(0, at), spec.slice(at + 1)] : [spec, undefined];
  const pkg = state.registry[name];
  if (!pkg) fail('E404', `404 Not Found - GET https://registry.npmjs.org/${name.replace('/', '%2f')}`);
  if (version === undefined) {
    if (field !== 'name') throw new Error(`stand-in: npm view ${args.join(' ')}`);
    process.stdout.write(`${name}\n`);
  } else {
    const v = pkg.versions[version];
    if (!v) fail('E404', `404 No match found for version ${version}`);
    if (field !== 'dist.shasum') throw new Error(`stand-in: npm view ${args.join(' ')}`);
    process.stdout.write(`${v.shasum}\n`);
  }
  save();
}

/** What oidc.js would get: a publish token for this package, or nothing. */
function oidcToken(name) {
  if (process.env.GITHUB_ACTIONS !== 'true') return false;
  if (!process.env.ACTIONS_ID_TOKEN_REQUEST_URL || !process.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN) return false;
  if (!atLeast(state.cli, '11.5.1')) return false;
  const trusted = state.trustedPublishers[name];
  if (!state.registry[name] || !trusted) return false;
  const workflowFile = /\.github\/workflows\/([^@]+)@/.exec(process.env.GITHUB_WORKFLOW_REF ?? '')?.[1];
  return trusted.repository === process.env.GITHUB_REPOSITORY && trusted.workflow === workflowFile;
}

function publish() {
  const tarball = args.find((a, i) => i > 0 && !a.startsWith('--'));
  const manifest = JSON.parse(execFileSync('tar', ['-xOzf', tarball, 'package/package.json'], { encoding: 'utf8' }));
  const { name, version } = manifest;
  const oidc = oidcToken(name);
  const token = !oidc && process.env.NODE_AUTH_TOKEN && state.validTokens.includes(process.env.NODE_AUTH_TOKEN);
  if (!oidc && !token) fail('ENEEDAUTH', 'This command requires you to be logged in to https://registry.npmjs.org/');
  const explicit = args.includes('--provenance') || process.env.NPM_CONFIG_PROVENANCE === 'true' || manifest.publishConfig?.provenance === true;
  const disabled = process.env.NPM_CONFIG_PROVENANCE === 'false' || manifest.publishConfig?.provenance === false;
  const access = args.includes('--access') ? args[args.indexOf('--access') + 1] : manifest.publishConfig?.access;
  const provenance = explicit || (!disabled && oidc && state.visibility === 'public' && access === 'public');
  if (provenance && !oidc) fail('EUSAGE', 'Provenance generation in GitHub Actions requires "write" access to the "id-token" permission');
  if (provenance && state.visibility !== 'public') {
    fail(
      'E422',
      `422 Unprocessable Entity - PUT https://registry.npmjs.org/${name.replace('/', '%2f')} - Error verifying sigstore provenance bundle: Unsupported GitHub Actions source repository visibility: "${state.visibility}". Only public source repositories are supported when publishing with provenance.`,
    );
  }
  const pkg = (state.registry[name] ??= { versions: {} });
  if (pkg.versions[version])
    fail(
      'E403',
      `403 Forbidden - PUT https://registry.npmjs.org/${name.replace('/', '%2f')} - You cannot publish over the previously published versions: ${version}.`,
    );
  pkg.versions[version] = { shasum: createHash('sha1').update(readFileSync(tarball)).digest('hex'), provenance, by: oidc ? 'oidc' : 'token' };
  save();
  process.stdout.write(`+ ${name}@${version}\n`);
}

if (args[0] === '--version') {
  process.stdout.write(`${state.cli}\n`);
  save();
} else if (args[0] === 'install' && args.includes('--global')) {
  state.cli = '11.6.2';
  save();
} else if (args[0] === 'view') {
  view();
} else if (args[0] === 'publish') {
  publish();
} else {
  throw new Error(`stand-in: npm ${args.join(' ')}`);
}
