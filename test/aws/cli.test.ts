import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../src/cli/main.ts';
import { captureIO } from '../../src/cli/io.ts';
import { run as tfOutputs } from '../../src/cli/commands/tf-outputs.ts';
import { run as plan } from '../../src/cli/commands/plan.ts';
import { tfvarsSchema } from '../../src/aws/tfvars.ts';
import { RUN_SETUP_SEC } from '../../src/aws/cost.ts';
import { terraformOutputs } from './fixtures.ts';
import { loadModule, only } from './hcl.ts';

const work = mkdtempSync(join(tmpdir(), 'loadgate-aws-cli-'));
after(() => rmSync(work, { recursive: true, force: true }));

const EXAMPLE = new URL('../../examples/aws-mattermost.yml', import.meta.url).pathname;
const SEQUENTIAL = new URL('../../examples/aws-mattermost-sequential.yml', import.meta.url).pathname;
const LICENSE = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:loadgate/mattermost-license-AbCdEf';
/** A copy of the example elsewhere still finds the shipped noise model. */
const withNoiseModel = (yaml: string) => yaml.replace('noiseModel: ../noise/', `noiseModel: ${resolve('noise')}/`);

const runFlags = ['--repository', 'acme/chat', '--run-id', '123456789', '--run-attempt', '2', '--commit', 'a'.repeat(40)];

