import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { main } from '../../src/cli/main.ts';
import { captureIO } from '../../src/cli/io.ts';
import { loadGateConfig } from '../../src/config/load.ts';
import { MATTERMOST_HEALTH_QUERIES } from '../../src/target/mattermost/defaults.ts';
import { jsonSchemaFor } from '../../src/cli/json-schemas.ts';
import { withTempDir } from '../support/runs.ts';

test('the shipped examples are valid', async () => {
  const io = captureIO();
  assert.equal(await main(['validate', 'examples/local-synapse.yml', 'examples/local-synapse-duet.yml', 'examples/aws-mattermost.yml', 'examples/aws-mattermost-sequential.yml'], io), 0, io.stderr.join('\n'));
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

test('the AWS duet profile is the sequential one per side: half the bounded users, the seeds\' queries but CPU and memory per side', async () => {
  const duet = await loadGateConfig('examples/aws-mattermost.yml');
  const sequential = await loadGateConfig('examples/aws-mattermost-sequential.yml');
  assert.equal(duet.mode, 'duet');
  assert.equal(sequential.mode, 'sequential');
  const users = (c: typeof duet) => c.tests.map((t) => (t.type === 'bounded' ? t.users : t.maxUsers));
  assert.deepEqual(users(duet), [3750, 12000]);
  assert.deepEqual(users(sequential), [7500, 20000]);
  const health = (c: typeof duet) => c.tests.flatMap((t) => (t.type === 'unbounded' ? t.health.map((h) => h.name) : []));
  const perSide = health(duet).filter((n) => !health(sequential).includes(n));
  assert.deepEqual(perSide, ["CPU utilization - this side's Mattermost, of half the app nodes (%)", "Memory utilization - this side's Mattermost, of half the app nodes (%)"]);
  assert.equal(health(duet).length, 9);
});

test('a duet on AWS refuses health queries on the app nodes\' shared CPU or memory and an odd agent count, naming the field', async () => {
  await withTempDir(async (dir) => {
    const text = await readFile('examples/aws-mattermost.yml', 'utf8');
    const file = join(dir, 'gate.yml');
    const shared = MATTERMOST_HEALTH_QUERIES.find((q) => q.name.startsWith('CPU utilization'))!.query;
    await writeFile(file, text.replace(/(CPU utilization - this side's Mattermost, of half the app nodes \(%\)\n\s+query: ).*/, `$1${shared}`).replace('    preset: perfcomp\n', '    preset: perfcomp\n    agentCount: 11\n').replace('../noise/', `${join(process.cwd(), 'noise')}/`));
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
    assert.ok(lines.some((l) => l.endsWith('tests[1].health[3].threshold: expected number, received string')), lines.join('\n'));
    assert.ok(lines.some((l) => l.includes('target.colour: unknown key')));
    assert.ok(lines.some((l) => l.includes('tests[2].rampUp: expected a duration')));
    assert.equal(lines.length, 3);
  });
});

test('semantic problems: duplicate test names and a ramp-up longer than the test', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'gate.yml');
    await writeFile(file, 'version: 1\nname: demo\ntarget: { system: synapse }\nbench: { kind: local }\ntests:\n  - { type: bounded, users: 1, rampUp: 5m, duration: 2m }\n  - { type: bounded, users: 1, rampUp: 1m, duration: 2m }\n');
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
