/**
 * A separate product repository adopts loadgate from its published surface alone: the
 * README's "Adopt it in five steps" and docs/github.md, nothing of loadgate's tree but what
 * a release holds. Each case builds a fresh git repository (not a copy of loadgate) with
 * - the callers copied verbatim: examples/workflows/loadgate.yml to
 *   .github/workflows/loadgate.yml and examples/workflows/janitor.yml to
 *   .github/workflows/loadgate-janitor.yml, as their first lines say (a case that edits the
 *   caller does what docs/github.md tells a team to: uncomment reports-repository, set the
 *   runners' limit);
 * - the gate config copied verbatim from the example the README names for a first gate,
 *   examples/aws-mattermost.yml (its `noiseModel: builtin:…` resolves from the package);
 * - the secrets and variables docs/github.md lists, set where it says, and nothing else.
 *
 * The substitutions, each because there is no GitHub or AWS offline:
 * - `uses: loadgate/loadgate/…@v1` is served by act (`--local-repository`) from a release
 *   tree of this checkout (what a tag holds: dist/ included, no node_modules), and the
 *   checkout stand-in copies the same tree into `.loadgate` (docs/github.md step 1: pin a
 *   release, the same ref as `loadgate-ref`);
 * - GitHub's API is the stand-in built from GitHub's OpenAPI description
 *   (test/support/github-standin), serving the product repository's own git history (a
 *   tag the API names is the commit the checkout stand-in checks out), the other
 *   repositories of the walk below and a GitHub App with GitHub's installation rules;
 *   actions/create-github-app-token is its act stand-in, written from its source;
 * - act has no environments, so the `bench` environment's variables are act variables
 *   (`--var`), and a secret kept only in that environment is a secret act is not given:
 *   the caller's job names no environment, so GitHub would pass it as empty too;
 * - act has no artifact service offline: each workflow run's artifacts are a host
 *   directory per run id (LOADGATE_ACT_RUNS/<run id>/<name>), which is how a continuation
 *   reads the earlier run's report;
 * - the AWS account is the loopback AWS bench (test/support/aws-act-bench.ts), and for the
 *   janitor moto on 127.0.0.1 behind a shim that gives its EC2 ARNs AWS's form.
 *
 * The walk of the adopter's first week runs on the loopback AWS bench with a small duet
 * profile (a few users for seconds): a calibration after a config change, dispatched on a
 * release branch, across the AWS run jobs; a gate at a candidate tag whose config differs
 * from the default branch's, its report in a reports repository through a GitHub App; that
 * inconclusive gate continued twice; a second product sharing the reports repository, whose
 * App lacks a permission (the check run still completes, saying why) before its gate runs.
 */
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parse } from 'yaml';
import { runLogged } from '../support/logged-process.ts';
import { ROOT, gateEnvArgs, replacedActions, startConsumerRepository, writeReleaseTree } from '../support/act.ts';
import { startMoto } from '../aws/emulator/moto.ts';
import { startArnShim } from '../aws/emulator/arn-shim.ts';
import { findK6, NO_K6 } from '../engine/k6/k6-binary.ts';
import { firstWeek } from './adopter-week.ts';

const execFileAsync = promisify(execFile);
const ACT = [process.env.ACT_BIN, join(ROOT, '.cache', 'bin', 'act')].find((p) => p && existsSync(p));
const TOKEN = 'act-token-adopter-0123456789';
const CALLER = join(ROOT, 'examples', 'workflows', 'loadgate.yml');
const JANITOR_CALLER = join(ROOT, 'examples', 'workflows', 'janitor.yml');
/** The example the README's step 1 names for a first gate. */
const FIRST_CONFIG = join(ROOT, 'examples', 'aws-mattermost.yml');
/** The local example docs/local.md and the README name. */
const LOCAL_CONFIG = join(ROOT, 'examples', 'local-synapse-duet.yml');
const ACT_SHORT_TIMEOUT_MS = 6 * 60_000;
/** Six workflow runs of a few minutes each, on the loopback AWS bench. */
const WALK_TIMEOUT_MS = 60 * 60_000;

