import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { restoreDatasetScript } from '../../src/bench/aws/scripts.ts';
import { PG_BIN, startLocalPostgres } from './aws/local-postgres.ts';

/**
 * The dataset restore the gate runs on app node 0 before every run, against a real
 * PostgreSQL: the on-instance helper as user data installs it (app.sh.tftpl), then the
 * gate's clean-up of the restored dump.
 */

const APP_TEMPLATE = new URL('../../infra/aws/modules/bench/templates/app.sh.tftpl', import.meta.url);

/**
 * loadgate-dataset as app.sh.tftpl writes it, Terraform's `$$` escapes undone, reading
 * `dbEnv`, with its lock and duet marker under `dir`.
 */
function datasetHelper(dbEnv: string, dir: string): string {
  const template = readFileSync(APP_TEMPLATE, 'utf8');
  const body = /cat > \/usr\/local\/bin\/loadgate-dataset <<'DATASET'\n([^]*?)\nDATASET\n/.exec(template)?.[1];
  assert.ok(body, 'the loadgate-dataset helper in app.sh.tftpl');
  const relocated = body
    .replaceAll('$$', '$')
    .replace('/etc/loadgate/db.env', dbEnv)
    .replaceAll('/var/lib/loadgate/', `${dir}/`)
    .replaceAll('/etc/loadgate/duet', join(dir, 'duet'))
    .replaceAll('/var/log/loadgate-dump.log', join(dir, 'dump.log'));
  assert.ok(!/\/etc\/loadgate|\/var\/lib\/loadgate|\/var\/log/.test(relocated), 'every path of the helper is relocated');
  return `${relocated}\n`;
}

// Mattermost's tables, as its Postgres migrations create them (unquoted, so lower case).
const MATTERMOST_TABLES = `
create table systems (name varchar(64) primary key, value varchar(1024));
create table licenses (id varchar(26) primary key, createat bigint, bytes varchar(10000));
insert into systems values ('ActiveLicenseId', 'expiredlicence000000000000'), ('Version', '6.1.0');
insert into licenses values ('expiredlicence000000000000', 1600000000000, 'expired licence bytes');
`;

