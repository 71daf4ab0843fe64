import { chown } from 'node:fs/promises';
import { runTool } from '../../util/run-tool.ts';

/**
 * PostgreSQL refuses to run as root, and the bench should not run servers as root
 * anyway. When loadgate runs as root, such components run as the `loadgate` system user
 * (created by scripts/setup-local.sh) or, failing that, `nobody`, through setpriv.
 */
export interface RunAs {
  name: string;
  group: string;
  uid: number;
  gid: number;
}

const CANDIDATE_USERS = ['loadgate', 'nobody'];

let cached: RunAs | null | undefined;

/** The account to drop to, or null when loadgate already runs unprivileged. */
export async function resolveRunAs(): Promise<RunAs | null> {
  if (cached !== undefined) return cached;
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return (cached = null);
  for (const name of CANDIDATE_USERS) {
    try {
      const { stdout } = await runTool('getent', ['passwd', name], { timeoutMs: 5000 });
      const fields = stdout.trim().split(':');
      const uid = Number(fields[2]);
      const gid = Number(fields[3]);
      if (!Number.isInteger(uid) || !Number.isInteger(gid) || uid === 0) continue;
      const group = (await runTool('getent', ['group', String(gid)], { timeoutMs: 5000 })).stdout.split(':')[0] ?? String(gid);
      return (cached = { name, group, uid, gid });
    } catch {
      /* try the next one */
    }
  }
  throw new Error('running as root, but neither the "loadgate" nor the "nobody" user exists to run PostgreSQL; run scripts/setup-local.sh');
}

/** Wraps a command so it runs as `runAs` (no-op when null). */
export function asUser(runAs: RunAs | null, command: string, args: readonly string[]): [string, string[]] {
  if (!runAs) return [command, [...args]];
  return ['setpriv', [`--reuid=${runAs.uid}`, `--regid=${runAs.gid}`, '--clear-groups', '--', command, ...args]];
}

/** Hands a directory to `runAs` (no-op when null). */
export async function giveTo(runAs: RunAs | null, path: string): Promise<void> {
  if (runAs) await chown(path, runAs.uid, runAs.gid);
}