const integration = process.env.LOADGATE_SKIP_INTEGRATION === '1' ? 'LOADGATE_SKIP_INTEGRATION=1' : false;
const skipAct = integration || (!ACT ? 'act is not installed (bash scripts/setup.sh --tests installs it)' : false);
const k6 = findK6();
const skipAws = !k6
  ? NO_K6
  : !(existsSync('/usr/bin/prometheus') && existsSync('/usr/bin/prometheus-node-exporter'))
    ? 'prometheus and prometheus-node-exporter (Debian packages) are not installed'
    : false;

/** moto and the AWS CLI from scripts/check-infra.sh's venv (test.sh runs it first), else from PATH. */
function motoTools(): { moto: string; aws: string } | undefined {
  const venv = process.env.MOTO_VENV ?? join(process.env.LOADGATE_INFRA_CACHE ?? join(ROOT, '.cache', 'terraform'), 'moto-venv');
  const inVenv = { moto: join(venv, 'bin', 'moto_server'), aws: join(venv, 'bin', 'aws') };
  if (existsSync(inVenv.moto) && existsSync(inVenv.aws)) return inVenv;
  const which = (name: string) => spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim() || undefined;
  const moto = which('moto_server');
  const aws = which('aws');
  return moto && aws ? { moto, aws } : undefined;
}
const moto = motoTools();

/** What the caller pins: loadgate's repository and ref (the `uses:` line), and the config it names. */
function pinOf(callerText: string): { repository: string; ref: string; config: string; loadgateRef: string } {
  const job = Object.values((parse(callerText) as { jobs: Record<string, { uses: string; with: Record<string, string> }> }).jobs)[0];
  assert.ok(job, 'the caller has a job');
  const [path, ref] = job.uses.split('@') as [string, string];
  return { repository: path.split('/').slice(0, 2).join('/'), ref, config: job.with.config ?? '', loadgateRef: job.with['loadgate-ref'] ?? '' };
}

interface Product {
  dir: string;
  release: string;
  work: string;
  pin: ReturnType<typeof pinOf>;
}

/**
 * The product repository: a fresh git repository with both callers copied verbatim (the
 * gate's caller possibly edited by `editCaller`, as a team would), the config at the path
 * the caller names, and any further files; committed. Its temp directory goes afterwards.
 */
async function productRepository(
  t: TestContext,
  o: { config: string; files?: Record<string, string>; editCaller?: (text: string) => string },
): Promise<Product> {
  const work = await mkdtemp(join(tmpdir(), 'loadgate-adopter-'));
  t.after(() => rm(work, { recursive: true, force: true }));
  const dir = join(work, 'chat-server');
  const callerText = (o.editCaller ?? ((s) => s))(readFileSync(CALLER, 'utf8'));
  const pin = pinOf(readFileSync(CALLER, 'utf8'));
  mkdirSync(join(dir, '.github', 'workflows'), { recursive: true });
  writeFileSync(join(dir, '.github', 'workflows', 'loadgate.yml'), callerText);
  copyFileSync(JANITOR_CALLER, join(dir, '.github', 'workflows', 'loadgate-janitor.yml'));
  copyFileSync(o.config, join(dir, pin.config));
  // README step 1: the dataset's users file is committed beside the config (load-test-ng's `login password` lines).
  writeFileSync(join(dir, USERS_FILE), Array.from({ length: 24_000 }, (_, i) => `user${i}@chat-server.example pw-${i}`).join('\n') + '\n');
  for (const [file, text] of Object.entries(o.files ?? {})) writeFileSync(join(dir, file), text);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('-c', 'user.name=release-lead', '-c', 'user.email=release-lead@chat-server.example', 'commit', '-q', '-m', 'adopt loadgate');
  return { dir, release: shared.release, work, pin };
}

/** One release tree for every case of this file: what the pinned tag holds (about 5 s to write). */
const shared = { root: '', release: '' };

/** act's flags for a workflow_dispatch of one of the product's workflows, loadgate served from the release tree. */
function actArgs(p: Product, workflow: string, calledWorkflow: string): string[] {
  return [
    'workflow_dispatch',
    '-W',
    `.github/workflows/${workflow}`,
    '-P',
    'ubuntu-latest=-self-hosted',
    '--action-cache-path',
    join(p.work, 'act-cache'),
    '--local-repository',
    `${p.pin.repository}@${p.pin.ref}=${p.release}`,
    ...replacedActions([join(p.dir, '.github', 'workflows', workflow), join(p.release, '.github', 'workflows', calledWorkflow)]),
  ];
}

