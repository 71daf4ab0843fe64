import { createServer, type Server } from 'node:http';
import { readFile, readdir } from 'node:fs/promises';
import { LOOPBACK, assertPortFree } from '../../util/ports.ts';

/**
 * A tiny Prometheus exporter for the target process, read from /proc. Python has no
 * goroutine or Go-heap metrics, so the graphs' "threads" and "heap in use" panels use
 * the target's OS thread count and resident memory. The target restarts for every run,
 * so the PID is set per run (`setPid`); with no PID only `loadgate_target_up 0` is served.
 *
 * It also sums the CPU time of every process in the target's process groups (Synapse,
 * PostgreSQL with its backends, nginx with its workers): on a machine shared with other
 * work, node_exporter's per-core CPU counts the neighbours too, this does not.
 *
 * And the CPU time of the whole bench: loadgate's own process and every process it
 * started, directly or not (both duet slots' servers and databases, nginx, k6, Prometheus,
 * node_exporter, the short-lived tools). node_exporter's busy CPU less this is the CPU
 * other work took from the bench (src/bench/local/outside-cpu.ts).
 */
export interface ProcSample {
  threads: number;
  residentBytes: number;
  cpuSeconds: number;
}

/** Parses /proc/<pid>/stat and /proc/<pid>/status text; exported for tests. */
export function parseProc(statText: string, statusText: string, clockTicks: number): ProcSample {
  // Field 2 (comm) may hold spaces and parentheses: split after its last ')'.
  const afterComm = statText.slice(statText.lastIndexOf(')') + 2).split(' ');
  // afterComm[0] is field 3 (state): utime is field 14, stime field 15.
  const utime = Number(afterComm[11]);
  const stime = Number(afterComm[12]);
  const threads = Number(/^Threads:\s+(\d+)/m.exec(statusText)?.[1]);
  const rssKb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(statusText)?.[1]);
  if (![utime, stime, threads, rssKb].every(Number.isFinite)) throw new Error('unexpected /proc format');
  return { threads, residentBytes: rssKb * 1024, cpuSeconds: (utime + stime) / clockTicks };
}

/** Process group id and CPU seconds from /proc/<pid>/stat text. */
function parseStatGroupCpu(statText: string, clockTicks: number): { pgid: number; cpuSeconds: number } | undefined {
  const f = statText.slice(statText.lastIndexOf(')') + 2).split(' ');
  const pgid = Number(f[2]);
  const cpu = (Number(f[11]) + Number(f[12])) / clockTicks;
  return Number.isFinite(pgid) && Number.isFinite(cpu) ? { pgid, cpuSeconds: cpu } : undefined;
}

/**
 * CPU seconds of all live processes in `groups`. Exited processes drop out of the sum, so
 * the exported counter is kept monotonic by the caller (see startProcessExporter).
 */
async function groupCpuSeconds(groups: ReadonlySet<number>, clockTicks: number): Promise<Map<number, number>> {
  const perPid = new Map<number, number>();
  if (!groups.size) return perPid;
  const entries = await readdir('/proc').catch(() => [] as string[]);
  await Promise.all(
    entries
      .filter((e) => /^\d+$/.test(e))
      .map(async (pid) => {
        const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
        const parsed = text ? parseStatGroupCpu(text, clockTicks) : undefined;
        if (parsed && groups.has(parsed.pgid)) perPid.set(Number(pid), parsed.cpuSeconds);
      }),
  );
  return perPid;
}

/** One process's line of /proc/<pid>/stat, as the bench's CPU needs it. */
export interface TreeStat {
  pid: number;
  ppid: number;
  /** utime + stime + cutime + cstime: its own CPU and that of the children it has reaped. */
  cpuSeconds: number;
}

/** Parses /proc/<pid>/stat text for the process tree; undefined when it is not that format. */
export function parseTreeStat(statText: string, clockTicks: number): TreeStat | undefined {
  const pid = Number(statText.slice(0, statText.indexOf(' ')));
  // After comm: [0] state, [1] ppid, ..., [11] utime, [12] stime, [13] cutime, [14] cstime (proc(5)).
  const f = statText.slice(statText.lastIndexOf(')') + 2).split(' ');
  const ppid = Number(f[1]);
  const ticks = [11, 12, 13, 14].map((i) => Number(f[i]));
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !ticks.every(Number.isFinite)) return undefined;
  return { pid, ppid, cpuSeconds: ticks.reduce((a, b) => a + b, 0) / clockTicks };
}

