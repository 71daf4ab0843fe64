import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { main } from '../../src/cli/main.ts';
import { captureIO } from '../../src/cli/io.ts';
import { loadGateConfig } from '../../src/config/load.ts';
import { MATTERMOST_HEALTH_QUERIES } from '../../src/chat-servers/mattermost/defaults.ts';
import { jsonSchemaFor } from '../../src/cli/json-schemas.ts';
import { runCli } from '../support/cli.ts';
import { withTempDir } from '../support/runs.ts';

/** A load-test-ng users file of `n` accounts, as the dataset's users file lists them. */
async function writeUsers(dir: string, n: number): Promise<string> {
  const file = join(dir, 'users.txt');
  await writeFile(file, Array.from({ length: n }, (_, i) => `user${i}@example.com pw-${i}`).join('\n') + '\n');
  return file;
}

/** No users file, Grafana or token from the shell that runs the tests. */
const CLEAN_ENV = { LOADGATE_USERS_FILE: undefined, LOADGATE_SNAPSHOT_GRAFANA: undefined, LOADGATE_GRAFANA_TOKEN: undefined };

test('the shipped examples are valid', async () => {
  await withTempDir(async (dir) => {
    const users = await writeUsers(dir, 24_000);
    const r = await runCli(
      [
        'validate',
        '--users-file',
        users,
        'examples/local-synapse.yml',
        'examples/local-synapse-duet.yml',
        'examples/aws-mattermost.yml',
        'examples/aws-mattermost-sequential.yml',
      ],
      CLEAN_ENV,
    );
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /examples\/aws-mattermost\.yml: ok \(.*\); users file users\.txt \(24000 users\)/);
  });
});

test('the sequential AWS profile reproduces the seeds: nine health queries, +8/-8 every 2 s, 7500 users for 90 min, 20000 max', async () => {
  const config = await loadGateConfig('examples/aws-mattermost-sequential.yml');
  const bounded = config.tests.find((t) => t.type === 'bounded')!;
  const unbounded = config.tests.find((t) => t.type === 'unbounded')!;
  assert.equal(bounded.type === 'bounded' && bounded.users, 7500);
  assert.equal(bounded.type === 'bounded' && bounded.duration, 5400);
  assert.ok(unbounded.type === 'unbounded');
  assert.equal(unbounded.maxUsers, 20000);
  assert.equal(unbounded.usersIncrement, 8);
  assert.equal(unbounded.usersDecrement, 8);
  assert.equal(unbounded.restTime, 2);
  assert.equal(unbounded.stabilityWindow, 1800);
  assert.deepEqual(
    unbounded.health.map((h) => [h.name, h.query, h.threshold]),
    MATTERMOST_HEALTH_QUERIES.map((h) => [h.name, h.query, h.threshold]),
  );
  assert.equal(config.engine.idle.rateMultiplier, 5.4);
});

test("the AWS duet profile is the sequential one per side: half the bounded users, the seeds' queries but CPU and memory per side", async () => {
  const duet = await loadGateConfig('examples/aws-mattermost.yml');
  const sequential = await loadGateConfig('examples/aws-mattermost-sequential.yml');
  assert.equal(duet.mode, 'duet');
  assert.equal(sequential.mode, 'sequential');
  const users = (c: typeof duet) => c.tests.map((t) => (t.type === 'bounded' ? t.users : t.maxUsers));
  assert.deepEqual(users(duet), [3750, 12000]);
  assert.deepEqual(users(sequential), [7500, 20000]);
  const health = (c: typeof duet) => c.tests.flatMap((t) => (t.type === 'unbounded' ? t.health.map((h) => h.name) : []));
  const perSide = health(duet).filter((n) => !health(sequential).includes(n));
  assert.deepEqual(perSide, [
    "CPU utilization - this side's Mattermost, of half the app nodes (%)",
    "Memory utilization - this side's Mattermost, of half the app nodes (%)",
  ]);
  assert.equal(health(duet).length, 9);
});