/** Where README step 1 puts the dataset's users file. */
const USERS_FILE = '.github/loadgate-users.txt';

/** The CLI a pinned release runs (its bundled dist/), from the product repository's directory; validate as README step 1 runs it. */
function cli(p: Product, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const full = args[0] === 'validate' ? ['validate', '--users-file', USERS_FILE, ...args.slice(1)] : args;
  return spawnSync(process.execPath, [join(p.release, 'dist', 'loadgate.js'), ...full], { cwd: p.dir, encoding: 'utf8' });
}

function logFileFor(name: string): string {
  mkdirSync(join(ROOT, 'tmp'), { recursive: true });
  return join(ROOT, 'tmp', `act-adopter-${name}.log`);
}

describe('a product repository adopts loadgate from the README and docs/github.md', { concurrency: 2 }, () => {
  before(async () => {
    shared.root = await mkdtemp(join(tmpdir(), 'loadgate-adopter-release-'));
    shared.release = writeReleaseTree(join(shared.root, 'loadgate'));
  });
  after(() => (shared.root ? rm(shared.root, { recursive: true, force: true }) : undefined));

  test('the shipped callers pin one loadgate release, and repeat its ref as loadgate-ref (docs/github.md step 3)', () => {
    const pin = pinOf(readFileSync(CALLER, 'utf8'));
    assert.match(pin.ref, /^v\d+$|^[0-9a-f]{40}$/, 'a release tag or a commit SHA');
    assert.equal(pin.loadgateRef, pin.ref);
    const janitor = pinOf(readFileSync(JANITOR_CALLER, 'utf8'));
    assert.deepEqual([janitor.repository, janitor.ref, janitor.loadgateRef], [pin.repository, pin.ref, pin.ref], 'the janitor pins the same release');
    assert.equal(janitor.config, pin.config, 'the janitor sweeps the gate config the caller names');
  });

  // README step 1, and the first trial's defect 2: the example's noise model pointed into
  // loadgate's tree (../noise/…), so plan exited 3 in a product repository.
  test('step 1: the example config, copied verbatim into the product repository, validates and plans there, its builtin noise model resolved from the release', async (t) => {
    const p = await productRepository(t, { config: FIRST_CONFIG, files: { 'local.yml': readFileSync(LOCAL_CONFIG, 'utf8') } });
    const validate = cli(p, 'validate', p.pin.config, 'local.yml');
    assert.equal(validate.status, 0, validate.stdout + validate.stderr);
    assert.match(validate.stdout, /\.github\/loadgate\.yml: ok .*noise model builtin:aws-mattermost-duet/);
    assert.match(validate.stdout, /local\.yml: ok .*noise model builtin:local-synapse-duet \(measured\)/);
    const plan = cli(p, 'plan', '--config', p.pin.config);
    assert.equal(plan.status, 0, plan.stdout + plan.stderr);
    assert.match(plan.stdout, /^AWS bench plan for gate "[^"]+": preset perfcomp in us-east-1/);
    assert.match(plan.stdout, /Estimated cost .*\n[\s\S]*total\s+\$\d+\.\d\d/);
  });

  // Defect 2: renaming the gate or nudging a threshold got the assumed model refused;
  // another preset was accepted silently.
  test('step 1: a team edits the copied example: a renamed gate or a nudged load keeps the assumed model, another preset is refused naming it', async (t) => {
    const original = readFileSync(FIRST_CONFIG, 'utf8');
    const edits = {
      'renamed.yml': original.replace(/^name: .*$/m, 'name: chat-server-release'),
      'nudged.yml': original.replace(/^(\s+users: )3750$/m, (_, key: string) => `${key}4000`),
      'preset.yml': original.replace(/^(\s+preset: )perfcomp$/m, '$1L.110'),
    };
    for (const [file, text] of Object.entries(edits)) assert.notEqual(text, original, `${file} edits the example`);
    const p = await productRepository(t, { config: FIRST_CONFIG, files: edits });
    for (const file of ['renamed.yml', 'nudged.yml']) {
      const r = cli(p, 'validate', file);
      assert.equal(r.status, 0, `${file}: ${r.stdout}${r.stderr}`);
      assert.match(r.stdout, /builtin:aws-mattermost-duet \(assumed\)/);
    }
    const other = cli(p, 'validate', 'preset.yml');
    assert.equal(other.status, 3, other.stdout + other.stderr);
    assert.match(other.stderr, /bench\.aws\.preset: the model's "perfcomp", the config's "L\.110"/);
  });

  // Defect 8: max-cost was checked against the worst case while the docs headlined the
  // expected cost, so `max-cost: 50` refused with no word of which figure it capped.
  test('step 3: plan with a max-cost under the worst case refuses and names both figures', async (t) => {
    const p = await productRepository(t, { config: FIRST_CONFIG });
    const plan = cli(p, 'plan', '--config', p.pin.config, '--max-cost', '50');
    assert.equal(plan.status, 1, plan.stdout + plan.stderr);
    assert.match(
      plan.stdout + plan.stderr,
      /REFUSED: the worst case \$\d+\.\d\d .* exceeds the max-cost of \$50\.00 .*the expected cost is \$\d+\.\d\d; max-cost caps the worst case/,
    );
  });

  // Defect 3: PromQL typos were found only at run time, after provisioning.
  test('step 1: validate refuses a PromQL typo in the copied example', async (t) => {
    const original = readFileSync(FIRST_CONFIG, 'utf8');
    const typo = original.replace('sum(rate(loadtest_http_request_time_sum[1m]))/sum', 'sum(rate(loadtest_http_request_time_sum[1m])/sum');
    assert.notEqual(typo, original);
    const p = await productRepository(t, { config: FIRST_CONFIG, files: { 'typo.yml': typo } });
    const r = cli(p, 'validate', 'typo.yml');
    assert.equal(r.status, 3, `validate of a PromQL typo exited ${r.status}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /\.query: not valid PromQL at column \d+/);
  });

  // Defect 7: a typo in the caller's config: input gave no check run at all.
  test(
    "step 2: a typo in the caller's config path ends in an action_required check run naming the path",
    { skip: skipAct, timeout: ACT_SHORT_TIMEOUT_MS + 60_000 },
    async (t) => {
      const baseline = 'v10.12.0';
      const candidate = 'v11.0.1-rc2';
      const p = await productRepository(t, {
        config: FIRST_CONFIG,
        editCaller: (s) => s.replace(/^(\s+config: )\.github\/loadgate\.yml/m, '$1.github/loadgate.yaml'),
      });
      const { standin, candidateSha } = await startConsumerRepository(TOKEN, { baseline, candidate }, { local: p.dir });
      t.after(() => standin.close());
      const logFile = logFileFor('config-typo');
      const args = [
        ...actArgs(p, 'loadgate.yml', 'loadgate.yml'),
        '--input',
        `candidate=${candidate}`,
        '--input',
        `baseline=${baseline}`,
        ...gateEnvArgs({
          standin,
          loadgate: { repository: p.pin.repository, source: p.release },
          workspace: p.dir,
          share: join(p.work, 'share'),
          token: TOKEN,
        }),
        '--env',
        'LG_RELEASE_WAIT=off',
      ];
      const { code } = await runLogged(ACT as string, args, { cwd: p.dir, logFile, timeoutMs: ACT_SHORT_TIMEOUT_MS });
      const where = `act exit ${code}, log: ${logFile}`;
      assert.notEqual(code, 0, `the workflow fails (${where})`);
      assert.deepEqual(standin.rejected, [], `requests rejected by GitHub's OpenAPI schema (${where})`);
      const runs = standin.checkRuns.filter((r) => r.name === 'loadgate' && r.head_sha === candidateSha);
      assert.equal(runs.length, 1, `one loadgate check run on the candidate commit (${where})`);
      assert.equal(runs[0]?.status, 'completed');
      assert.equal(runs[0]?.conclusion, 'action_required');
      assert.match(`${runs[0]?.output.title}\n${runs[0]?.output.summary}`, /\.github\/loadgate\.yaml/, 'the check run names the path');
      assert.equal(standin.pulls.length, 0, 'no report PR for a gate that never started');
    },
  );

  // Defect 3: with the admin login only in the `bench` environment (README step 3 said so
  // then), the reusable workflow never saw it, and the gate failed in run-aws-1 after about
  // 70 minutes of provisioning.
  test(
    'step 3: secrets kept only in the bench environment (not passed by the caller) fail the gate before provisioning, naming each secret',
    {
      skip: skipAct,
      timeout: ACT_SHORT_TIMEOUT_MS + 60_000,
    },
    async (t) => {
      const baseline = 'v10.12.0';
      const candidate = 'v11.0.1-rc2';
      const p = await productRepository(t, { config: FIRST_CONFIG, files: { '.github/loadgate-users.txt': 'user-1@chat-server.example user-password-1\n' } });
      const { standin, candidateSha } = await startConsumerRepository(TOKEN, { baseline, candidate }, { local: p.dir });
      t.after(() => standin.close());
      // Terraform and the AWS CLI stand-ins only record a call and fail: nothing may leave the machine.
      const bin = join(p.work, 'bin');
      const called = join(p.work, 'called.txt');
      mkdirSync(bin);
      for (const tool of ['terraform', 'aws']) {
        writeFileSync(
          join(bin, tool),
          `#!/bin/sh\necho "${tool} $*" >> ${JSON.stringify(called)}\necho "adopter test: ${tool} must not run before the preflight passed" >&2\nexit 1\n`,
        );
        chmodSync(join(bin, tool), 0o755);
      }
      const logFile = logFileFor('environment-secrets');
      const args = [
        ...actArgs(p, 'loadgate.yml', 'loadgate.yml'),
        '--input',
        `candidate=${candidate}`,
        '--input',
        `baseline=${baseline}`,
        ...gateEnvArgs({
          standin,
          loadgate: { repository: p.pin.repository, source: p.release },
          workspace: p.dir,
          share: join(p.work, 'share'),
          token: TOKEN,
        }),
        // The bench environment's variables (docs/github.md step 4); no repository secret.
        '--var',
        'LOADGATE_AWS_ROLE_ARN=arn:aws:iam::123456789012:role/loadgate-bench',
        '--var',
        'LOADGATE_LICENSE_SECRET_ARN=arn:aws:secretsmanager:us-east-1:123456789012:secret:mattermost-licence-AbCdEf',
        '--var',
        'LOADGATE_AWS_REGION=us-east-1',
        '--var',
        'LOADGATE_TF_STATE_BUCKET=chat-server-loadgate-state',
        '--var',
        'LOADGATE_USERS_FILE=.github/loadgate-users.txt',
        '--env',
        'LG_RELEASE_WAIT=off',
      ];
      const env = { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` };
      const { code } = await runLogged(ACT as string, args, { cwd: p.dir, logFile, timeoutMs: ACT_SHORT_TIMEOUT_MS, env });
      const where = `act exit ${code}, log: ${logFile}`;
      // The preflight job ran and refused, and nothing after it did: no terraform, no aws.
      assert.match(
        readFileSync(logFile, 'utf8'),
        /Check the secrets and variables the bench needs.*the aws bench needs 2 settings that are not set/,
        `the preflight refused (${where})`,
      );
      assert.ok(!existsSync(called), `nothing was provisioned: ${existsSync(called) ? readFileSync(called, 'utf8') : ''} (${where})`);
      const runs = standin.checkRuns.filter((r) => r.name === 'loadgate' && r.head_sha === candidateSha);
      assert.equal(runs.length, 1, `one loadgate check run (${where})`);
      assert.equal(runs[0]?.conclusion, 'action_required');
      const text = `${runs[0]?.output.title}\n${runs[0]?.output.summary}`;
      // Named as the product sets it (the caller's secret) or as the reusable workflow declares it.
      for (const [secret, input] of [
        ['LOADGATE_ADMIN_EMAIL', 'admin-email'],
        ['LOADGATE_ADMIN_PASSWORD', 'admin-password'],
      ]) {
        assert.match(text, new RegExp(`${secret}|${input}`), `the check run names ${secret}`);
      }
    },
  );

  // Defect 4: nothing swept a product repository's leaked bench.
  test(
    "the product's janitor, the shipped caller of the reusable janitor, sweeps a bench left behind in its account and keeps a current one",
    {
      skip: skipAct || (!moto ? 'moto_server and the AWS CLI are not installed (scripts/check-infra.sh installs them)' : false),
      timeout: ACT_SHORT_TIMEOUT_MS + 120_000,
    },
    async (t) => {
      const tools = moto as { moto: string; aws: string };
      const server = await startMoto(tools.moto, (line) => t.diagnostic(line));
      t.after(() => server.stop());
      // moto 5.1 (the emulator scripts/check-infra.sh pins) lists EC2 ARNs in a form no
      // region returns; the shim gives them AWS's (test/aws/emulator/arn-shim.ts).
      const shim = await startArnShim(server.url);
      t.after(() => shim.close());
      const p = await productRepository(t, { config: FIRST_CONFIG });
      // The AWS CLI the janitor runs, by name from PATH, pointed at moto.
      const bin = join(p.work, 'bin');
      mkdirSync(bin);
      writeFileSync(join(bin, 'aws'), `#!/bin/sh\nexec ${JSON.stringify(tools.aws)} --endpoint-url ${JSON.stringify(shim.url)} "$@"\n`);
      chmodSync(join(bin, 'aws'), 0o755);
      const awsEnv = {
        ...process.env,
        AWS_ACCESS_KEY_ID: 'testing',
        AWS_SECRET_ACCESS_KEY: 'testing',
        AWS_DEFAULT_REGION: 'us-east-1',
        AWS_EC2_METADATA_DISABLED: 'true',
      };
      // Asynchronous: the shim answers in this process, so a blocking call would wait on itself.
      const aws = async (...args: string[]): Promise<string> =>
        (await execFileAsync(join(bin, 'aws'), [...args, '--region', 'us-east-1', '--output', 'text'], { env: awsEnv, encoding: 'utf8' })).stdout.trim();
      // Two benches as a gate's Terraform tags them (Project, Bench, ExpiresAt): one whose
      // teardown never ran and whose expiry has passed, one of a gate still running. The
      // left-behind one has no state (its StateKey tag is absent), so the sweep deletes it
      // by its tags; destroying with Terraform needs the AWS provider build, which
      // test/aws/emulator.test.ts runs under scripts/check-infra.sh.
      const bench = async (name: string, expiresAt: string, cidr: string) => {
        const tags = (type: string) => `ResourceType=${type},Tags=[{Key=Project,Value=loadgate},{Key=Bench,Value=${name}},{Key=ExpiresAt,Value=${expiresAt}}]`;
        const vpc = await aws('ec2', 'create-vpc', '--cidr-block', `${cidr}.0.0/16`, '--tag-specifications', tags('vpc'), '--query', 'Vpc.VpcId');
        const subnet = await aws(
          'ec2',
          'create-subnet',
          '--vpc-id',
          vpc,
          '--cidr-block',
          `${cidr}.1.0/24`,
          '--tag-specifications',
          tags('subnet'),
          '--query',
          'Subnet.SubnetId',
        );
        const group = await aws(
          'ec2',
          'create-security-group',
          '--vpc-id',
          vpc,
          '--group-name',
          `${name}-app`,
          '--description',
          'app nodes',
          '--tag-specifications',
          tags('security-group'),
          '--query',
          'GroupId',
        );
        const image = await aws('ec2', 'describe-images', '--owners', 'amazon', '--query', 'Images[0].ImageId');
        const instance = await aws(
          'ec2',
          'run-instances',
          '--image-id',
          image,
          '--instance-type',
          't3.micro',
          '--subnet-id',
          subnet,
          '--security-group-ids',
          group,
          '--tag-specifications',
          tags('instance'),
          '--query',
          'Instances[0].InstanceId',
        );
        return { vpc, subnet, group, instance };
      };
      await aws('s3api', 'create-bucket', '--bucket', 'chat-server-loadgate-state');
      const leaked = await bench('lg-4242-1', '2026-01-01T00:00:00Z', '10.42');
      const current = await bench('lg-4343-1', '2099-01-01T00:00:00Z', '10.43');
      // The sweep finds a bench's resources by the ARNs the tagging API lists, in AWS's form
      // (arn:aws:ec2:<region>:<account>:instance/i-…).
      const arns = await aws(
        'resourcegroupstaggingapi',
        'get-resources',
        '--tag-filters',
        'Key=Bench,Values=lg-4242-1',
        '--query',
        'ResourceTagMappingList[].ResourceARN',
      );
      for (const arn of arns.split(/\s+/).filter((a) => a.includes(':ec2:')))
        assert.match(arn, /^arn:aws:ec2:us-east-1:\d{12}:[a-z-]+\/[a-z]+-[0-9a-f]+$/, "EC2 ARNs in AWS's form");
      t.diagnostic(`moto's EC2 ARNs the shim rewrote: ${shim.rewritten}`);

      const logFile = logFileFor('janitor');
      const args = [
        ...actArgs(p, 'loadgate-janitor.yml', 'janitor.yml'),
        '--env',
        'GITHUB_REPOSITORY=mattermost-like/chat-server',
        '--env',
        `LOADGATE_ACT_CHECKOUT_REPOSITORY=${p.pin.repository}`,
        '--env',
        `LOADGATE_ACT_CHECKOUT_SOURCE=${p.release}`,
        // The bench environment's variables the janitor's caller needs (its first lines, docs/github.md step 4).
        '--var',
        'LOADGATE_AWS_ROLE_ARN=arn:aws:iam::123456789012:role/loadgate-bench',
        '--var',
        'LOADGATE_AWS_REGION=us-east-1',
        '--var',
        'LOADGATE_TF_STATE_BUCKET=chat-server-loadgate-state',
      ];
      const env = { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` };
      const { code } = await runLogged(ACT as string, args, { cwd: p.dir, logFile, timeoutMs: ACT_SHORT_TIMEOUT_MS, env });
      const where = `act exit ${code}, log: ${logFile}`;
      const log = readFileSync(logFile, 'utf8');
      assert.match(
        log,
        new RegExp(`checkout stand-in: ${p.pin.repository}@${p.pin.ref} -> \\.loadgate`),
        `the janitor checked loadgate out at the pinned ref (${where})`,
      );
      assert.equal(code, 0, `the sweep succeeded (${where})`);
      assert.match(log, /lg-4242-1 \(us-east-1\): expired at 2026-01-01T00:00:00\.000Z/);
      assert.match(log, /lg-4343-1 \(us-east-1\): expires 2099-01-01T00:00:00\.000Z, kept/);

      const state = (id: string) => aws('ec2', 'describe-instances', '--instance-ids', id, '--query', 'Reservations[0].Instances[0].State.Name');
      assert.equal(await state(leaked.instance), 'terminated', 'the leaked instance is terminated');
      assert.equal(
        await aws('ec2', 'describe-vpcs', '--filters', `Name=vpc-id,Values=${leaked.vpc}`, '--query', 'length(Vpcs)'),
        '0',
        'the leaked VPC is gone',
      );
      assert.equal(
        await aws('ec2', 'describe-security-groups', '--filters', `Name=group-id,Values=${leaked.group}`, '--query', 'length(SecurityGroups)'),
        '0',
        'its security group is gone',
      );
      assert.equal(await state(current.instance), 'running', 'the current bench is untouched');
      assert.equal(await aws('ec2', 'describe-vpcs', '--filters', `Name=vpc-id,Values=${current.vpc}`, '--query', 'length(Vpcs)'), '1');
    },
  );

  // Defect 6: a tag-triggered workflow runs from the tagged commit, so the caller and the
  // config must exist on every release branch; nothing said so. What the workflow does with
  // a release branch's config is walked below (the gate at a tag whose config differs).
  test('contract check of the docs: docs/github.md says the caller and config must be on every release branch a tag is cut from', () => {
    const docs = readFileSync(join(ROOT, 'docs', 'github.md'), 'utf8');
    assert.match(docs, /release branch/i, 'docs/github.md names release branches');
  });

  test(
    "the adopter's first week on the loopback AWS bench: a calibration after a config change, a gate at a release branch's tag, that inconclusive gate continued twice, a second product sharing the reports repository, an App without a permission",
    { skip: skipAct || skipAws, timeout: WALK_TIMEOUT_MS },
    (t) => firstWeek(t, shared.release, k6 as string),
  );
});
