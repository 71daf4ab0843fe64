import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';

/**
 * CPU time of a process (all its threads) from /proc/<pid>/stat, so loadgate can tell
 * when the load generator itself is the bottleneck. Linux only, like the local bench.
 */

let clockTicks: number | undefined;

/** Kernel clock ticks per second (USER_HZ), the unit of utime/stime. */
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
      clockTicks = Number.isInteger(value) && value > 0 ? value : 100;
    } catch {
      clockTicks = 100; // the value on every Linux architecture loadgate targets
    }
  }
  return clockTicks;
}

/** Parses the text of /proc/<pid>/stat into user+system CPU seconds. */
export function parseProcStat(text: string): number {
  // comm (field 2) is in parentheses and may itself contain spaces or ')'.
  const afterComm = text
    .slice(text.lastIndexOf(')') + 2)
    .trim()
    .split(/\s+/);
  // afterComm[0] is field 3 (state); utime and stime are fields 14 and 15.
  const utime = Number(afterComm[11]);
  const stime = Number(afterComm[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) {
    throw new Error(`unexpected /proc stat format: ${text.slice(0, 120)}`);
  }
  return (utime + stime) / ticksPerSecond();
}

/** CPU seconds used so far by `pid`, or undefined once the process is gone. */
export async function processCpuSeconds(pid: number): Promise<number | undefined> {
  try {
    return parseProcStat(await readFile(`/proc/${pid}/stat`, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ESRCH') return undefined;
    throw error;
  }
}

/** Number of CPUs in a taskset list such as "1", "0-1" or "0,2-3". */
export function countCpus(list: string): number {
  let n = 0;
  for (const part of list.split(',')) {
    const [from, to] = part.split('-').map(Number);
    if (from === undefined || !Number.isInteger(from)) throw new Error(`invalid CPU list "${list}"`);
    const end = to === undefined ? from : to;
    if (!Number.isInteger(end) || end < from) throw new Error(`invalid CPU list "${list}"`);
    n += end - from + 1;
  }
  return n;
}