test(
  "a restore leaves no licence of the dump and sets default_text_search_config, as load-test-ng's deployer does",
  { skip: !PG_BIN && 'PostgreSQL server binaries are not installed', timeout: 120_000 },
  async () => {
    const pg = await startLocalPostgres();
    const dir = mkdtempSync(join(tmpdir(), 'loadgate-restore-'));
    try {
      const bin = join(dir, 'bin');
      mkdirSync(bin);
      const dbEnv = join(dir, 'db.env');
      const restore = (): string =>
        execFileSync('bash', ['-c', restoreDatasetScript()], {
          env: { PATH: `${bin}:${process.env.PATH}`, LOADGATE_HOME: dir, LOADGATE_DB_ENV: dbEnv },
          encoding: 'utf8',
        });

      for (const [name, tables] of [
        ['mattermost', MATTERMOST_TABLES],
        ['emptydb', ''],
      ] as const) {
        writeFileSync(dbEnv, `PSQL_URL='${pg.url(name)}'\nPSQL_ADMIN_URL='${pg.url('postgres')}'\nDB_NAME='${name}'\n`);
        writeFileSync(join(bin, 'loadgate-dataset'), datasetHelper(dbEnv, dir));
        chmodSync(join(bin, 'loadgate-dataset'), 0o755);
        // What user data leaves: the loaded dump and its pristine copy.
        pg.psql('postgres', `create database ${name}_pristine`);
        if (tables) pg.psql(`${name}_pristine`, tables);

        for (let run = 0; run < 2; run++) {
          const said = restore();
          assert.equal(pg.psql(name, 'show default_text_search_config').trim(), 'pg_catalog.english', `${name}, restore ${run + 1}`);
          if (!tables) continue;
          assert.equal(pg.psql(name, 'select name from systems order by name').trim(), 'Version', 'only the active licence id is removed');
          assert.equal(pg.psql(name, 'select count(*) from licenses').trim(), '0');
          // Mattermost writes its own licence row on start; the next restore starts over.
          assert.match(said, /licences of the restored dump cleared/);
          pg.psql(name, "insert into systems values ('ActiveLicenseId', 'benchlicence00000000000000')");
        }
        // The pristine copy is the dump as loaded.
        if (tables) assert.equal(pg.psql(`${name}_pristine`, 'select count(*) from licenses').trim(), '1');
      }
    } finally {
      pg.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'on a duet bench both slots restore at once from the one pristine copy, each into its own database',
  { skip: !PG_BIN && 'PostgreSQL server binaries are not installed', timeout: 120_000 },
  async () => {
    const pg = await startLocalPostgres();
    const dir = mkdtempSync(join(tmpdir(), 'loadgate-restore-duet-'));
    try {
      const bin = join(dir, 'bin');
      mkdirSync(bin);
      const dbEnv = join(dir, 'db.env');
      writeFileSync(
        dbEnv,
        `PSQL_URL='${pg.url('mattermost')}'\nPSQL_URL_B='${pg.url('mattermost_b')}'\nPSQL_ADMIN_URL='${pg.url('postgres')}'\nDB_NAME='mattermost'\n`,
      );
      writeFileSync(join(bin, 'loadgate-dataset'), datasetHelper(dbEnv, dir));
      chmodSync(join(bin, 'loadgate-dataset'), 0o755);
      pg.psql('postgres', 'create database mattermost_pristine');
      pg.psql('mattermost_pristine', MATTERMOST_TABLES);
      const env = { PATH: `${bin}:${process.env.PATH}`, LOADGATE_HOME: dir, LOADGATE_DB_ENV: dbEnv };
      const restore = (slot: 'a' | 'b') =>
        new Promise<{ code: number | null; out: string }>((resolve) => {
          const child = spawn('bash', ['-c', restoreDatasetScript(slot)], { env });
          let out = '';
          child.stdout.on('data', (d: Buffer) => (out += d.toString()));
          child.stderr.on('data', (d: Buffer) => (out += d.toString()));
          child.on('close', (code) => resolve({ code, out }));
        });

      // A bench built without duet has no slot b.
      const refused = await restore('b');
      assert.equal(refused.code, 2, refused.out);
      assert.match(refused.out, /built without duet/);

      writeFileSync(join(dir, 'duet'), 'true\n');
      for (let round = 0; round < 3; round++) {
        // As the gate sends them: both slots' restores at the same moment.
        const [a, b] = await Promise.all([restore('a'), restore('b')]);
        assert.equal(a.code, 0, a.out);
        assert.equal(b.code, 0, b.out);
        for (const db of ['mattermost', 'mattermost_b']) {
          assert.equal(pg.psql(db, 'select count(*) from licenses').trim(), '0', `${db}: the post-restore SQL ran on it`);
          assert.equal(pg.psql(db, 'show default_text_search_config').trim(), 'pg_catalog.english', db);
          assert.equal(pg.psql(db, 'select name from systems order by name').trim(), 'Version', db);
        }
        // Each slot's database is its own: a write to one is not in the other.
        pg.psql('mattermost', "insert into systems values ('OnlySlotA', 'x')");
        assert.equal(pg.psql('mattermost_b', "select count(*) from systems where name = 'OnlySlotA'").trim(), '0');
      }
      assert.equal(pg.psql('mattermost_pristine', 'select count(*) from licenses').trim(), '1', 'the pristine copy is untouched');
    } finally {
      pg.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

/**
 * A dump as the seed datasets are: Mattermost's tables with data, the licence the source
 * server had (long expired), and statements a newer pg_dump writes that this server refuses
 * (an owner role the bench lacks, a setting PostgreSQL 15 does not know).
 */
const SEED_DUMP = `SET transaction_timeout = 0;
${MATTERMOST_TABLES}
create table users (id varchar(26) primary key, username varchar(64));
create table posts (id varchar(26) primary key, userid varchar(26), message text);
ALTER TABLE public.users OWNER TO mmuser;
insert into users select 'user' || i, 'user' || i from generate_series(1, 30) i;
insert into posts select 'post' || i, 'user' || (i % 30 + 1), 'hello' from generate_series(1, 200) i;
`;

test(
  "user data prepares the dataset as load-test-ng does: harmless dump errors counted, not fatal, and the dump's licence cleared before the pristine copy",
  { skip: !PG_BIN && 'PostgreSQL server binaries are not installed', timeout: 120_000 },
  async () => {
    const pg = await startLocalPostgres();
    const dir = mkdtempSync(join(tmpdir(), 'loadgate-prepare-'));
    try {
      const dbEnv = join(dir, 'db.env');
      const helper = join(dir, 'loadgate-dataset');
      writeFileSync(dbEnv, `PSQL_URL='${pg.url('ltdb')}'\nPSQL_ADMIN_URL='${pg.url('postgres')}'\nDB_NAME='ltdb'\n`);
      writeFileSync(helper, datasetHelper(dbEnv, dir));
      chmodSync(helper, 0o755);
      writeFileSync(join(dir, 'duet'), 'true\n');
      const dump = join(dir, 'dump.sql');
      writeFileSync(dump, SEED_DUMP);
      execFileSync('gzip', ['-k', dump]);
      const prepare = (url: string, env: Record<string, string> = {}) =>
        spawnSync('bash', [helper, 'prepare', url], { env: { ...process.env, ...env }, encoding: 'utf8' });
      pg.psql('postgres', 'create database ltdb');

      const done = prepare(`file://${dump}.gz`);
      assert.equal(done.status, 0, done.stderr);
      // The load went on past the errors; they are counted where the readiness check reads them.
      assert.equal(pg.psql('ltdb_pristine', 'select count(*) from posts').trim(), '200');
      const report = readFileSync(join(dir, 'dataset-load.txt'), 'utf8');
      assert.match(report, /^dump-load-errors: 2$/m, report);
      assert.match(report, /^dump-load-error: .*transaction_timeout/m);
      assert.match(report, /^dump-load-error: .*role "mmuser" does not exist/m);
      // The loaded data became the pristine copy by name: no second copy, and no slot's
      // database yet (each slot's first restore makes it). It keeps no licence of the dump:
      // Mattermost would prefer it to the bench's file and, expired, remove it at start
      // (platform/license.go, app/server.go).
      const databases = pg.psql('postgres', "select string_agg(datname, ',' order by datname) from pg_database where datname like 'ltdb%'").trim();
      assert.equal(databases, 'ltdb_pristine');
      assert.equal(pg.psql('ltdb_pristine', 'select count(*) from licenses').trim(), '0');
      assert.equal(pg.psql('ltdb_pristine', 'select name from systems order by name').trim(), 'Version');
      assert.equal(pg.psql('ltdb_pristine', 'select count(*) from users').trim(), '30');
      assert.equal(pg.psql('postgres', 'select count(*) from loadgate_dataset_ready').trim(), '1', 'the marker the other nodes wait for');
      // Each slot's restore makes its database from it.
      for (const slot of ['a', 'b']) {
        const restore = spawnSync('bash', [helper, '--slot', slot, 'restore'], { encoding: 'utf8' });
        assert.equal(restore.status, 0, restore.stderr);
      }
      for (const db of ['ltdb', 'ltdb_b']) assert.equal(pg.psql(db, 'select count(*) from users').trim(), '30', db);

      // Too many errors: loud, early, and the other nodes stop waiting.
      pg.psql('postgres', 'drop table loadgate_dataset_ready');
      pg.psql('postgres', 'drop database ltdb');
      pg.psql('postgres', 'drop database ltdb_b');
      pg.psql('postgres', 'drop database ltdb_pristine');
      pg.psql('postgres', 'create database ltdb');
      const refused = prepare(`file://${dump}`, { LOADGATE_DUMP_MAX_ERRORS: '1' });
      assert.equal(refused.status, 1);
      assert.match(refused.stderr, /2 errors while loading the dump \(more than LOADGATE_DUMP_MAX_ERRORS=1\); the first:\n.*ERROR:/);
      assert.equal(pg.psql('postgres', 'select count(*) from loadgate_dataset_failed').trim(), '1');
      assert.equal(pg.psql('postgres', "select to_regclass('loadgate_dataset_ready') is null").trim(), 't');

      // A dump that is not Mattermost's (or whose tables all failed) is refused, not marked ready.
      const other = join(dir, 'other.sql');
      writeFileSync(other, 'create table something (x int);\n');
      pg.psql('postgres', 'drop database ltdb');
      pg.psql('postgres', 'create database ltdb');
      const empty = prepare(`file://${other}`);
      assert.equal(empty.status, 1);
      assert.match(empty.stderr, /the dump left no Mattermost users and posts tables in ltdb/);
      // A download that fails is a failure, not an empty load.
      const missing = prepare(`file://${dir}/nowhere.sql.gz`);
      assert.equal(missing.status, 1, missing.stderr);
    } finally {
      pg.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
