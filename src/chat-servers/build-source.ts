import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { z } from 'zod';
import type { BuildRecord } from '../results/schema.ts';
import { InputError } from '../util/errors.ts';

/**
 * A side given as a build rather than a released version: a Synapse wheel or source
 * directory on this machine, or a Mattermost build tarball URL (load-test-ng's comparison
 * names its two builds the same way, a label and a URL: config/comparison.sample.json
 * `BaseBuild`/`NewBuild`, comparison/config.go). A build is named by its content (a local
 * build's SHA-256) or its URL, so the results, the report and verdict.json say exactly
 * what each side ran, and two different builds of one version never share an install.
 *
 * Syntax of `--baseline`/`--candidate`: a value starting with `file:`, `./`, `../`, `/`
 * or `~/` is a local path; one starting with `https://` is a build URL; anything else is
 * a release label as before (a label never holds a "/").
 */
export type BuildRef = BuildRecord;

const LOCAL_PREFIX = /^(file:|\.{1,2}\/|\/|~\/)/;
const URL_PREFIX = /^[a-z][a-z0-9+.-]*:\/\//i;

/** Whether a --baseline/--candidate value names a build rather than a release label. */
export function isBuildValue(value: string): boolean {
  return LOCAL_PREFIX.test(value) || URL_PREFIX.test(value);
}

/** The side's label in results, file names and the report: the build's version (if known), its kind and a short content hash. */
export function buildLabel(build: BuildRef): string {
  const short = build.sha256.slice(0, 12);
  if (build.kind === 'url') {
    const name = basename(new URL(build.url).pathname)
      .replace(/\.tar\.gz$/, '')
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .replace(/^[^A-Za-z0-9]+/, '');
    return `${(name || 'build').slice(0, 44)}+url.${short}`;
  }
  return `${build.version.slice(0, 40)}+${build.kind === 'wheel' ? 'whl' : 'src'}.${short}`;
}

// The AWS nodes fetch the tarball with curl inside a shell script (bench/aws/scripts.ts
// installScript), so the URL is limited to https, a .tar.gz path and no quoting characters.
const buildUrlSchema = z
  .string()
  .regex(/^https:\/\//, { error: 'must be an https:// URL', abort: true })
  .regex(/^[^\s'"`$\\]+$/, { error: 'must not contain spaces, quotes, "$" or "\\"', abort: true })
  .refine((s) => URL.canParse(s), { error: 'is not a valid URL', abort: true })
  .refine((s) => new URL(s).pathname.endsWith('.tar.gz'), { error: 'must name a .tar.gz build tarball', abort: true })
  .refine((s) => !new URL(s).username && !new URL(s).password, { error: 'must not hold credentials' });

/** A Mattermost build tarball URL (`--candidate https://…/mattermost-….tar.gz`); throws InputError naming the flag. */
export function parseBuildUrl(value: string, flag: string): BuildRef {
  const parsed = buildUrlSchema.safeParse(value);
  if (!parsed.success) {
    throw new InputError(
      `${flag}: ${JSON.stringify(value)} ${parsed.error.issues[0]?.message ?? 'is not a build URL'}; give a build tarball such as https://releases.mattermost.com/10.12.0/mattermost-10.12.0-linux-amd64.tar.gz`,
    );
  }
  return { kind: 'url', url: parsed.data, sha256: createHash('sha256').update(parsed.data).digest('hex') };
}

/**
 * A local Synapse build: a wheel file (`*.whl`) or a source directory pip can install
 * (pyproject.toml or setup.py). Its version comes from the wheel's file name (PEP 427:
 * `{name}-{version}-…whl`) or the source's pyproject.toml; it orders the dataset build.
 */
export function parseLocalBuild(value: string, flag: string, cwd: string): BuildRef {
  if (URL_PREFIX.test(value) && !value.startsWith('file:')) {
    throw new InputError(
      `${flag}: ${JSON.stringify(value)}: Synapse builds are local files; give a wheel or a source directory, e.g. ${flag} ./dist/matrix_synapse-1.163.2-cp310-abi3-manylinux_2_28_x86_64.whl`,
    );
  }
  const raw = value.replace(/^file:(\/\/)?/, '').replace(/^~\//, `${process.env.HOME ?? '~'}/`);
  const path = resolve(cwd, raw);
  let stat;
  try {
    stat = statSync(path);
  } catch {
    throw new InputError(`${flag}: no file or directory ${path}; give a Synapse wheel (.whl) or a source directory with a pyproject.toml`);
  }
  if (stat.isFile()) {
    const m = /^[A-Za-z0-9_.]+-([0-9][^-]*)-.+\.whl$/.exec(basename(path));
    if (!m?.[1]) throw new InputError(`${flag}: ${path} is not a wheel (expected a file named <name>-<version>-<tags>.whl); give a .whl or a source directory`);
    return { kind: 'wheel', path, sha256: createHash('sha256').update(readFileSync(path)).digest('hex'), version: m[1] };
  }
  if (!stat.isDirectory()) throw new InputError(`${flag}: ${path} is neither a file nor a directory`);
  return { kind: 'source', path, sha256: hashTree(path), version: sourceVersion(path, flag) };
}

function sourceVersion(dir: string, flag: string): string {
  let text: string;
  try {
    text = readFileSync(join(dir, 'pyproject.toml'), 'utf8');
  } catch {
    throw new InputError(
      `${flag}: ${dir} has no pyproject.toml; give the root of a Synapse checkout (or a directory pip can install that declares its version there)`,
    );
  }
  // Synapse declares it under [tool.poetry] (pyproject.toml); a PEP 621 [project] table works too.
  const m = /^version\s*=\s*"([^"]+)"/m.exec(text);
  if (!m?.[1]) throw new InputError(`${flag}: ${join(dir, 'pyproject.toml')} declares no version = "…"; loadgate needs it to order the dataset build`);
  return m[1];
}

// Build outputs and caches: rebuilding does not make another build.
const SKIPPED = new Set(['.git', '__pycache__', 'node_modules', 'target', 'build', 'dist', '.venv', '.tox', '.mypy_cache', '.pytest_cache']);

/** SHA-256 over every file's relative path and content, in sorted order. */
export function hashTree(root: string): string {
  const hash = createHash('sha256');
  const walk = (dir: string): void => {
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (SKIPPED.has(entry.name) || entry.name.endsWith('.pyc') || entry.name.endsWith('.egg-info')) continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        const content = readFileSync(full);
        hash.update(`${relative(root, full)}\u0000${content.length}\u0000`).update(content);
      }
    }
  };
  walk(root);
  return hash.digest('hex');
}
