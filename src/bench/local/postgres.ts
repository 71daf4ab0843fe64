import { mkdir, readdir, rm, writeFile, access } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { ProcessSupervisor, ManagedProcess } from '../../util/process.ts';
import { runTool } from '../../util/run-tool.ts';
import { LOOPBACK, assertPortFree } from '../../util/ports.ts';
import { ComponentError, waitUntilReady } from '../../util/readiness.ts';
import { asUser, giveTo, resolveRunAs, type RunAs } from './unprivileged.ts';

/**
 * A throw-away PostgreSQL cluster for one bench: `initdb` into the bench's data dir,
 * listening on 127.0.0.1 only, its unix socket inside the data dir, run as an
 * unprivileged user. Clients (psql, pg_dump, pg_restore, Synapse) connect over TCP with
 * a random password, so no other local account can use it.
 */
const PG_SUPERUSER = 'loadgate';

/** Bench settings. fsync is off: the cluster is disposable and disk-flush latency on a
 * shared VM is the noisiest thing on the machine; the seeds' two DB parameters are kept. */
const SERVER_SETTINGS: Record<string, string> = {
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
  shared_buffers: '256MB',
  work_mem: '32MB',
  random_page_cost: '1.1',
  max_connections: '100',
  log_min_duration_statement: '-1',
  log_checkpoints: 'off',
  autovacuum: 'on',
};

export interface PostgresOptions {
  supervisor: ProcessSupervisor;
  /** Parent for the cluster's files; created if missing. */
  dataRoot: string;
  logFile: string;
  port: number;
  cpus?: string;
}

export interface PostgresServer {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly binDir: string;
  readonly logFile: string;
  readonly process: ManagedProcess;
  /** Environment for libpq tools (PGHOST, PGPORT, PGUSER, PGPASSWORD). */
  clientEnv(): NodeJS.ProcessEnv;
  psql(sql: string, database?: string): Promise<string>;
  /** Drops (if present) and creates a database in the encoding/locale Synapse requires. */
  recreateDatabase(name: string): Promise<void>;
  dump(database: string, file: string): Promise<void>;
  restore(file: string, database: string): Promise<void>;
  version(): Promise<string>;
}

/** Finds the newest /usr/lib/postgresql/<ver>/bin with initdb, or LOADGATE_PG_BINDIR. */
async function findPostgresBinDir(): Promise<string> {
  const override = process.env.LOADGATE_PG_BINDIR;
  if (override) return override;
  const base = '/usr/lib/postgresql';
  let versions: string[] = [];
  try {
    versions = (await readdir(base)).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  } catch {
    /* not installed */
  }
  for (const v of versions) {
    const dir = join(base, v, 'bin');
    try {
      await access(join(dir, 'initdb'));
      return dir;
    } catch {
      /* next */
    }
  }
  throw new ComponentError(
    'postgres',
    `no PostgreSQL server found under ${base}/<version>/bin; run scripts/setup-local.sh (apt-get install postgresql) or set LOADGATE_PG_BINDIR`,
  );
}

export async function startPostgres(options: PostgresOptions): Promise<PostgresServer> {
  const binDir = await findPostgresBinDir();
  const runAs = await resolveRunAs();
  const root = options.dataRoot;
  const dataDir = join(root, 'data');
  const socketDir = join(root, 'socket');
  await mkdir(root, { recursive: true, mode: 0o700 });
  await rm(dataDir, { recursive: true, force: true });
  await mkdir(socketDir, { recursive: true, mode: 0o700 });
  await giveTo(runAs, root);
  await giveTo(runAs, socketDir);
  const password = await initCluster(binDir, runAs, root, dataDir);

  await assertPortFree('postgres', options.port);
  const settings = { ...SERVER_SETTINGS, listen_addresses: LOOPBACK, port: String(options.port), unix_socket_directories: socketDir };
  const [cmd, args] = asUser(runAs, join(binDir, 'postgres'), ['-D', dataDir, ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])]);
  const proc = await options.supervisor.spawn({
    name: 'postgres',
    command: cmd,
    args,
    logFile: options.logFile,
    cwd: root,
    cpus: options.cpus,
    stopSignal: 'SIGINT', // "fast" shutdown: disconnect clients, no waiting
    stopTimeoutMs: 15_000,
  });
  const server = serverHandle(options, binDir, password, proc);
  await waitUntilReady(async () => (await server.psql('select 1')) === '1', {
    component: 'postgres',
    process: proc,
    timeoutMs: 60_000,
    what: `accepting connections on ${LOOPBACK}:${options.port}`,
  });
  return server;
}

