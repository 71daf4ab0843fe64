import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StoredProfile } from '../../results/profile.ts';
import type { ProfileCapability } from '../chat-server.ts';
import { runTool } from '../../util/run-tool.ts';
import { ComponentError } from '../../util/readiness.ts';
import { withLock } from './install.ts';
import { mergeRecordings, parseCollapsed, type CollapsedStacks } from './py-spy-raw.ts';

/**
 * py-spy (PyPI) samples a running Synapse's Python stacks from outside the process.
 *
 * It attaches to the Synapse the bench started (`record --pid`) instead of starting
 * Synapse under it: the process the bench supervises, measures (process exporter) and
 * limits (CPU quota) stays Synapse itself, and the measured window is known only once the
 * test is over, which one py-spy writing one file at exit could not cut to. So py-spy
 * records consecutive SEGMENT_SEC segments, and the profile keeps those in the window,
 * a straddling one pro rata. Attaching needs ptrace rights over Synapse, which runs as
 * loadgate's own user: root has them; another user needs kernel.yama.ptrace_scope = 0.
 *
 * --nonblocking: Synapse is never paused to be sampled (lower cost, an occasional torn
 * stack); --function: frames carry the function's first line, so same-named methods in
 * one file stay apart. py-spy runs on the target's cores: its CPU is charged to the side
 * it samples, alike on both sides of a duet.
 */
const PY_SPY_VERSION = '0.4.3';
const PY_SPY_RATE_HZ = 20;
const SEGMENT_SEC = 10;
const MARKER = 'loadgate-installed.json';

