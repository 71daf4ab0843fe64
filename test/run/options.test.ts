import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCacheDir, parseRunOptions, schedule } from '../../src/run/options.ts';
import { settleSeconds } from '../../src/bench/run-sequence.ts';
import { localTiming } from '../../src/bench/local/test-run.ts';
import { synapseLocal } from '../../src/chat-servers/synapse/local.ts';

const LOCAL_TIMING = localTiming(synapseLocal);
import { InputError } from '../../src/util/errors.ts';

const EXAMPLE = 'examples/local-synapse.yml';
const base = ['--config', EXAMPLE, '--baseline', '1.162.0', '--candidate', '1.163.2', '--out', 'reports/x'];

test('the README command parses: versions, overrides, dataset version, cache dir', async () => {
  const o = await parseRunOptions([...base, '--candidate-set', 'caches.global_factor=0.05', '--repeats', '2'], '/work/main');
  assert.equal(o.baseline.version, '1.162.0');
  assert.equal(o.candidate.version, '1.163.2');
  assert.equal(o.datasetVersion, '1.162.0', 'the older version builds the dataset');
  assert.equal(o.repeats, 2);
  assert.equal(o.outDir, '/work/main/reports/x');
  assert.equal(o.cacheDir, defaultCacheDir());
  assert.deepEqual(
    o.candidate.sideOverrides.map((x) => x.text),
    ['caches.global_factor=0.05'],
  );
  // target.settings (bcrypt_rounds: 4) applies to both sides, before the side's own flags.
  assert.deepEqual(
    o.baseline.overrides.map((x) => x.text),
    ['bcrypt_rounds=4'],
  );
  assert.deepEqual(
    o.candidate.overrides.map((x) => x.text),
    ['bcrypt_rounds=4', 'caches.global_factor=0.05'],
  );
  const reversed = await parseRunOptions(['--config', EXAMPLE, '--baseline', '1.163.2', '--candidate', '1.162.0', '--out', 'x']);
  assert.equal(reversed.datasetVersion, '1.162.0');
});

test('every bad input is rejected before anything runs, naming the flag', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['--config', EXAMPLE, '--candidate', '1.163.2', '--out', 'x'], /--baseline: required/],
    [[...base, '--repeats', '0'], /--repeats: expected 1 to 20/],
    [[...base, '--repeats', 'two'], /--repeats: expected a whole number/],
    [[...base, '--tests', 'bounded,soak'], /--tests: no test named "soak"/],
    [[...base, '--candidate-set', 'listeners=1'], /--candidate-set listeners: "listeners" cannot be overridden/],
    [[...base, '--baseline-set', 'nokey'], /--baseline-set "nokey": expected key=value/],
    [[...base, '--bogus'], /Unknown option '--bogus'/],
    [[...base, 'stray'], /unexpected argument/],
    [['--config', EXAMPLE, '--baseline', '1.162', '--candidate', '1.163.2', '--out', 'x'], /--baseline: "1.162" does not match target.versionPattern/],
    [['--config', 'nope.yml', '--baseline', '1.162.0', '--candidate', '1.163.2', '--out', 'x'], /cannot read gate config nope.yml/],
  ];
  for (const [argv, message] of cases) {
    await assert.rejects(parseRunOptions(argv), (e: unknown) => e instanceof InputError && message.test((e as Error).message), argv.join(' '));
  }
});

test('an AWS or Mattermost config is refused by the local runner', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lg-opt-'));
  try {
    const file = join(dir, 'aws.yml');
    await writeFile(
      file,
      'version: 1\nname: x\ntarget: { system: synapse }\nbench: { kind: aws }\ntests: [{ type: bounded, users: 1, rampUp: 1s, duration: 2s }]\n',
    );
    await assert.rejects(
      parseRunOptions(['--config', file, '--baseline', '1.0.0', '--candidate', '1.0.1', '--out', 'x']),
      /bench\.kind: target\.system "synapse" runs on the local bench \(bench\.kind: local\); the aws bench runs mattermost/,
    );
  } finally {
    await rm(dir, { recursive: true });
  }
});