/** initdb into `dataDir` as the unprivileged user, with a fresh superuser password (returned). */
async function initCluster(binDir: string, runAs: RunAs | null, root: string, dataDir: string): Promise<string> {
  const password = randomBytes(18).toString('base64url');
  const pwFile = join(root, 'pwfile');
  await writeFile(pwFile, `${password}\n`, { mode: 0o600 });
  await giveTo(runAs, pwFile);
  const [initCmd, initArgs] = asUser(runAs, join(binDir, 'initdb'), [
    '-D',
    dataDir,
    '-U',
    PG_SUPERUSER,
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    `--pwfile=${pwFile}`,
    '-E',
    'UTF8',
    '--locale=C',
    '--no-instructions',
  ]);
  try {
    await runTool(initCmd, initArgs, { timeoutMs: 120_000, cwd: root });
  } catch (error) {
    throw new ComponentError('postgres', `initdb failed: ${(error as Error).message}`);
  } finally {
    await rm(pwFile, { force: true });
  }
  return password;
}

/** The running server as the bench uses it: psql, databases, dumps and restores over loopback TCP. */
function serverHandle(options: PostgresOptions, binDir: string, password: string, proc: ManagedProcess): PostgresServer {
  const clientEnv = (): NodeJS.ProcessEnv => ({
    ...process.env,
    PGHOST: LOOPBACK,
    PGPORT: String(options.port),
    PGUSER: PG_SUPERUSER,
    PGPASSWORD: password,
    PGCONNECT_TIMEOUT: '5',
  });
  const psql = async (sql: string, database = 'postgres'): Promise<string> => {
    const { stdout } = await runTool(join(binDir, 'psql'), ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', database, '-c', sql], {
      env: clientEnv(),
      timeoutMs: 60_000,
    });
    return stdout.trim();
  };
  const server: PostgresServer = {
    host: LOOPBACK,
    port: options.port,
    user: PG_SUPERUSER,
    password,
    binDir,
    logFile: options.logFile,
    process: proc,
    clientEnv,
    psql,
    async recreateDatabase(name) {
      assertIdentifier(name);
      await psql(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await psql(`CREATE DATABASE "${name}" ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`);
    },
    async dump(database, file) {
      assertIdentifier(database);
      await runTool(join(binDir, 'pg_dump'), ['-Fc', '--no-owner', '-d', database, '-f', file], { env: clientEnv(), timeoutMs: 600_000 });
    },
    async restore(file, database) {
      await server.recreateDatabase(database);
      await runTool(join(binDir, 'pg_restore'), ['--no-owner', '--exit-on-error', '-j', '2', '-d', database, file], {
        env: clientEnv(),
        timeoutMs: 600_000,
      });
      // Fresh statistics so both versions start with the same planner view of the data.
      await psql('ANALYZE', database);
    },
    async version() {
      const { stdout } = await runTool(join(binDir, 'postgres'), ['--version'], { timeoutMs: 10_000 });
      return stdout.trim().replace(/^postgres \(PostgreSQL\) /, 'PostgreSQL ');
    },
  };
  return server;
}

function assertIdentifier(name: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`invalid database name "${name}"`);
}