test("a duet on AWS refuses health queries on the app nodes' shared CPU or memory and an odd agent count, naming the field", async () => {
  await withTempDir(async (dir) => {
    const text = await readFile('examples/aws-mattermost.yml', 'utf8');
    const file = join(dir, 'gate.yml');
    const shared = MATTERMOST_HEALTH_QUERIES.find((q) => q.name.startsWith('CPU utilization'))!.query;
    await writeFile(
      file,
      text
        .replace(/(CPU utilization - this side's Mattermost, of half the app nodes \(%\)\n\s+query: ).*/, `$1${shared}`)
        .replace('    preset: perfcomp\n', '    preset: perfcomp\n    agentCount: 11\n')
        .replace('../noise/', `${join(process.cwd(), 'noise')}/`),
    );
    const io = captureIO();
    assert.equal(await main(['validate', file], io), 3);
    const err = io.stderr.join('\n');
    assert.match(err, /tests\[1\]\.health\[5\]\.query: .*reads the app nodes' own CPU or memory, which both sides of a duet share/);
    assert.match(err, /bench\.aws\.agentCount: a duet splits the agents into two equal groups, one per side; 11 is odd: use 12/);
  });
});

test('validate prints one line per problem with its path, and exits 3', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'gate.yml');
    await writeFile(
      file,
      [
        'version: 1',
        'name: demo',
        'target: { system: synapse, colour: red }',
        'bench: { kind: local }',
        'tests:',
        '  - { type: bounded, users: 10, rampUp: 30s, duration: 2m }',
        '  - type: unbounded',
        '    maxUsers: 100',
        '    stabilityWindow: 1m',
        '    maxDuration: 5m',
        '    health:',
        '      - { name: a, query: up, threshold: 1 }',
        '      - { name: b, query: up, threshold: 1 }',
        '      - { name: c, query: up, threshold: 1 }',
        '      - { name: d, query: up, threshold: high }',
        '  - { type: bounded, users: 10, rampUp: soon, duration: 2m }',
      ].join('\n'),
    );
    const io = captureIO();
    assert.equal(await main(['validate', file], io), 3);
    const lines = io.stderr;
    assert.ok(
      lines.some((l) => l.endsWith('tests[1].health[3].threshold: expected number, received string')),
      lines.join('\n'),
    );
    assert.ok(lines.some((l) => l.includes('target.colour: unknown key')));
    assert.ok(lines.some((l) => l.includes('tests[2].rampUp: expected a duration')));
    assert.equal(lines.length, 3);
  });
});

test('semantic problems: duplicate test names and a ramp-up longer than the test', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'gate.yml');
    await writeFile(
      file,
      'version: 1\nname: demo\ntarget: { system: synapse }\nbench: { kind: local }\ntests:\n  - { type: bounded, users: 1, rampUp: 5m, duration: 2m }\n  - { type: bounded, users: 1, rampUp: 1m, duration: 2m }\n',
    );
    const io = captureIO();
    assert.equal(await main(['validate', file], io), 3);
    assert.ok(io.stderr.some((l) => l.includes('tests[1].name: "bounded" is already used by tests[0]')));
    assert.ok(io.stderr.some((l) => l.includes('tests[0].rampUp: must be shorter than duration')));
  });
});

test('the committed JSON Schemas are generated from the zod schemas and up to date', async () => {
  const io = captureIO();
  assert.equal(await main(['schema', '--check', 'schema'], io), 0, io.stderr.join('\n'));
  const schema = jsonSchemaFor('gate-config.schema.json');
  assert.equal(schema.additionalProperties, false);
  assert.ok((schema.required as string[]).includes('tests'));
});

test('a binary file is named in one short line, never dumped to the terminal; a text file that is not YAML shows at most 10 errors', async () => {
  await withTempDir(async (dir) => {
    // 66 KB of bytes with a fixed seed: what any image or archive looks like to a YAML parser.
    let x = 12345;
    const noise = Buffer.alloc(66_000, 0).map(() => ((x = (x * 1103515245 + 12345) & 0x7fffffff), x >> 16) & 0xff);
    const withoutNul = Buffer.from(noise.map((b) => b || 0xff));
    const garbage = Array.from({ length: 400 }, (_, i) => `k${i}: [unclosed ${i}\n  - : :`).join('\n');
    const cases: [string, Uint8Array, RegExp][] = [
      ['image.png', noise, /^\S+image\.png: not a text file \(a gate config is YAML text\): it holds a NUL byte at offset \d+$/],
      ['latin1.yml', withoutNul, /^\S+latin1\.yml: not a text file \(a gate config is YAML text\): it holds bytes that are not UTF-8$/],
    ];
    for (const [name, data, pattern] of cases) {
      const file = join(dir, name);
      await writeFile(file, data);
      const io = captureIO();
      assert.equal(await main(['validate', file], io), 3);
      assert.equal(io.stderr.length, 1, io.stderr.join('\n').slice(0, 500));
      assert.match(io.stderr[0]!, pattern);
      assert.ok(io.stderr[0]!.length < 300);
    }
    const file = join(dir, 'garbage.yml');
    await writeFile(file, garbage);
    const io = captureIO();
    assert.equal(await main(['validate', file], io), 3);
    assert.equal(io.stderr.length, 11);
    assert.match(io.stderr.at(-1)!, /garbage\.yml: and \d+ more YAML errors$/);
  });
});

/** examples/aws-mattermost-sequential.yml with `edit` applied, in `dir`. */
async function awsConfig(dir: string, edit: (text: string) => string = (t) => t): Promise<string> {
  const file = join(dir, 'gate.yml');
  await writeFile(file, edit(await readFile('examples/aws-mattermost-sequential.yml', 'utf8')));
  return file;
}