test('runs are interleaved baseline, candidate per test and repeat', async () => {
  const o = await parseRunOptions([...base, '--repeats', '2']);
  const order = schedule(o).map((r) => `${r.repeat}:${r.test.name}:${r.side.role}`);
  assert.deepEqual(order, [
    '0:bounded:baseline',
    '0:bounded:candidate',
    '0:unbounded:baseline',
    '0:unbounded:candidate',
    '1:bounded:candidate',
    '1:bounded:baseline',
    '1:unbounded:candidate',
    '1:unbounded:baseline',
  ]);
  // The local profile's repeats (2) when --repeats is not given.
  const only = await parseRunOptions([...base, '--tests', 'unbounded']);
  assert.deepEqual(
    schedule(only).map((r) => `${r.repeat}:${r.side.role}`),
    ['0:baseline', '0:candidate', '1:candidate', '1:baseline'],
  );
});

test('the settle period covers the longest health window plus a scrape', async () => {
  const o = await parseRunOptions(base);
  const unbounded = o.tests.find((t) => t.type === 'unbounded')!;
  const bounded = o.tests.find((t) => t.type === 'bounded')!;
  assert.equal(settleSeconds(unbounded, LOCAL_TIMING), 35); // [30s] windows + 5 s scrape
  assert.equal(settleSeconds(bounded, LOCAL_TIMING), 35); // the graphs' 30 s rate window
  assert.equal(settleSeconds({ ...unbounded, health: [{ ...unbounded.health[0]!, query: 'rate(x[1m])' }] } as typeof unbounded, LOCAL_TIMING), 65);
  assert.equal(settleSeconds(bounded, { rateWindowSec: 60, scrapeIntervalSec: 5 }), 65); // the AWS bench's 1m series
});

test('the AWS bench: Mattermost versions with their release URLs, per-side config patches, the bench and users files', async () => {
  const aws = [
    '--config',
    'examples/aws-mattermost.yml',
    '--baseline',
    'v10.12.0',
    '--candidate',
    'v11.0.1-rc2',
    '--out',
    'reports/x',
    '--bench-file',
    'bench.json',
    '--users-file',
    'users.txt',
  ];
  const o = await parseRunOptions(
    [...aws, '--candidate-set', 'ServiceSettings.EnableLinkPreviews=false', '--candidate-set', 'TeamSettings.MaxUsersPerTeam=500', '--snapshots', 'external'],
    '/work/main',
  );
  assert.equal(o.baseline.releaseUrl, 'https://releases.mattermost.com/10.12.0/mattermost-10.12.0-linux-amd64.tar.gz');
  assert.equal(o.candidate.releaseUrl, 'https://releases.mattermost.com/11.0.1-rc2/mattermost-11.0.1-rc2-linux-amd64.tar.gz');
  assert.deepEqual(o.baseline.configPatch, {});
  assert.deepEqual(o.candidate.configPatch, { ServiceSettings: { EnableLinkPreviews: false }, TeamSettings: { MaxUsersPerTeam: 500 } });
  assert.deepEqual(o.aws, { benchFile: '/work/main/bench.json', usersFile: '/work/main/users.txt', snapshots: 'external' });
  assert.deepEqual(
    schedule(o).map((r) => `${r.test.name}:${r.side.label}`),
    ['bounded:v10.12.0', 'bounded:v11.0.1-rc2', 'unbounded:v10.12.0', 'unbounded:v11.0.1-rc2'],
  );

  const cases: Array<[string[], RegExp]> = [
    [aws.slice(0, 8), /--bench-file: required on the AWS bench/],
    [aws.slice(0, 10), /--users-file: required on the AWS bench/],
    [[...aws, '--candidate-set', 'SqlSettings.DataSource=postgres://elsewhere'], /--candidate-set\.SqlSettings\.DataSource: set by the bench/],
    [[...aws, '--baseline-set', 'servicesettings.x=1'], /must be a config\.json path such as ServiceSettings\.EnableLinkPreviews/],
    [[...aws, '--baseline-set', 'ServiceSettings.ReadTimeout'], /expected Section\.Key=value/],
    [[...aws.slice(0, 3), 'v10.12', ...aws.slice(4)], /--baseline: "v10\.12" does not match target\.versionPattern/],
    [[...aws.slice(0, 5), 'v11.0.1;reboot', ...aws.slice(6)], /--candidate: "v11\.0\.1;reboot" is not a safe version label/],
    [[...aws, '--snapshots', 'sometimes'], /--snapshots: Invalid option/],
  ];
  for (const [argv, message] of cases) {
    await assert.rejects(parseRunOptions(argv), (e: unknown) => e instanceof InputError && message.test((e as Error).message), argv.join(' '));
  }
});