test('loadgate plan prints the plan of the example gate', async () => {
  const io = captureIO();
  assert.equal(await main(['plan', '--config', EXAMPLE], io), 0);
  const text = io.stdout.join('\n');
  assert.match(text, /preset perfcomp in us-east-1/);
  // A duet: two agent groups of 6, both versions at once.
  assert.match(text, /agent +12 x c7i\.xlarge/);
  assert.match(text, /bounded +5h49m30s \(3 duets: both versions at once, each with 26m30s of set-up/);
  assert.match(text, /total +\$73\.35/);
  assert.match(
    text,
    /provisioning +1h10m \(database: dump, loaded on app0 and kept as the pristine copy; each run restores and migrates its own in its set-up\)/,
    'the example names its dataset, and where its boot work is booked',
  );
});

test('loadgate plan sets sequential and duet side by side: the same pairs expected, each duet one slot, one agent group per side', async () => {
  const io = captureIO();
  assert.equal(await main(['plan', '--config', SEQUENTIAL], io), 0);
  const text = io.stdout.join('\n');
  assert.match(text, /Sequential and duet \(a duet runs both versions at once on the same app nodes; both expect the pairs this config's noise model gives\):/);
  assert.match(
    text,
    /\n  sequential +11 +\S+, \$[\d.]+ +\S+, \$128\.74 +\d+\n  duet +20 +/,
    "this config's mode first, its worst case the plan's; a duet of 20000 users per side needs two groups of 10 agents",
  );
  const json = captureIO();
  assert.equal(await main(['plan', '--config', SEQUENTIAL, '--format', 'json'], json), 0);
  const { modes, durationSec } = JSON.parse(json.stdout.join('\n')) as {
    modes: { mode: string; agents: number; worst: { totalSec: number }; expected: { totalSec: number; runsPerSide: number }; runJobs: number }[];
    durationSec: { provision: number; teardown: number; total: number };
  };
  const [sequential, duet] = modes as [(typeof modes)[number], (typeof modes)[number]];
  assert.deepEqual(
    modes.map((m) => [m.mode, m.agents]),
    [
      ['sequential', 11],
      ['duet', 20],
    ],
  );
  assert.equal(sequential.worst.totalSec, durationSec.total);
  assert.equal(duet.expected.runsPerSide, sequential.expected.runsPerSide);
  const fixed = durationSec.provision + durationSec.teardown;
  const duets = 3 * 2; // maxRepeats x tests
  assert.equal(
    duet.worst.totalSec - fixed,
    (sequential.worst.totalSec - fixed) / 2 + duets * RUN_SETUP_SEC.restore,
    "the worst case's runs take half as long in duets, and each duet waits for a second restore",
  );
  assert.ok(duet.expected.totalSec < sequential.expected.totalSec);
  assert.ok(duet.runJobs <= sequential.runJobs);
});

test('loadgate plan refuses a load-test-ng gate on an empty database (its admin and users would not exist) and warns a k6 one', async () => {
  const bare = join(work, 'no-dataset.yml');
  const yaml = withNoiseModel(readFileSync(EXAMPLE, 'utf8')).replace(/\n    database:\n      dumpUrl: \S+\n      name: ltdb\n/, '\n');
  assert.ok(!yaml.includes('dumpUrl'));
  writeFileSync(bare, yaml);
  const io = captureIO();
  assert.equal(await main(['plan', '--config', bare], io), 3);
  assert.match(
    io.stderr.join('\n'),
    /bench\.aws\.database: the gate would run on an empty database, where neither the system admin load-test-ng's agents log in when they are created \(LOADGATE_ADMIN_EMAIL \/ LOADGATE_ADMIN_PASSWORD\) nor the users file's accounts exist\. Name the dataset that holds them: bench\.aws\.database\.dumpUrl \(with \.name\) or \.snapshotIdentifier, or --db-dump-url \/ --db-snapshot/,
  );
  // k6 logs in only the users file's accounts: warned, not refused.
  const k6 = join(work, 'no-dataset-k6.yml');
  writeFileSync(k6, yaml.replace('  kind: load-test-ng\n  version: v1.32.0\n', '  kind: k6\n'));
  const k6io = captureIO();
  assert.equal(await main(['plan', '--config', k6], k6io), 0);
  assert.match(
    k6io.stderr.join('\n'),
    /^warning: bench\.aws\.database: no dataset, so the bench starts with an empty database, where the users file's accounts do not exist/,
  );
  // A dataset from the flags, or a teardown (which needs none), passes.
  assert.equal(await main(['plan', '--config', bare, '--db-snapshot', 'lt-12m-610'], captureIO()), 0);
  assert.equal(await main(['plan', '--config', bare, '--format', 'tfvars', '--destroy-only', '--version', 'v10.12.0', ...runFlags], captureIO()), 0);
});

test('loadgate plan --max-cost refuses a gate over budget with exit 1', async () => {
  const io = captureIO();
  assert.equal(await main(['plan', '--config', EXAMPLE, '--max-cost', '40'], io), 1);
  assert.equal(io.stdout.length, 0, 'nothing on stdout: no tfvars, no plan to act on');
  assert.match(io.stderr.join('\n'), /REFUSED: the worst case \$73\.35 .*exceeds the max-cost of \$40\.00 \(--max-cost\)/);
});

test('max-cost caps the worst case and says so: a limit above the expected cost but below the worst case refuses, naming both', async () => {
  const io = captureIO();
  assert.equal(await main(['plan', '--config', EXAMPLE, '--max-cost', '50'], io), 1);
  assert.match(
    io.stderr.join('\n'),
    /REFUSED: the worst case \$73\.35 \(every pair maxRepeats allows, unbounded tests at their maxDuration\) exceeds the max-cost of \$50\.00 \(--max-cost\); the expected cost is \$\d+\.\d\d; max-cost caps the worst case, since the bench may run that long\./,
  );
  const ok = captureIO();
  assert.equal(await main(['plan', '--config', EXAMPLE, '--max-cost', '80'], ok), 0);
  assert.match(ok.stdout.join('\n'), /Budget: the worst case \$73\.35 is within the max-cost of \$80\.00 \(--max-cost\); the expected cost is \$\d+\.\d\d\./);
});

test("loadgate plan --calibrate, a calibration's bench: the config's noise model, which it replaces, is not checked, and every pair is the worst case", async () => {
  const other = join(work, 'preset.yml');
  const text = readFileSync(EXAMPLE, 'utf8').replace(/^(\s+preset: )perfcomp$/m, '$1L.110');
  writeFileSync(other, text);
  const gate = captureIO();
  assert.equal(await main(['plan', '--config', other], gate), 3);
  assert.match(gate.stderr.join('\n'), /bench\.aws\.preset: the model's "perfcomp", the config's "L\.110"/);
  const io = captureIO();
  assert.equal(await main(['plan', '--config', other, '--calibrate', '--max-repeats', '5'], io), 0, io.stderr.join('\n'));
  const printed = io.stdout.join('\n');
  assert.match(printed, /^AWS bench plan for gate "[^"]+": preset L\.110/);
  assert.doesNotMatch(printed, /expected/i, 'a calibration runs every pair: no expected figures from a model');
});

test("loadgate plan --max-repeats below repeats (a continuation's new pairs) plans only those pairs", async () => {
  const twice = join(work, 'repeats-2.yml');
  writeFileSync(twice, readFileSync(EXAMPLE, 'utf8').replace(/^repeats: 1$/m, 'repeats: 2'));
  const json = async (args: string[]) => {
    const io = captureIO();
    assert.equal(await main(['plan', '--format', 'json', ...args], io), 0, io.stderr.join('\n'));
    return (JSON.parse(io.stdout.join('\n')) as { cost: { totalUsd: number } }).cost.totalUsd;
  };
  assert.equal(await json(['--config', twice, '--max-repeats', '1']), await json(['--config', EXAMPLE, '--max-repeats', '1']));
  assert.ok((await json(['--config', twice, '--max-repeats', '2'])) > (await json(['--config', twice, '--max-repeats', '1'])));
});

test('loadgate plan --format json carries the numbers for the check run', async () => {
  const io = captureIO();
  assert.equal(
    await main(['plan', '--config', EXAMPLE, '--format', 'json', '--db-dump-url', 'https://lt-public-data.s3.amazonaws.com/12M_610_fixed_psql.sql.gz'], io),
    0,
  );
  const json = JSON.parse(io.stdout.join('\n')) as {
    dbSource: string;
    cost: { totalUsd: number; pricesAsOf: string };
    durationSec: { total: number };
    withinBudget: boolean;
  };
  assert.equal(json.dbSource, 'dump');
  // Provisioning with the dump load, 6 duets of 90 minutes each with its 26.5-minute set-up
  // (a run's 21.5 minutes and the second slot's restore), teardown.
  assert.equal(json.durationSec.total, 70 * 60 + 6 * (90 * 60 + 1290 + 300) + 15 * 60);
  assert.equal(json.withinBudget, true);
  assert.match(json.cost.pricesAsOf, /^\d{4}-\d{2}-\d{2}$/);
});

test('loadgate plan --format tfvars writes variables infra/aws declares and validates', async () => {
  const out = join(work, 'terraform.tfvars.json');
  const io = captureIO();
  const code = await main(
    [
      'plan',
      '--config',
      EXAMPLE,
      '--format',
      'tfvars',
      '--out',
      out,
      '--version',
      'v10.12.0',
      '--license-secret-arn',
      LICENSE,
      '--controller-cidr',
      '203.0.113.7/32',
      '--db-dump-url',
      'https://lt-public-data.s3.amazonaws.com/12M_610_fixed_psql.sql.gz',
      '--db-name',
      'ltdb',
      '--now',
      '2026-11-21T10:00:00Z',
      ...runFlags,
    ],
    io,
  );
  assert.equal(code, 0, io.stderr.join('\n'));
  assert.match(io.stderr.join('\n'), /preset perfcomp/, 'the plan still reaches the log');
  const tfvars = tfvarsSchema.parse(JSON.parse(readFileSync(out, 'utf8')));
  assert.equal(tfvars.bench_name, 'lg-123456789-2');
  assert.equal(tfvars.state_key, 'loadgate/acme/chat/123456789/2/terraform.tfstate');
  assert.equal(tfvars.bench.mattermost_download_url, 'https://releases.mattermost.com/10.12.0/mattermost-10.12.0-linux-amd64.tar.gz');
  assert.equal(tfvars.expires_at, '2026-11-22T00:04:00Z', '10:00 + 13h4m worst case (maxRepeats duets, set-up included) + 1h margin');
  // The example runs in duet: two slots per app node, two agent groups of 6.
  assert.equal(tfvars.bench.duet, true);
  assert.equal(tfvars.bench.agent_count, 12);
  assert.deepEqual(tfvars.bench.controller_cidr_blocks, ['203.0.113.7/32']);
  // The nodes' config is the release's defaults merged with this patch (user data's jq, as
  // app.sh.tftpl runs it): Mattermost's defaults install and enable the prepackaged plugins
  // (server/public/model/config.go PluginSettings.SetDefaults), so the bench's own defaults
  // travel in the patch and turn them off, and both duet slots carry the same plugin load.
  const releaseDefaults = {
    PluginSettings: {
      Enable: true,
      AutomaticPrepackagedPlugins: true,
      EnableMarketplace: true,
      PluginStates: { 'com.mattermost.calls': { Enable: true }, playbooks: { Enable: true } },
    },
    TeamSettings: { MaxUsersPerTeam: 50 },
  };
  const appTemplate = readFileSync(new URL('../../infra/aws/modules/bench/templates/app.sh.tftpl', import.meta.url), 'utf8');
  assert.ok(
    appTemplate.includes(`jq --slurpfile patch /etc/mattermost/patch.json '. * $patch[0]' /etc/mattermost/config.base.json`),
    "user data's base-config merge",
  );
  const patchFile = join(work, 'patch.json');
  writeFileSync(patchFile, tfvars.bench.mattermost_config_patch);
  const base = JSON.parse(
    execFileSync('jq', ['-n', '--argjson', 'base', JSON.stringify(releaseDefaults), '--slurpfile', 'patch', patchFile, '$base * $patch[0]'], {
      encoding: 'utf8',
    }),
  ) as typeof releaseDefaults;
  assert.equal(base.PluginSettings.AutomaticPrepackagedPlugins, false);
  assert.equal(base.PluginSettings.EnableMarketplace, false);
  assert.ok(base.TeamSettings.MaxUsersPerTeam >= 20000, 'users per team do not cap the largest test');
  // The example runs load-test-ng, pinned to a real release (its download must exist).
  assert.equal(tfvars.bench.load_engine, 'load-test-ng');
  assert.equal(tfvars.bench.agent_api_port, 4000);
  assert.equal(
    tfvars.bench.loadtest_download_url,
    'https://github.com/mattermost/mattermost-load-test-ng/releases/download/v1.32.0/mattermost-load-test-ng-v1.32.0-linux-amd64.tar.gz',
  );

  // The run's identity goes to the root module, the settings under `bench` to modules/bench.
  const { bench, ...run } = tfvars;
  // What the root module gives modules/bench from its own variables (the bench's name, its
  // expiry) rather than from var.bench.
  const benchCall = only((await loadModule('.')).module.bench as Record<string, unknown>[] | undefined, 'module bench');
  const fromRoot = Object.entries(benchCall)
    .filter(([, v]) => typeof v === 'string' && /\$\{var\.(?!bench\.)/.test(v))
    .map(([k]) => k);
  assert.ok(fromRoot.includes('name') && fromRoot.includes('expires_at'), `the root sets name and expires_at: ${fromRoot.join(', ')}`);
  for (const [dir, values, own] of [
    ['.', run, tfvars],
    ['modules/bench', bench, bench],
  ] as const) {
    const module = await loadModule(dir);
    for (const key of Object.keys(values)) assert.ok(module.variable[key], `${key} is a variable of ${dir}`);
    for (const [name, bodies] of Object.entries(module.variable)) {
      if (dir === 'modules/bench' && fromRoot.includes(name)) continue;
      if (!('default' in only(bodies, name))) assert.ok(name in own, `required variable ${name} of ${dir} is set`);
    }
    // The regex validations of the module accept what the CLI wrote.
    for (const [name, value] of Object.entries(values)) {
      for (const validation of (only(module.variable[name], name).validation as Array<{ condition: string }> | undefined) ?? []) {
        for (const match of validation.condition.matchAll(/can\(regex\("((?:[^"\\]|\\.)*)", var\.(\w+)\)\)/g)) {
          if (match[2] !== name || typeof value !== 'string') continue;
          assert.match(value, new RegExp(JSON.parse(`"${match[1]}"`) as string), `${dir} ${name} passes its validation`);
        }
      }
    }
  }
});

test('loadgate plan --format tfvars needs the version and the run, and checks them', async () => {
  const io = captureIO();
  assert.equal(await main(['plan', '--config', EXAMPLE, '--format', 'tfvars', ...runFlags], io), 3);
  assert.match(io.stderr.join('\n'), /--version: name the Mattermost version/);
  const missingRun = captureIO();
  await assert.rejects(
    plan(['--config', EXAMPLE, '--format', 'tfvars', '--version', 'v10.12.0'], missingRun, async () => ({})),
    (error: Error) => {
      assert.match(error.message, /^the run this bench belongs to is incomplete:/);
      for (const flag of ['--repository (or GITHUB_REPOSITORY)', '--run-id (or GITHUB_RUN_ID)', '--commit (or GITHUB_SHA)'])
        assert.ok(error.message.includes(flag), flag);
      return true;
    },
  );
  const fromEnv = captureIO();
  // The run from the Actions context, as @actions/github reads GITHUB_REPOSITORY, GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT and GITHUB_SHA.
  const context = async () => ({ repository: 'acme/chat', runId: '42', runAttempt: 1, sha: 'b'.repeat(40) });
  assert.equal(await plan(['--config', EXAMPLE, '--format', 'tfvars', '--version', 'v10.12.0', '--license-secret-arn', LICENSE], fromEnv, context), 0);
  assert.equal(JSON.parse(fromEnv.stdout.join('\n')).state_key, 'loadgate/acme/chat/42/1/terraform.tfstate');
  const badVersion = captureIO();
  assert.equal(await main(['plan', '--config', EXAMPLE, '--format', 'tfvars', '--version', '10.12', ...runFlags], badVersion), 3);
  assert.match(badVersion.stderr.join('\n'), /does not match target\.versionPattern/);
  const openCidr = captureIO();
  assert.equal(await main(['plan', '--config', EXAMPLE, '--controller-cidr', '0.0.0.0/0'], openCidr), 3);
  assert.match(openCidr.stderr.join('\n'), /--controller-cidr: ranges wider than \/16 are refused/);
  // Not a CIDR at all: the flag named, not an internal error.
  const notCidr = captureIO();
  assert.equal(await main(['plan', '--config', EXAMPLE, '--controller-cidr', 'nope'], notCidr), 3);
  assert.match(notCidr.stderr.join('\n'), /--controller-cidr: expected an IPv4 CIDR such as 203\.0\.113\.7\/32/);
  // Not only /0: any range wider than /16 would open the agents' k6 API to much of the internet.
  const wide = captureIO();
  assert.equal(await main(['plan', '--config', EXAMPLE, '--controller-cidr', '198.51.0.0/15'], wide), 3);
  assert.match(wide.stderr.join('\n'), /ranges wider than \/16 are refused/);
  const narrow = captureIO();
  assert.equal(
    await plan(
      [
        '--config',
        EXAMPLE,
        '--format',
        'tfvars',
        '--version',
        'v10.12.0',
        '--license-secret-arn',
        LICENSE,
        '--controller-cidr',
        '198.51.100.7/32',
        '--controller-cidr',
        '198.51.0.0/16',
      ],
      narrow,
      context,
    ),
    0,
  );
  assert.deepEqual(JSON.parse(narrow.stdout.join('\n')).bench.controller_cidr_blocks, ['198.51.100.7/32', '198.51.0.0/16']);
  const badOctet = captureIO();
  assert.equal(await main(['plan', '--config', EXAMPLE, '--controller-cidr', '300.1.2.3/32'], badOctet), 3);
  assert.match(badOctet.stderr.join('\n'), /expected IPv4 octets of 0-255/);
});

test('loadgate plan refuses a local bench and a bad flag with exit 3', async () => {
  const local = new URL('../../examples/local-synapse.yml', import.meta.url).pathname;
  const io = captureIO();
  assert.equal(await main(['plan', '--config', local], io), 3);
  assert.match(io.stderr.join('\n'), /bench\.kind is "local"/);
  const flag = captureIO();
  assert.equal(await main(['plan', '--config', EXAMPLE, '--max-cost', 'lots'], flag), 3);
  assert.match(flag.stderr.join('\n'), /--max-cost: expected a number of US dollars/);
  const preset = join(work, 'bad-preset.yml');
  writeFileSync(preset, readFileSync(EXAMPLE, 'utf8').replace('preset: perfcomp', 'preset: 3XL.220'));
  const unknown = captureIO();
  assert.equal(await main(['plan', '--config', preset], unknown), 3);
  assert.match(unknown.stderr.join('\n'), /unknown preset "3XL\.220"; valid presets are "perfcomp"/);
});

test('loadgate tf-outputs prints the bench description from a file or stdin', async () => {
  const file = join(work, 'outputs.json');
  writeFileSync(file, JSON.stringify(terraformOutputs()));
  const io = captureIO();
  assert.equal(await main(['tf-outputs', file], io), 0);
  assert.equal(JSON.parse(io.stdout.join('\n')).metrics.grafanaUrl, 'http://203.0.113.10:3000');

  const piped = captureIO();
  assert.equal(await tfOutputs(['-'], piped, Readable.from([Buffer.from(JSON.stringify(terraformOutputs()))])), 0);
  assert.equal(JSON.parse(piped.stdout.join('\n')).agents.apiPort, 4000);

  const broken = join(work, 'broken.json');
  writeFileSync(broken, JSON.stringify({ ...terraformOutputs(), grafana_url: { sensitive: false, type: 'string', value: 42 } }));
  const bad = captureIO();
  assert.equal(await main(['tf-outputs', broken], bad), 3);
  assert.match(bad.stderr.join('\n'), /broken\.json does not describe a loadgate AWS bench:\ngrafana_url: /);
  const none = captureIO();
  assert.equal(await main(['tf-outputs'], none), 3);
});

test('loadgate plan --format tfvars refuses target.settings that would rewire the bench', async () => {
  const config = join(work, 'rewire.yml');
  writeFileSync(
    config,
    withNoiseModel(readFileSync(EXAMPLE, 'utf8')).replace(
      '  downloadUrl:',
      "  settings:\n    SqlSettings: { DataSource: 'postgres://someone@elsewhere/db' }\n  downloadUrl:",
    ),
  );
  const io = captureIO();
  assert.equal(await main(['plan', '--config', config, '--format', 'tfvars', '--version', 'v10.12.0', ...runFlags], io), 3);
  assert.match(io.stderr.join('\n'), /target\.settings\.SqlSettings\.DataSource: set by the bench from its topology; remove it/);
});