test('a PromQL syntax error in a health query or an early stop is refused, naming the field, the column and the fix', async () => {
  await withTempDir(async (dir) => {
    const users = await writeUsers(dir, 24_000);
    const file = await awsConfig(dir, (t) =>
      t
        .replace(
          'query: histogram_quantile(0.99, sum(rate(loadtest_http_request_time_bucket[1m])) by (le))',
          'query: histogram_quantile(0.99, sum(rate(loadtest_http_request_time_bucket[1m]) by (le))',
        )
        .replace('      query: sum(rate(loadtest_http_request_time_sum[1m]))/', '      query: sum(ratee(loadtest_http_request_time_sum[1m]))/')
        .replace('        query: sum(rate(loadtest_http_request_time_sum[1m]))/', '        query: sum(rate(loadtest_http_request_time_sum))/'),
    );
    const r = await runCli(['validate', '--users-file', users, file], CLEAN_ENV);
    assert.equal(r.code, 3, r.out);
    assert.match(
      r.err,
      /tests\[0\]\.earlyStop\.query: not valid PromQL at column 5: "ratee" is not a PromQL function: check its spelling against https:\/\/prometheus\.io\/docs\/prometheus\/latest\/querying\/functions\//,
    );
    assert.match(r.err, /tests\[1\]\.health\[2\]\.query: not valid PromQL at column 19: the "\(" opened at column 19 is never closed: add "\)"/);
    assert.match(r.err, /tests\[1\]\.health\[1\]\.query: not valid PromQL at column 10: rate\(\) takes a range vector, not "loadtest_http_request_time_sum"/);
    assert.equal(r.err.split('\n').length, 3, r.err);
  });
});

test("the local bench's $TARGET_CPU_COUNT is PromQL there, and refused on the AWS bench, which does not fill it in", async () => {
  await withTempDir(async (dir) => {
    const users = await writeUsers(dir, 24_000);
    const file = await awsConfig(dir, (t) =>
      t.replace(
        'query: 100 - 100 * (avg(irate(node_cpu_seconds_total{instance=~"app.*",mode="idle"}[5m])))',
        'query: 100 * sum(rate(mattermost_process_cpu_seconds_total[1m])) / $TARGET_CPU_COUNT',
      ),
    );
    const r = await runCli(['validate', '--users-file', users, file], CLEAN_ENV);
    assert.equal(r.code, 3, r.out);
    assert.match(r.err, /tests\[1\]\.health\[5\]\.query: not valid PromQL at column 61: \$TARGET_CPU_COUNT is a placeholder only the local bench fills in/);
    const local = await runCli(['validate', 'examples/local-synapse.yml'], CLEAN_ENV);
    assert.equal(local.code, 0, local.err);
    assert.match(await readFile('examples/local-synapse.yml', 'utf8'), /\/ \$TARGET_CPU_COUNT$/m);
  });
});