test('the local bench accepts the bench file provision writes for it, and refuses an AWS one', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lg-opt-'));
  try {
    await writeFile(join(dir, 'local.json'), '{"kind":"local","host":"127.0.0.1"}\n');
    await writeFile(join(dir, 'aws.json'), '{"kind":"aws","benchName":"lg-1-1"}\n');
    const o = await parseRunOptions([...base, '--bench-file', join(dir, 'local.json')]);
    assert.equal(o.aws, undefined);
    await assert.rejects(
      parseRunOptions([...base, '--bench-file', join(dir, 'aws.json')]),
      /--bench-file: .*aws\.json describes a "aws" bench, but the config's bench\.kind is local/,
    );
    await assert.rejects(parseRunOptions([...base, '--bench-file', join(dir, 'missing.json')]), /--bench-file: cannot read .*missing\.json as JSON: ENOENT/);
  } finally {
    await rm(dir, { recursive: true });
  }
});

test('--candidate-cpu-quota: a fraction of the target cores for that side only, local bench only', async () => {
  const o = await parseRunOptions([...base, '--candidate-cpu-quota', '0.88']);
  assert.equal(o.candidate.cpuQuota, 0.88);
  assert.equal(o.baseline.cpuQuota, undefined);
  await assert.rejects(parseRunOptions([...base, '--candidate-cpu-quota', '1.5']), /--candidate-cpu-quota: expected a fraction/);
  await assert.rejects(parseRunOptions([...base, '--baseline-cpu-quota', '0']), /--baseline-cpu-quota: expected a fraction/);
  const aws = [
    '--config',
    'examples/aws-mattermost.yml',
    '--baseline',
    'v10.12.0',
    '--candidate',
    'v11.0.1-rc2',
    '--out',
    'o',
    '--bench-file',
    'b.json',
    '--users-file',
    'u.txt',
  ];
  await assert.rejects(parseRunOptions([...aws, '--candidate-cpu-quota', '0.9']), /--candidate-cpu-quota: only the local bench/);
});

test('--max-repeats below --repeats and --update-noise-model without a model are bad input', async () => {
  await assert.rejects(parseRunOptions([...base, '--repeats', '4', '--max-repeats', '2']), /--max-repeats: 2 is below the minimum of 4 pairs/);
  const o = await parseRunOptions([...base, '--max-repeats', '8', '--job-budget', '1h30m', '--resume']);
  assert.deepEqual([o.maxRepeats, o.jobBudgetSec, o.resume], [8, 5400, true]);
  const tiny = ['--config', 'test/integration/fixtures/tiny-synapse.yml', '--baseline', '1.162.0', '--candidate', '1.163.2', '--out', 'o'];
  await assert.rejects(parseRunOptions([...tiny, '--update-noise-model']), /--update-noise-model: .* has no noiseModel to update/);
});
