import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allocatePort } from '../../../src/util/ports.ts';

/**
 * A throw-away PostgreSQL server (the Debian package's binaries) on a loopback port with
 * trust authentication, for tests that run the gate's SQL for real. initdb refuses root,
 * so under root the server runs as the `postgres` user.
 */
export const PG_BIN = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'].find((d) => existsSync(join(d, 'initdb')));

export interface LocalPostgres {
  /** postgres://postgres@127.0.0.1:<port>/<db> */
  url(db: string): string;
  psql(db: string, sql: string): string;
  stop(): void;
}

export async function startLocalPostgres(): Promise<LocalPostgres> {
  if (!PG_BIN) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql');
  const dir = mkdtempSync(join(tmpdir(), 'loadgate-pg-'));
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]): string =>
    asRoot
      ? execFileSync('runuser', ['-u', 'postgres', '--', join(PG_BIN, cmd), ...args], { encoding: 'utf8' })
      : execFileSync(join(PG_BIN, cmd), args, { encoding: 'utf8' });
  if (asRoot) {
    const pw = execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim();
    const gid = execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim();
    chownSync(dir, Number(pw), Number(gid));
  }
  const data = join(dir, 'data');
  const port = await allocatePort();
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start']);
  const url = (db: string) => `postgres://postgres@127.0.0.1:${port}/${db}`;
  return {
    url,
    psql: (db, sql) => execFileSync('psql', [url(db), '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', sql], { encoding: 'utf8' }),
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
