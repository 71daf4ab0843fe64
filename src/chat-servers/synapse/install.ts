import { mkdir, readdir, readFile, rm, writeFile, open } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { runTool } from '../../util/run-tool.ts';
import { ComponentError } from '../../util/readiness.ts';
import type { BuildRef } from '../build-source.ts';

/**
 * Each Synapse version lives in its own virtualenv under `<cache>/synapse/<version>/`,
 * installed once with `pip install matrix-synapse[postgres]==<version>` and reused. A
 * marker file written last says the install finished; a venv without it (an interrupted
 * install) is removed and installed again. A local build (a wheel or source directory)
 * gets its own venv keyed by its content hash, installed with `pip install <path>[postgres]`. Venvs embed absolute paths, so they are built
 * in place, under a lock file so two gates on one machine do not build the same one.
 */
export interface SynapseInstall {
  version: string;
  venvDir: string;
  python: string;
}

const markerSchema = z.strictObject({ package: z.string(), version: z.string(), installedAt: z.string(), python: z.string(), sha256: z.string().optional() });
const MARKER = 'loadgate-installed.json';

export interface InstallOptions {
  /** PyPI version, already validated (see version.ts); a build's declared version. */
  version: string;
  /** A local wheel or source directory to install instead of the PyPI release (build-source.ts). */
  build?: LocalBuild;
  cacheDir: string;
  packageName: string;
  /** Python interpreter for the venv; LOADGATE_PYTHON or python3. */
  python?: string;
  onStep?: (message: string) => void;
  /** Log for pip's output, kept in the out dir. */
  logFile?: string;
}

type LocalBuild = Extract<BuildRef, { kind: 'wheel' | 'source' }>;

/**
 * The key of a side's install: its PyPI version, or its build's content hash, so a
 * modified build of a released version never shares that version's venv.
 */
export function installKey(side: { version: string; build?: BuildRef | undefined }): string {
  return side.build ? `build-${side.build.sha256.slice(0, 16)}` : side.version;
}

function venvDirFor(cacheDir: string, o: Pick<InstallOptions, 'version' | 'build'>): string {
  return join(cacheDir, 'synapse', installKey(o));
}

/**
 * The installed tree of a side, when its install finished: the venv's site-packages (found
 * under lib/python3.*, whichever Python built it) and its interpreter; the roots the
 * changed-code diff reads and parses each version's sources from.
 */
export async function installedTree(
  cacheDir: string,
  side: { version: string; build?: BuildRef | undefined },
): Promise<{ root: string; python: string } | undefined> {
  const venvDir = join(cacheDir, 'synapse', installKey(side));
  if (!(await readMarker(venvDir))) return undefined;
  const python = (await readdir(join(venvDir, 'lib')).catch(() => [] as string[])).find((n) => /^python3\.\d+$/.test(n));
  return python ? { root: join(venvDir, 'lib', python, 'site-packages'), python: join(venvDir, 'bin', 'python') } : undefined;
}

async function readMarker(venvDir: string): Promise<z.output<typeof markerSchema> | undefined> {
  try {
    return markerSchema.parse(JSON.parse(await readFile(join(venvDir, MARKER), 'utf8')));
  } catch {
    return undefined;
  }
}

/** Holds an exclusive lock file for the duration of `work` (bounded wait for another holder). */
export async function withLock<T>(lockFile: string, work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 20 * 60_000;
  for (;;) {
    try {
      const handle = await open(lockFile, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // A lock whose owner is gone is stale.
      const owner = Number(await readFile(lockFile, 'utf8').catch(() => ''));
      if (!Number.isInteger(owner) || owner <= 0 || !isAlive(owner)) {
        await rm(lockFile, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lockFile} (held by pid ${owner})`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  try {
    return await work();
  } finally {
    await rm(lockFile, { force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function ensureSynapse(o: InstallOptions): Promise<SynapseInstall> {
  const venvDir = venvDirFor(o.cacheDir, o);
  const python = join(venvDir, 'bin', 'python');
  const ready = async () => {
    const marker = await readMarker(venvDir);
    return marker?.version === o.version && marker.sha256 === o.build?.sha256;
  };
  // pip takes a local path with extras as <path>[extra]; the release as <name>[extra]==<version>.
  const what = o.build ? `${o.build.kind} ${o.build.path}` : `${o.packageName}==${o.version}`;
  const requirement = o.build ? `${o.build.path}[postgres]` : `${o.packageName}[postgres]==${o.version}`;
  if (await ready()) return { version: o.version, venvDir, python };

  await mkdir(join(o.cacheDir, 'synapse'), { recursive: true });
  return withLock(`${venvDir}.lock`, async () => {
    if (await ready()) return { version: o.version, venvDir, python };
    o.onStep?.(`installing ${what} into ${venvDir}`);
    await rm(venvDir, { recursive: true, force: true });
    const basePython = o.python ?? process.env.LOADGATE_PYTHON ?? 'python3';
    const log: string[] = [];
    try {
      await runTool(basePython, ['-m', 'venv', venvDir], { timeoutMs: 120_000 });
      const env = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1' };
      const pip = await runTool(python, ['-m', 'pip', 'install', '--quiet', requirement], {
        env,
        timeoutMs: 20 * 60_000,
      });
      log.push(pip.stdout, pip.stderr);
      const { stdout } = await runTool(python, ['-c', 'import synapse, psycopg2; print(synapse.__version__)'], { timeoutMs: 60_000 });
      // Some releases append build info: "1.163.2 (b=main,b7312a0)".
      const installed = stdout.trim().split(/\s+/)[0] ?? '';
      if (installed !== o.version)
        throw new Error(`pip installed Synapse ${installed}, expected ${o.version}${o.build ? ` (the version ${o.build.path} declares)` : ''}`);
    } catch (error) {
      await rm(venvDir, { recursive: true, force: true });
      if (o.logFile) await writeFile(o.logFile, `${log.join('\n')}\n${(error as Error).message}\n`, { flag: 'a' });
      throw new ComponentError(
        `synapse ${o.version}`,
        `could not install ${what} (${o.build ? 'does pip install it, with its dependencies reachable?' : 'is it a published version?'} is python3-venv installed?): ${(error as Error).message}`,
        o.logFile,
      );
    }
    const marker = {
      package: o.packageName,
      version: o.version,
      installedAt: new Date().toISOString(),
      python: basePython,
      ...(o.build ? { sha256: o.build.sha256 } : {}),
    };
    await writeFile(join(venvDir, MARKER), JSON.stringify(marker));
    return { version: o.version, venvDir, python };
  });
}
