import { access, mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cpuCount } from '../../metrics/target-cpus.ts';

/**
 * A CPU quota for the target's processes (--candidate-cpu-quota 0.88): a known capacity
 * loss to prove a gate fails, or any controlled slowdown. The processes go into a cgroup
 * of their own whose CFS quota is `fraction` of the target cores:
 * - cgroup v2 (current Linux runners): `cpu.max` = "<quota> <period>"
 *   (kernel docs, Documentation/admin-guide/cgroup-v2.rst, "cpu.max"; the cpu controller
 *   must be enabled in the parent's cgroup.subtree_control);
 * - cgroup v1: `cpu.cfs_period_us` and `cpu.cfs_quota_us` in the cpu hierarchy
 *   (Documentation/scheduler/sched-bwc.rst, "CFS Bandwidth Control").
 * Both need write access to the cgroup file system (root on these machines).
 * The quota alone changes nothing below it: the local profile's ceiling is where the
 * target uses 50 % of its core, so a 0.88 limit would never throttle. The side's CPU
 * utilisation is therefore measured against the share (`availableCpus`), as for a
 * machine with that much CPU, and the quota stops it using more.
 */

const CFS_PERIOD_US = 100_000;

export interface CgroupLayout {
  version: 1 | 2;
  /** v2: the unified root; v1: the cpu controller's hierarchy. */
  dir: string;
}

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

/** Which cgroup version `root` (normally /sys/fs/cgroup) holds, and where the cpu controller is. */
export async function detectCgroup(root = '/sys/fs/cgroup'): Promise<CgroupLayout> {
  if (await exists(join(root, 'cgroup.controllers'))) return { version: 2, dir: root };
  for (const name of ['cpu', 'cpu,cpuacct']) {
    if (await exists(join(root, name, 'cpu.cfs_quota_us'))) return { version: 1, dir: join(root, name) };
  }
  throw new Error(`no cgroup cpu controller found under ${root} (neither cgroup.controllers for v2 nor cpu/cpu.cfs_quota_us for v1); the CPU quota needs one`);
}

export interface QuotaGroup {
  readonly path: string;
  readonly quotaUs: number;
  add(pid: number): Promise<void>;
  /** Moves the processes back to the parent group and removes this one. */
  release(): Promise<void>;
}

/** Creates `<dir>/<name>` with a quota of `fraction` × `cpus` CPUs. */
export async function createQuotaGroup(layout: CgroupLayout, name: string, fraction: number, cpus: number): Promise<QuotaGroup> {
  if (!(fraction > 0 && fraction <= 1)) throw new Error(`CPU quota must be in (0, 1], got ${fraction}`);
  const path = join(layout.dir, name);
  const quotaUs = Math.max(1000, Math.round(fraction * cpus * CFS_PERIOD_US));
  try {
    if (layout.version === 2) {
      const control = join(layout.dir, 'cgroup.subtree_control');
      const enabled = (await readFile(control, 'utf8').catch(() => '')).split(/\s+/);
      if (!enabled.includes('cpu')) await writeFile(control, '+cpu');
      await mkdir(path, { recursive: true });
      await writeFile(join(path, 'cpu.max'), `${quotaUs} ${CFS_PERIOD_US}`);
    } else {
      await mkdir(path, { recursive: true });
      await writeFile(join(path, 'cpu.cfs_period_us'), String(CFS_PERIOD_US));
      await writeFile(join(path, 'cpu.cfs_quota_us'), String(quotaUs));
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(
      `cannot set a CPU quota in ${path} (${code ?? (error as Error).message}): it needs write access to the cgroup v${layout.version} file system (run as root)`,
    );
  }
  const pids: number[] = [];
  return {
    path,
    quotaUs,
    async add(pid: number) {
      await writeFile(join(path, 'cgroup.procs'), String(pid));
      pids.push(pid);
    },
    async release() {
      for (const pid of pids) await writeFile(join(layout.dir, 'cgroup.procs'), String(pid)).catch(() => {});
      await rmdir(path).catch(() => {});
    },
  };
}

/** The local bench's hook: the target process of one run into its own quota group. */
export async function limitCpu(pid: number, fraction: number, targetCpus: string, role: string, progress: { info(line: string): void }): Promise<QuotaGroup> {
  const layout = await detectCgroup();
  const group = await createQuotaGroup(layout, `loadgate-${role}-${process.pid}`, fraction, cpuCount(targetCpus));
  await group.add(pid);
  progress.info(
    `${role} target limited to ${fraction} of cores ${targetCpus} (cgroup v${layout.version} quota ${group.quotaUs} µs per ${CFS_PERIOD_US} µs, ${group.path})`,
  );
  return group;
}