/** `root` and its live descendants. */
export function treeMembers(stats: readonly TreeStat[], root: number): TreeStat[] {
  const children = new Map<number, TreeStat[]>();
  for (const s of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
  const members: TreeStat[] = [];
  const seen = new Set<number>();
  const queue = stats.filter((s) => s.pid === root);
  while (queue.length) {
    const s = queue.pop() as TreeStat;
    if (seen.has(s.pid)) continue;
    seen.add(s.pid);
    members.push(s);
    queue.push(...(children.get(s.pid) ?? []));
  }
  return members;
}

/**
 * CPU seconds of `root` and its live descendants. A child's CPU moves into its parent's
 * cutime/cstime when the parent reaps it, so the sum keeps the CPU of short-lived children
 * (a psql, a probe) once they are gone, and counts nothing twice.
 */
export function treeCpuSeconds(stats: readonly TreeStat[], root: number): number {
  return treeMembers(stats, root).reduce((sum, s) => sum + s.cpuSeconds, 0);
}

/**
 * A counter fed a sum that can fall (a process left the tree unreaped: an orphan is
 * reparented to init when its parent dies first, as happens while a run stops): it adds
 * only rises, so Prometheus never sees a reset. A fall costs the rise of that one scrape.
 */
export class RisingCounter {
  private last: number | undefined;
  private total = 0;
  add(sum: number): number {
    if (this.last !== undefined && sum > this.last) this.total += sum - this.last;
    this.last = sum;
    return Math.round(this.total * 100) / 100;
  }
}

/** Every process's /proc/<pid>/stat, as the bench's CPU needs it. */
export async function readTreeStats(clockTicks = CLOCK_TICKS): Promise<TreeStat[]> {
  const entries = await readdir('/proc').catch(() => [] as string[]);
  const stats = await Promise.all(
    entries
      .filter((e) => /^\d+$/.test(e))
      .map(async (pid) => {
        const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
        return text ? parseTreeStat(text, clockTicks) : undefined;
      }),
  );
  return stats.filter((s): s is TreeStat => s !== undefined);
}

export function renderMetrics(sample: ProcSample | undefined, groupCpu?: number, benchCpu?: number): string {
  const lines = ['# HELP loadgate_target_up 1 while the target process is running.', '# TYPE loadgate_target_up gauge', `loadgate_target_up ${sample ? 1 : 0}`];
  if (sample) {
    lines.push(
      '# HELP loadgate_target_threads OS threads of the target process.',
      '# TYPE loadgate_target_threads gauge',
      `loadgate_target_threads ${sample.threads}`,
      '# HELP loadgate_target_resident_memory_bytes Resident memory of the target process.',
      '# TYPE loadgate_target_resident_memory_bytes gauge',
      `loadgate_target_resident_memory_bytes ${sample.residentBytes}`,
      '# HELP loadgate_target_cpu_seconds_total User+system CPU time of the target process.',
      '# TYPE loadgate_target_cpu_seconds_total counter',
      `loadgate_target_cpu_seconds_total ${sample.cpuSeconds}`,
    );
  }
  if (groupCpu !== undefined) {
    lines.push(
      '# HELP loadgate_target_group_cpu_seconds_total CPU time of the system under test (target, database and proxy process groups).',
      '# TYPE loadgate_target_group_cpu_seconds_total counter',
      `loadgate_target_group_cpu_seconds_total ${groupCpu}`,
    );
  }
  if (benchCpu !== undefined) {
    lines.push(
      '# HELP loadgate_bench_cpu_seconds_total CPU time of loadgate and every process it started (the whole bench, both duet slots).',
      '# TYPE loadgate_bench_cpu_seconds_total counter',
      `loadgate_bench_cpu_seconds_total ${benchCpu}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

export interface ProcessExporter {
  readonly port: number;
  setPid(pid: number | undefined): void;
  /** Long-lived process groups of the system under test (PostgreSQL, nginx). */
  addGroup(pgid: number): void;
  close(): Promise<void>;
}

/** Linux reports CPU times in USER_HZ, 100 on every mainstream kernel configuration. */
const CLOCK_TICKS = 100;

export async function startProcessExporter(port: number): Promise<ProcessExporter> {
  let pid: number | undefined;
  const groups = new Set<number>();
  // Counter bookkeeping: CPU of processes that exited is kept, so the total never drops.
  const lastSeen = new Map<number, number>();
  let exitedCpu = 0;
  const groupCpu = async (): Promise<number> => {
    const live = await groupCpuSeconds(new Set([...groups, ...(pid !== undefined ? [pid] : [])]), CLOCK_TICKS);
    for (const [p, cpu] of lastSeen) if (!live.has(p)) exitedCpu += cpu;
    lastSeen.clear();
    let sum = exitedCpu;
    for (const [p, cpu] of live) {
      lastSeen.set(p, cpu);
      sum += cpu;
    }
    return Math.round(sum * 100) / 100;
  };
  const bench = new RisingCounter();
  const benchCpu = async (): Promise<number> => bench.add(treeCpuSeconds(await readTreeStats(), process.pid));
  const sample = async (): Promise<ProcSample | undefined> => {
    if (pid === undefined) return undefined;
    try {
      const [stat, status] = await Promise.all([readFile(`/proc/${pid}/stat`, 'utf8'), readFile(`/proc/${pid}/status`, 'utf8')]);
      return parseProc(stat, status, CLOCK_TICKS);
    } catch {
      return undefined; // exited between runs
    }
  };
  const server: Server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    void Promise.all([sample(), groupCpu(), benchCpu()]).then(([s, cpu, all]) => {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(renderMetrics(s, cpu, all));
    });
  });
  await assertPortFree('process exporter', port);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, LOOPBACK, () => resolve());
  });
  return {
    port,
    setPid(next) {
      pid = next;
    },
    addGroup(pgid) {
      groups.add(pgid);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
