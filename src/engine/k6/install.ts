import { execFile } from 'node:child_process';
import { access, constants, mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { InputError } from '../../util/errors.ts';

const execFileAsync = promisify(execFile);

/**
 * k6 for the local bench, built from source with `go install` (the Go module proxy is
 * the one source of k6 this bench uses) and cached per version:
 * `<cacheDir>/k6/<version>/k6`. A cached binary is reused without touching the network.
 */

/** Release tags only: "v1.4.2", "v1.0.0-rc1". Refuses anything that could be a path or flag. */
const K6_VERSION_PATTERN = /^v\d{1,3}\.\d{1,3}\.\d{1,3}(-[0-9A-Za-z]+(\.[0-9A-Za-z]+)*)?$/;

export interface EnsureK6Options {
  /** Go toolchain to run; default "go" from PATH. */
  goBinary?: string;
  /** Called with a line before a (slow) build starts. */
  onProgress?: (line: string) => void;
  /** Build time limit; default 15 minutes (a cold build on 2 cores takes a few). */
  timeoutMs?: number;
}

export function k6CachePath(version: string, cacheDir: string): string {
  return join(cacheDir, 'k6', version, 'k6');
}

export async function ensureK6(version: string, cacheDir: string, options: EnsureK6Options = {}): Promise<string> {
  if (!K6_VERSION_PATTERN.test(version)) {
    throw new InputError(`engine.version: "${version}" is not a k6 release tag; expected something like "v1.4.2"`);
  }
  const target = k6CachePath(version, cacheDir);
  if (await isExecutable(target)) return target;

  const go = options.goBinary ?? 'go';
  try {
    await execFileAsync(go, ['version'], { timeout: 30_000 });
  } catch {
    throw new InputError(
      `k6 ${version} is not cached at ${target} and the Go toolchain ("${go}") is not available to build it; ` +
        'install Go >= 1.24 (what k6 v1.4.2 requires; Debian 12 golang-go is too old, use the go.dev tarball or actions/setup-go) or put a k6 binary at that path',
    );
  }

  // Build into a private folder, then rename into place, so an interrupted or concurrent
  // build never leaves a half-written binary at the cached path.
  const versionDir = join(cacheDir, 'k6', version);
  const buildDir = join(cacheDir, 'k6', `.build-${version}-${process.pid}-${Date.now()}`);
  await mkdir(buildDir, { recursive: true });
  options.onProgress?.(`building k6 ${version} with go install (cached afterwards at ${target})`);
  try {
    await execFileAsync(go, ['install', `go.k6.io/k6@${version}`], {
      env: { ...process.env, GOBIN: buildDir, CGO_ENABLED: '0', GOFLAGS: '-buildvcs=false' },
      timeout: options.timeoutMs ?? 15 * 60_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    const built = join(buildDir, 'k6');
    if (!(await isExecutable(built))) throw new Error(`go install finished but ${built} is missing`);
    await mkdir(versionDir, { recursive: true });
    await rename(built, target);
  } catch (error) {
    const e = error as Error & { stderr?: string };
    const detail = (e.stderr ?? '').trim().split('\n').slice(-6).join('\n') || e.message;
    throw new Error(`could not build k6 ${version} with "${go} install go.k6.io/k6@${version}":\n${detail}`);
  } finally {
    await rm(buildDir, { recursive: true, force: true });
  }
  return target;
}

/** "k6 v1.4.2 (go1.26.8, linux/amd64)" -> "v1.4.2", for the bench fingerprint. */
export async function k6Version(k6Path: string): Promise<string> {
  const { stdout } = await execFileAsync(k6Path, ['version'], { timeout: 30_000, env: { ...process.env, K6_NO_USAGE_REPORT: 'true' } });
  const match = /\bk6 (v\d+\.\d+\.\d+\S*)/.exec(stdout);
  if (!match?.[1]) throw new Error(`${k6Path} version printed an unexpected line: ${stdout.trim().slice(0, 120)}`);
  return match[1];
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