/** py-spy in its own cached virtualenv, `<cache>/py-spy/<version>/`, installed once from PyPI. */
export async function ensurePySpy(o: { cacheDir: string; python?: string; onStep?: (message: string) => void }): Promise<string> {
  const venvDir = join(o.cacheDir, 'py-spy', PY_SPY_VERSION);
  const bin = join(venvDir, 'bin', 'py-spy');
  const ready = async () => (await readFile(join(venvDir, MARKER), 'utf8').catch(() => '')).includes(`"${PY_SPY_VERSION}"`);
  if (await ready()) return bin;
  await mkdir(join(o.cacheDir, 'py-spy'), { recursive: true });
  return withLock(`${venvDir}.lock`, async () => {
    if (await ready()) return bin;
    o.onStep?.(`installing py-spy==${PY_SPY_VERSION} into ${venvDir}`);
    await rm(venvDir, { recursive: true, force: true });
    try {
      await runTool(o.python ?? process.env.LOADGATE_PYTHON ?? 'python3', ['-m', 'venv', venvDir], { timeoutMs: 120_000 });
      const env = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1' };
      await runTool(join(venvDir, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', `py-spy==${PY_SPY_VERSION}`], { env, timeoutMs: 10 * 60_000 });
      const { stdout } = await runTool(bin, ['--version'], { timeoutMs: 30_000 });
      if (stdout.trim() !== `py-spy ${PY_SPY_VERSION}`) throw new Error(`pip installed "${stdout.trim()}", expected py-spy ${PY_SPY_VERSION}`);
    } catch (error) {
      await rm(venvDir, { recursive: true, force: true });
      throw new ComponentError('py-spy', `could not install py-spy==${PY_SPY_VERSION} for profile: on (or set profile: off): ${(error as Error).message}`);
    }
    await writeFile(join(venvDir, MARKER), JSON.stringify({ package: 'py-spy', version: PY_SPY_VERSION, installedAt: new Date().toISOString() }));
    return bin;
  });
}

/**
 * Why py-spy could not attach to a process of this user, or undefined when it can. Yama
 * (Documentation/admin-guide/LSM/Yama.rst): at ptrace_scope 0 a process may attach to any
 * process of its own user; at 1 (Ubuntu's default, so a GitHub-hosted runner's `runner`
 * user) only to its descendants, and Synapse is loadgate's child, not py-spy's; at 2 only
 * with CAP_SYS_PTRACE; at 3 never. Root has CAP_SYS_PTRACE.
 */
export async function ptraceRefusal(
  scopeFile = '/proc/sys/kernel/yama/ptrace_scope',
  uid = typeof process.getuid === 'function' ? process.getuid() : 0,
): Promise<string | undefined> {
  const scope = (await readFile(scopeFile, 'utf8').catch(() => '0')).trim();
  if (scope === '0' || (uid === 0 && scope !== '3')) return undefined;
  const fix =
    scope === '3'
      ? 'ptrace_scope 3 cannot be lowered without a reboot: set profile: off on this machine'
      : 'before the gate, run `sudo sysctl -w kernel.yama.ptrace_scope=0` (a step of its own on a GitHub-hosted runner, whose runner user has sudo), run loadgate as root, or set profile: off';
  return `profile: on needs py-spy to attach to Synapse (ptrace), which kernel.yama.ptrace_scope = ${scope} refuses${scope === '3' ? ' to everyone' : ' to a user other than root'}: ${fix}`;
}

/** Synapse's profile capability: py-spy attached to the slot's Synapse from the start of its test. */
export const pySpyProfile: ProfileCapability = {
  refusal: () => ptraceRefusal(),
  async prepare(o) {
    const pySpy = await ensurePySpy(o);
    return {
      attach(target) {
        if (!target.process) throw new Error('py-spy profiles a process on this machine: the bench gave none');
        const recorder = startPySpy({ pySpy, pid: target.process.pid, ...(target.process.cpus ? { cpus: target.process.cpus } : {}), dir: target.dir });
        return { stop: () => recorder.stop(), profile: async (w) => recorder.profile({ startMs: w.startSec * 1000, endMs: w.endSec * 1000 }) };
      },
    };
  },
};

interface Segment {
  startMs: number;
  endMs: number;
  stacks: CollapsedStacks;
}

export interface PySpyRecorder {
  /** Stops recording; the segment in flight is cut short and kept. */
  stop(): Promise<void>;
  /** The profile of a window (ms since the epoch), or why there is none. */
  profile(window: { startMs: number; endMs: number }): StoredProfile | string;
}

export interface PySpyOptions {
  pySpy: string;
  pid: number;
  /** The target's cores, for `taskset -c`. */
  cpus?: string;
  /** Scratch directory for the segments' files. */
  dir: string;
  rateHz?: number;
  segmentSec?: number;
}

/** Records the process in consecutive segments until stopped. */
export function startPySpy(o: PySpyOptions): PySpyRecorder {
  const rate = o.rateHz ?? PY_SPY_RATE_HZ;
  const segmentSec = o.segmentSec ?? SEGMENT_SEC;
  const segments: Segment[] = [];
  const problems: string[] = [];
  let stopped = false;
  let current: ChildProcess | undefined;

  const recordOne = async (file: string): Promise<void> => {
    const args = [
      'record',
      '--pid',
      String(o.pid),
      '--rate',
      String(rate),
      '--duration',
      String(segmentSec),
      '--format',
      'raw',
      '--function',
      '--nonblocking',
      '--output',
      file,
    ];
    const [command, argv] = o.cpus ? ['taskset', ['-c', o.cpus, o.pySpy, ...args]] : [o.pySpy, args];
    const startMs = Date.now();
    const child = spawn(command, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
    current = child;
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    const code = await new Promise<number | null>((resolve) => {
      child.once('error', () => resolve(-1));
      child.once('close', (c) => resolve(c));
    });
    current = undefined;
    const endMs = Date.now();
    const text = await readFile(file, 'utf8').catch(() => undefined);
    await rm(file, { force: true });
    if (text === undefined) {
      // Stopped while attaching: nothing was sampled, nothing is lost.
      if (!stopped) problems.push(`py-spy wrote no profile (exit ${code}): ${stderr.trim().split('\n').slice(-3).join(' ') || 'no message'}`);
      return;
    }
    // A full segment sampled for segmentSec up to its exit; one cut short, from its start.
    segments.push({ startMs: Math.max(startMs, endMs - segmentSec * 1000), endMs, stacks: parseCollapsed(text, file) });
  };

  const loop = (async () => {
    await mkdir(o.dir, { recursive: true });
    for (let i = 0; !stopped; i++) {
      const before = problems.length;
      await recordOne(join(o.dir, `segment-${i}.txt`)).catch((error: Error) => problems.push(`py-spy: ${error.message}`));
      // A py-spy that cannot attach will not on the next try either.
      if (problems.length > before) break;
    }
  })();

  return {
    async stop() {
      stopped = true;
      const child = current;
      child?.kill('SIGINT'); // py-spy writes what it sampled on Ctrl-C
      const timer = setTimeout(() => child?.kill('SIGKILL'), 15_000);
      await loop;
      clearTimeout(timer);
    },
    profile(window) {
      const windowSec = (window.endMs - window.startMs) / 1000;
      if (!(windowSec > 0)) return 'the measured window is empty';
      const recordings = segments.map((s) => {
        const overlapMs = Math.max(0, Math.min(s.endMs, window.endMs) - Math.max(s.startMs, window.startMs));
        return { stacks: s.stacks, weight: overlapMs / Math.max(1, s.endMs - s.startMs), coveredSec: overlapMs / 1000 };
      });
      const profile = mergeRecordings(recordings, { tool: `py-spy ${PY_SPY_VERSION}`, sampleSec: 1 / rate, windowSec });
      if (profile) return profile;
      return problems.length ? problems.join('; ') : 'py-spy recorded no samples in the measured window';
    },
  };
}