test('the AWS bench without a users file is refused, naming the flag and the variable and where to set it', async () => {
  await withTempDir(async (dir) => {
    const file = await awsConfig(dir);
    const none = await runCli(['validate', file], CLEAN_ENV);
    assert.equal(none.code, 3, none.out);
    assert.match(
      none.err,
      /--users-file \/ LOADGATE_USERS_FILE: no users file named, but a run on the AWS bench logs its simulated users in as the dataset's users \(https:\/\/lt-public-data\.s3\.amazonaws\.com\/12M_610_fixed_psql\.sql\.gz\)/,
    );
    assert.match(none.err, /the bench environment's variable LOADGATE_USERS_FILE/);
    const missing = await runCli(['validate', file], { ...CLEAN_ENV, LOADGATE_USERS_FILE: join(dir, 'nowhere.txt') });
    assert.equal(missing.code, 3);
    assert.match(missing.err, /--users-file \/ LOADGATE_USERS_FILE: cannot read \S+nowhere\.txt: ENOENT/);
    const users = await writeUsers(dir, 24_000);
    const fromEnv = await runCli(['validate', file], { ...CLEAN_ENV, LOADGATE_USERS_FILE: users });
    assert.equal(fromEnv.code, 0, fromEnv.err);
  });
});

test("a users file that load-test-ng cannot read, or too short for a test's users per agent, is refused", async () => {
  await withTempDir(async (dir) => {
    const file = await awsConfig(dir);
    const bad = join(dir, 'bad.txt');
    await writeFile(bad, 'user0@example.com pw0\nuser1 pw1\n');
    const format = await runCli(['validate', '--users-file', bad, file], CLEAN_ENV);
    assert.equal(format.code, 3);
    assert.match(format.err, /--users-file \/ LOADGATE_USERS_FILE: bad\.txt is not a load-test-ng users file .*line 2: "user1" is not an email address/);
    // The sequential example runs up to 20000 users on the preset's 11 agents: 1819 accounts each, 20009 in all.
    const short = await runCli(['validate', '--users-file', await writeUsers(dir, 20_008), file], CLEAN_ENV);
    assert.equal(short.code, 3);
    assert.match(
      short.err,
      /users\.txt holds 20008 users, split over 11 agent\(s\) that leaves 1818 for some agent, but test "unbounded" runs up to 1819 per agent/,
    );
    assert.doesNotMatch(short.err, /test "bounded"/);
    const enough = await runCli(['validate', '--users-file', await writeUsers(dir, 20_009), file], CLEAN_ENV);
    assert.equal(enough.code, 0, enough.err);
  });
});

test('a Grafana named to keep the snapshots without its token is refused, naming the secret and where to set it', async () => {
  await withTempDir(async (dir) => {
    const file = await awsConfig(dir);
    const users = await writeUsers(dir, 24_000);
    const grafana = { ...CLEAN_ENV, LOADGATE_USERS_FILE: users, LOADGATE_SNAPSHOT_GRAFANA: 'https://grafana.example.com' };
    const r = await runCli(['validate', file], grafana);
    assert.equal(r.code, 3, r.out);
    assert.match(
      r.err,
      /LOADGATE_GRAFANA_TOKEN: empty, but LOADGATE_SNAPSHOT_GRAFANA names https:\/\/grafana\.example\.com .* the repository \(or organisation\) secret LOADGATE_GRAFANA_TOKEN, passed by the caller as grafana-token, beside the variable LOADGATE_GRAFANA_URL/,
    );
    const withToken = await runCli(['validate', file], { ...grafana, LOADGATE_GRAFANA_TOKEN: 'glsa_test' });
    assert.equal(withToken.code, 0, withToken.err);
    assert.match(withToken.out, /snapshots kept on https:\/\/grafana\.example\.com/);
    // The local bench keeps no snapshot elsewhere and takes no users file.
    const local = await runCli(['validate', 'examples/local-synapse.yml'], { ...CLEAN_ENV, LOADGATE_SNAPSHOT_GRAFANA: 'https://grafana.example.com' });
    assert.equal(local.code, 0, local.err);
  });
});

test("what the run refuses only as it starts a test is refused by validate: load-test-ng's rules, the target's settings, a bench that cannot run the target or the engine", async () => {
  await withTempDir(async (dir) => {
    const users = await writeUsers(dir, 24_000);
    const engine = await awsConfig(dir, (t) =>
      t
        .replace('  version: v1.32.0\n', '  version: v1.12.0\n')
        .replace('averageMs: 20000', 'averageMs: 1000')
        .replace('    restTime: 2s\n', '    restTime: 0\n')
        .replace('  releaseWait: 30m\n', '  releaseWait: 30m\n  settings: { EnableLinkPreviews: false }\n'),
    );
    const r = await runCli(['validate', '--users-file', users, engine], CLEAN_ENV);
    assert.equal(r.code, 3, r.out);
    assert.match(r.err, /engine\.version: "v1\.12\.0" is not a load-test-ng release loadgate supports/);
    assert.match(r.err, /engine\.idle\.averageMs: must be greater than engine\.idle\.minimumMs \(load-test-ng rule\)/);
    assert.match(r.err, /tests: "unbounded" restTime must be at least 1s/);
    assert.match(r.err, /gate\.yml: target\.settings\.EnableLinkPreviews: expected an object of settings, such as \{ EnableLinkPreviews: false \}/);
    const file = join(dir, 'local.yml');
    const local = await readFile('examples/local-synapse.yml', 'utf8');
    await writeFile(
      file,
      local
        .replace('  kind: k6\n', '  kind: load-test-ng\n')
        .replace(/^  version: v1\.4\.2\n/m, '')
        .replace(/^noiseModel: .*\n/m, ''),
    );
    const ltLocal = await runCli(['validate', file], CLEAN_ENV);
    assert.equal(ltLocal.code, 3, ltLocal.out);
    assert.match(ltLocal.err, /engine\.kind: "load-test-ng" cannot run on the local bench, which drives its server with k6 \(engine\.kind: k6\)/);
    await writeFile(file, local.replace('bench:\n  kind: local', 'bench:\n  kind: aws').replace(/^noiseModel: .*\n/m, ''));
    const synapseAws = await runCli(['validate', '--users-file', users, file], CLEAN_ENV);
    assert.equal(synapseAws.code, 3, synapseAws.out);
    assert.match(synapseAws.err, /bench\.kind: target\.system "synapse" runs on the local bench \(bench\.kind: local\); the aws bench runs mattermost/);
  });
});
