/**
 * The adopter's first week, walked under act on the loopback AWS bench (test/e2e/adopter-act.test.ts
 * runs it): what a Mattermost release engineer does after the first gate, in order, each step
 * a workflow run of the product's shipped caller, each asserting what GitHub would then show.
 *
 * The products: acme/chat-server (product A), whose reports go to acme/perf-reports through a
 * GitHub App installed on both, and acme/push-proxy (product B), which shares that reports
 * repository with a reports-token. Their config is the loopback duet profile with the
 * shipped assumed model (`builtin:aws-mattermost-duet`) on another preset than it was made
 * for: a gate refuses it, which is when a calibration is run. Its tolerances are far below
 * the loopback bench's noise, so no gate can decide in a few duets: each ends inconclusive,
 * which is what a continuation is for.
 */
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noiseModelFileSchema } from '../../src/noise/schema.ts';
import { verdictFileSchema, type VerdictFile } from '../../src/results/verdict-schema.ts';
import { buildPlan } from '../../src/aws/bench-plan.ts';
import { parseGateConfig } from '../../src/config/load.ts';
import { parse } from 'yaml';
import { runLogged } from '../support/logged-process.ts';
import { ROOT, replacedActions } from '../support/act.ts';
import { awsGateSettings, startAwsActBench, type AwsActBench } from '../support/aws-act-bench.ts';
import { GitHubStandin, type CheckRunRecord } from '../support/github-standin/server.ts';
import { MACHINERY_TOLERANCES } from '../bench/aws/loopback-bench.ts';

const BASELINE = 'v10.12.0';
const CANDIDATE = 'v11.0.1-rc2';
const ADMIN = { email: 'sysadmin@chat-server.example', password: 'act-admin-password-0123456789' };
/** The runners' limit the products set (the least plan accepts for this profile's duet) and a run-job budget that leaves one duet per run job. */
const RUNNER_LIMIT_MINUTES = 47;
const JOB_BUDGET_SEC = 45;
const RUN_TIMEOUT_MS = 12 * 60_000;
const PRODUCT_A_TOKEN = 'act-token-chat-server-0123456789';
const PRODUCT_B_TOKEN = 'act-token-push-proxy-0123456789';
const REPORTS_PAT = 'github_pat_reports0123456789abcdefghij';

/**
 * The profile: a 15-second bounded test in duet, and tolerances of 0.05 % on the gating
 * averages. The loopback bench measures about 0.5 % per duet for them, and a check needs
 * the evidence of (σ/material change)² duets and more, so no gate of a few duets decides:
 * each ends inconclusive. (At 1 % two duets passed.) The rest as the machinery tests'
 * (test/bench/aws/loopback-bench.ts), so that nothing else gates.
 */
function weekConfig(o: { name?: string; noiseModel: string }): string {
  const tolerances = MACHINERY_TOLERANCES.replace(
    /^( {2}(?:apiAvg|storeAvg): )\{ tolerancePct: 100, noiseFloorPct: 100 \}$/gm,
    '$1{ tolerancePct: 0.05, noiseFloorPct: 0.05 }',
  ).replace(/^( {2}heap: )\{ tolerancePct: 100, noiseFloorPct: 100 \}$/m, '$1{ tolerancePct: 100, noiseFloorPct: 100, gating: false }');
  assert.match(tolerances, /apiAvg: \{ tolerancePct: 0\.05,/);
  return `version: 1
name: ${o.name ?? 'aws-week'}
dataset: Stand-in dataset, 40 users
target:
  system: mattermost
  versionPattern: '^v[0-9]+\\.[0-9]+\\.[0-9]+(-rc[0-9]+)?$'
mode: duet
bench:
  kind: aws
  aws: { preset: L.110, agentCount: 2, usersPerAgent: 20, maxEngineCpuPercent: 100 }
engine:
  kind: k6
  idle: { minimumMs: 200, averageMs: 600, rateMultiplier: 1 }
  actions: { SwitchChannel: 4, ScrollChannel: 2, CreatePost: 3, ViewThread: 1, AddReaction: 1, ViewGlobalThreads: 1, UnreadCheck: 1 }
repeats: 1
maxRepeats: 1
errorRates: { falseFailPct: 1, falsePassPct: 1 }
noiseModel: ${o.noiseModel}
tests:
  - type: bounded
    users: 6
    rampUp: 3s
    duration: 15s
${tolerances}`;
}

interface ProductRepo {
  name: string;
  dir: string;
  token: string;
  git: (...args: string[]) => string;
}

/** The shipped caller as docs/github.md has a team edit it: the reports repository uncommented, the runners' limit and run-job budget set. */
function caller(): string {
  const shipped = readFileSync(join(ROOT, 'examples', 'workflows', 'loadgate.yml'), 'utf8');
  const edited = shipped
    .replace(/^( {6})# reports-repository: acme\/perf-reports$/m, '$1reports-repository: acme/perf-reports')
    .replace(
      /^( {6})config: .*$/m,
      (line, indent: string) => `${line}\n${indent}runner-limit-minutes: ${RUNNER_LIMIT_MINUTES}\n${indent}run-job-budget: ${JOB_BUDGET_SEC}s`,
    );
  assert.match(edited, /^ {6}reports-repository: acme\/perf-reports$/m, 'the caller names the reports repository');
  assert.match(edited, /^ {6}runner-limit-minutes: 47$/m);
  return edited;
}

function productRepo(work: string, name: string, token: string, bench: AwsActBench): ProductRepo {
  const dir = join(work, name);
  mkdirSync(join(dir, '.github', 'workflows'), { recursive: true });
  writeFileSync(join(dir, '.github', 'workflows', 'loadgate.yml'), caller());
  writeFileSync(join(dir, '.github', 'loadgate.yml'), weekConfig({ noiseModel: 'builtin:aws-mattermost-duet' }));
  copyFileSync(bench.bench.usersFile, join(dir, '.github', 'loadgate-users.txt'));
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=release-lead', '-c', 'user.email=release-lead@acme.example', ...args], { cwd: dir, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-q', '-m', 'adopt loadgate');
  git('tag', BASELINE);
  return { name, dir, token, git };
}

/** One workflow run of a product's caller under act, with its own run id and artifact store. */
async function dispatch(
  w: { work: string; release: string; standin: GitHubStandin; bench: AwsActBench },
  p: ProductRepo,
  runId: number,
  inputs: Record<string, string>,
  extra: string[] = [],
): Promise<{ code: number | null; log: string; where: string }> {
  const runs = join(w.work, 'runs');
  const logFile = join(ROOT, 'tmp', `act-adopter-week-${runId}.log`);
  mkdirSync(join(ROOT, 'tmp'), { recursive: true });
  const caller = join(p.dir, '.github', 'workflows', 'loadgate.yml');
  const args = [
    'workflow_dispatch',
    '-W',
    '.github/workflows/loadgate.yml',
    '-P',
    'ubuntu-latest=-self-hosted',
    '--action-cache-path',
    join(w.work, 'act-cache'),
    '--local-repository',
    `loadgate/loadgate@v1=${w.release}`,
    ...replacedActions([caller, join(w.release, '.github', 'workflows', 'loadgate.yml')]),
    ...Object.entries(inputs).flatMap(([k, v]) => ['--input', `${k}=${v}`]),
    '--env',
    `GITHUB_RUN_ID=${runId}`,
    '--env',
    `GITHUB_API_URL=${w.standin.url}`,
    '--env',
    `GITHUB_REPOSITORY=acme/${p.name}`,
    '--env',
    `LOADGATE_ACT_WORKSPACE_SOURCE=${p.dir}`,
    '--env',
    'LOADGATE_ACT_CHECKOUT_REPOSITORY=loadgate/loadgate',
    '--env',
    `LOADGATE_ACT_CHECKOUT_SOURCE=${w.release}`,
    '--env',
    'LOADGATE_GITHUB_WRITE_INTERVAL_MS=0',
    '--env',
    `LOADGATE_ACT_SHARE=${join(runs, String(runId), 'share')}`,
    '--env',
    `LOADGATE_ACT_ARTIFACTS=${join(runs, String(runId))}`,
    '--env',
    `LOADGATE_ACT_RUNS=${runs}`,
    '--env',
    `LOADGATE_CACHE_DIR=${process.env.LOADGATE_CACHE_DIR ?? join(ROOT, '.cache', 'loadgate')}`,
    '-s',
    `GITHUB_TOKEN=${p.token}`,
    ...awsGateSettings(w.bench, ADMIN),
    ...extra,
  ];
  const { code } = await runLogged(process.env.ACT_BIN ?? join(ROOT, '.cache', 'bin', 'act'), args, {
    cwd: p.dir,
    logFile,
    timeoutMs: RUN_TIMEOUT_MS,
    env: w.bench.env,
  });
  return { code, log: readFileSync(logFile, 'utf8'), where: `act exit ${code}, log: ${logFile}` };
}

/** The GitHub App secrets and variable a product sets (docs/github.md, "A GitHub App"). */
const appSettings = (app: { clientId: string; privateKey: string }) => [
  '--var',
  `LOADGATE_APP_CLIENT_ID=${app.clientId}`,
  '-s',
  `LOADGATE_APP_PRIVATE_KEY=${app.privateKey}`,
];

/** The report of a comparison on a branch of the reports repository, parsed. */
function reportOn(reports: GitHubStandin, product: string): { files: Map<string, Buffer>; verdict: VerdictFile } {
  const slug = `acme/${product}/${BASELINE}-vs-${CANDIDATE}`;
  const files = reports.filesOnBranch(`perf-report/${slug}`);
  const bytes = files.get(`reports/${slug}/verdict.json`);
  assert.ok(
    bytes,
    `the report of ${product} on perf-report/${slug} of acme/perf-reports: ${[...files.keys()].filter((f) => f.startsWith('reports/')).join(', ')}`,
  );
  return { files, verdict: verdictFileSchema.parse(JSON.parse(bytes.toString('utf8'))) };
}

/** The continuation the check run advises (its gh command), as its inputs. */
function advisedContinuation(run: CheckRunRecord | undefined): { continueFrom: string; maxRepeats: number; priceUsd: string } {
  const text = run?.output.summary ?? '';
  const m = /-f continue-from=(\d+) -f max-repeats=(\d+)\n/.exec(text);
  const price = /At most about \$(\d+\.\d\d) and/.exec(text);
  assert.ok(m && price, `the check run advises a continuation and its price:\n${text}`);
  return { continueFrom: m[1] as string, maxRepeats: Number(m[2]), priceUsd: price[1] as string };
}

/** What `loadgate plan` prices a bench of `pairs` new pairs of the config at `at` for: the worst case provisioning budgets. */
function planPrice(p: ProductRepo, at: string, pairs: number): string {
  const config = parseGateConfig(parse(p.git('show', `${at}:.github/loadgate.yml`)), 'config');
  return buildPlan({ ...config, maxRepeats: pairs, repeats: Math.min(config.repeats, pairs) }, { dbSource: 'empty' }).cost.totalUsd.toFixed(2);
}

/** The worst-case total provisioning's `loadgate plan` printed in this run's log. */
function provisionedPrice(log: string): string {
  const m = /Provision the AWS bench[^\n]*\|\s+total\s+\$(\d+\.\d\d)\s*$/m.exec(log);
  assert.ok(m, 'provision-aws printed the plan with its total');
  return m[1] as string;
}

/** check-inputs' outputs, as the prepare job printed them. */
function checkedInputs(log: string): Record<string, unknown> {
  const m = /Validate inputs and start the check run[^\n]*\|\s+(\{"mode":.*\})\s*$/m.exec(log);
  assert.ok(m, 'prepare printed the checked inputs');
  return JSON.parse(m[1] as string) as Record<string, unknown>;
}

/** How many duets a run drove: each starts both slots' agent groups once. */
function duetsIn(b: AwsActBench, fromMs: number, toMs: number): number {
  return b.bench.calls.filter((c) => c.cmd === 'loadgate-agent' && c.args[0] === 'start-k6' && (c.atMs ?? 0) >= fromMs && (c.atMs ?? 0) < toMs).length / 2;
}

export async function firstWeek(t: TestContext, release: string, k6: string): Promise<void> {
  const bench = await startAwsActBench(t, k6, { admin: ADMIN });
  const work = await mkdtemp(join(tmpdir(), 'loadgate-adopter-week-'));
  t.after(() => rm(work, { recursive: true, force: true }));
  const a = productRepo(work, 'chat-server', PRODUCT_A_TOKEN, bench);
  const b = productRepo(work, 'push-proxy', PRODUCT_B_TOKEN, bench);
  const standin = new GitHubStandin({
    owner: 'acme',
    repo: 'chat-server',
    tokens: {
      [PRODUCT_A_TOKEN]: { permissions: { checks: 'write', contents: 'write', 'pull-requests': 'write' }, actions: true },
      [PRODUCT_B_TOKEN]: { permissions: { checks: 'write', contents: 'write', 'pull-requests': 'write' }, actions: true, repositories: ['acme/push-proxy'] },
      // A fine-grained token with contents and pull-requests write on the reports repository alone.
      [REPORTS_PAT]: { permissions: { contents: 'write', 'pull-requests': 'write' }, repositories: ['acme/perf-reports'] },
    },
    apps: [
      {
        clientId: 'Iv23liAcmeLoadgate',
        id: 9101,
        slug: 'acme-loadgate',
        permissions: { checks: 'write', contents: 'write', pull_requests: 'write' },
        installations: [{ id: 71, account: 'acme', repositories: ['chat-server', 'perf-reports'] }],
      },
      // Set up without pull requests: the permission the report pull request needs.
      {
        clientId: 'Iv23liAcmeLimited',
        id: 9102,
        slug: 'acme-limited',
        permissions: { checks: 'write', contents: 'write' },
        installations: [{ id: 72, account: 'acme', repositories: 'all' }],
      },
    ],
  });
  const reports = standin.addRepository({ owner: 'acme', repo: 'perf-reports' });
  const pushProxy = standin.addRepository({ owner: 'acme', repo: 'push-proxy' });
  await standin.start();
  t.after(() => standin.close());
  const [app, limited] = standin.apps as [(typeof standin.apps)[number], (typeof standin.apps)[number]];
  const w = { work, release, standin, bench };
  const sync = () => {
    standin.importGit(a.dir);
    pushProxy.importGit(b.dir);
  };

  // A release branch is where the calibration is dispatched: its config is the one measured.
  // It has a commit of its own (act would take a tag on the dispatched commit for its ref).
  a.git('checkout', '-q', '-b', 'release-11.0');
  writeFileSync(join(a.dir, 'RELEASE'), '11.0\n');
  a.git('add', 'RELEASE');
  a.git('commit', '-q', '-m', 'release-11.0 branch');
  sync();

  await t.test(
    'calibrate after a config change: the assumed model is refused for a gate, but not for the calibration that replaces it, which runs across the AWS run jobs and opens its pull request against the dispatched branch',
    async () => {
      // What a gate's first job says of this config, with the release's CLI: the model is refused.
      const gate = spawnSync(process.execPath, [join(release, 'dist', 'loadgate.js'), 'check-inputs', '--json'], {
        cwd: a.dir,
        encoding: 'utf8',
        env: {
          ...process.env,
          INPUT_CANDIDATE: CANDIDATE,
          INPUT_BASELINE: BASELINE,
          INPUT_CONFIG: '.github/loadgate.yml',
          GITHUB_EVENT_PATH: '',
          GITHUB_REF: '',
        },
      });
      assert.equal(gate.status, 3, gate.stdout + gate.stderr);
      assert.match(
        gate.stderr,
        /aws-mattermost-duet\.json: noise model is of another bench \(bench\.aws\.preset: the model's "perfcomp", the config's "L\.110".*calibrate on this bench \(loadgate calibrate\)/,
      );
      const startMs = Date.now();
      const run = await dispatch(w, a, 1001, { mode: 'calibrate', candidate: BASELINE, repeats: '3' });
      assert.equal(run.code, 0, run.where);
      assert.deepEqual(standin.rejected, [], `requests rejected by GitHub's OpenAPI schema (${run.where})`);
      assert.equal(standin.checkRuns.length, 0, 'a calibration is not a verdict: no check run');
      const jobs = [...new Set(bench.tools.calls.filter((c) => c.tool === 'aws' && c.args[0] === 'ssm' && c.atMs >= startMs).map((c) => c.job))];
      assert.deepEqual(
        jobs,
        ['run-aws-1', 'run-aws-2', 'run-aws-3'],
        `the three A/A duets (the least a duet model is measured from) ran one per run job, each resuming (${run.where})`,
      );
      assert.equal(duetsIn(bench, startMs, Date.now()), 3);
      const pull = standin.pulls.find((pr) => pr.head === `loadgate-calibration/${BASELINE}`);
      assert.equal(pull?.base, 'release-11.0', 'against the branch it was dispatched on');
      assert.match(pull?.title ?? '', /noise model calibrated with v10\.12\.0 \(3 A\/A pairs\)/);
      const model = noiseModelFileSchema.parse(
        JSON.parse(standin.filesOnBranch(`loadgate-calibration/${BASELINE}`).get('.github/loadgate-noise.json')?.toString('utf8') ?? 'null'),
      );
      assert.ok(
        model.entries.some((e) => e.kind === 'measured'),
        'a measured model',
      );
      assert.equal(model.profile.name, 'aws-week');
      // The adopter merges it into the release branch, sets noiseModel as the pull request says,
      // and cuts the candidate there. The default branch keeps the assumed model.
      writeFileSync(
        join(a.dir, '.github', 'loadgate-noise.json'),
        standin.filesOnBranch(`loadgate-calibration/${BASELINE}`).get('.github/loadgate-noise.json') as Buffer,
      );
      writeFileSync(join(a.dir, '.github', 'loadgate.yml'), weekConfig({ noiseModel: 'loadgate-noise.json' }));
      a.git('add', '.');
      a.git('commit', '-q', '-m', 'noise model calibrated with v10.12.0');
      writeFileSync(join(a.dir, 'VERSION'), `${CANDIDATE}\n`);
      a.git('add', 'VERSION');
      a.git('commit', '-q', '-m', `release ${CANDIDATE}`);
      a.git('tag', CANDIDATE);
      // Product B runs the same profile on the same bench: it takes the same model.
      copyFileSync(join(a.dir, '.github', 'loadgate-noise.json'), join(b.dir, '.github', 'loadgate-noise.json'));
      writeFileSync(join(b.dir, '.github', 'loadgate.yml'), weekConfig({ noiseModel: 'loadgate-noise.json' }));
      writeFileSync(join(b.dir, 'VERSION'), `${CANDIDATE}\n`);
      b.git('add', '.');
      b.git('commit', '-q', '-m', `release ${CANDIDATE}`);
      b.git('tag', CANDIDATE);
      // A gate is dispatched from the default branch, as `gh workflow run` does.
      a.git('checkout', '-q', 'main');
      sync();
    },
  );

  let first: ReturnType<typeof advisedContinuation> | undefined;
  const candidateSha = () => a.git('rev-parse', `${CANDIDATE}^{commit}`);

  await t.test(
    "a gate at the candidate tag reads the release branch's config there, mints every App token before the bench, and sends its report to the reports repository",
    async () => {
      const run = await dispatch(w, a, 2001, { candidate: CANDIDATE, baseline: BASELINE }, appSettings(app));
      assert.deepEqual(standin.rejected, [], run.where);
      assert.deepEqual(standin.unmatched, [], run.where);
      const checks = standin.checkRuns.filter((r) => r.head_sha === candidateSha());
      assert.equal(checks.length, 1, `one check run on the candidate (${run.where})`);
      assert.deepEqual(
        [checks[0]?.status, checks[0]?.conclusion, checks[0]?.app.slug],
        ['completed', 'action_required', 'acme-loadgate'],
        checks[0]?.output.title ?? '',
      );
      const { verdict } = reportOn(reports, 'chat-server');
      // The default branch's config names the assumed model, which this preset refuses: the
      // gate judged with the calibrated one, so it read the config at the tag.
      assert.deepEqual(
        [verdict.verdict, verdict.decision.pairs, verdict.decision.noiseModel.path, verdict.decision.noiseModel.kind],
        ['inconclusive', 1, 'loadgate-noise.json', 'measured'],
      );
      assert.equal(verdict.problems.length, 0, 'undecided, not broken: a continuation is the advice');
      assert.deepEqual(
        reports.pulls.map((pr) => [pr.head, pr.openedBy]),
        [[`perf-report/acme/chat-server/${BASELINE}-vs-${CANDIDATE}`, 'acme-loadgate']],
      );
      assert.equal(standin.pulls.filter((pr) => pr.head.startsWith('perf-report/')).length, 0, 'no report pull request in the product repository');
      // Every token publish needs was minted in prepare, before the apply.
      const applyAt =
        bench.tools.calls.find(
          (c) => c.tool === 'terraform' && c.args.includes('apply') && c.job === 'provision-aws' && c.atMs > (standin.minted[0]?.atMs ?? 0),
        )?.atMs ?? 0;
      const before = standin.minted.filter((m) => m.atMs < applyAt).map((m) => `${m.repositories.join(',')}:${m.permissions['pull_requests'] ?? '-'}`);
      assert.ok(before.includes('acme/chat-server:write') && before.includes('acme/perf-reports:write'), `minted before the bench: ${before.join('; ')}`);
      first = advisedContinuation(checks[0]);
      assert.equal(first.continueFrom, '2001', "the advice names this run's id");
    },
  );

  // The adopter follows the check run's command, one more pair at a time (what the advice's
  // own figure costs is checked against the plan in test/github/next-steps.test.ts).
  for (const [runId, from, cap, reused] of [
    [2002, 2001, 2, 1],
    [2003, 2002, 3, 2],
  ] as const) {
    await t.test(
      `continuation of run ${from} to ${cap} pairs: the ${reused} pair${reused === 1 ? '' : 's'} it ran are reused, and the bench is planned, budgeted and run for the one new pair`,
      async () => {
        const startMs = Date.now();
        const run = await dispatch(
          w,
          a,
          runId,
          { candidate: CANDIDATE, baseline: BASELINE, 'continue-from': String(from), 'max-repeats': String(cap) },
          appSettings(app),
        );
        assert.deepEqual(standin.rejected, [], run.where);
        const inputs = checkedInputs(run.log);
        assert.deepEqual([inputs['earlier-pairs'], inputs['new-pairs-at-most']], [reused, 1], `check-inputs counted the earlier gate's pairs (${run.where})`);
        assert.equal(provisionedPrice(run.log), planPrice(a, CANDIDATE, 1), 'provisioning budgeted one new pair');
        assert.equal(duetsIn(bench, startMs, Date.now()), 1, 'one duet ran; none was redone');
        const { verdict } = reportOn(reports, 'chat-server');
        assert.deepEqual([verdict.verdict, verdict.decision.pairs], ['inconclusive', cap], 'the report counts every pair');
        const check = standin.checkRuns.filter((r) => r.head_sha === candidateSha()).at(-1);
        assert.deepEqual([check?.status, check?.conclusion], ['completed', 'action_required']);
        assert.equal(advisedContinuation(check).continueFrom, String(runId));
      },
    );
  }

  await t.test(
    'a GitHub App without a permission stops the second product before the bench, and its check run still completes, saying why; with a reports-token no App token is minted for the reports repository',
    async () => {
      const applies = bench.tools.terraform.filter((r) => r.command === 'apply').length;
      const minted = standin.minted.length;
      const run = await dispatch(w, b, 3001, { candidate: CANDIDATE, baseline: BASELINE }, [
        ...appSettings(limited),
        '-s',
        `LOADGATE_REPORTS_TOKEN=${REPORTS_PAT}`,
      ]);
      assert.notEqual(run.code, 0, run.where);
      assert.equal(bench.tools.terraform.filter((r) => r.command === 'apply').length, applies, 'nothing was provisioned');
      const checks = pushProxy.checkRuns.filter((r) => r.name === 'loadgate');
      assert.equal(checks.length, 1, run.where);
      assert.deepEqual([checks[0]?.status, checks[0]?.conclusion, checks[0]?.app.slug], ['completed', 'action_required', 'acme-limited']);
      assert.match(checks[0]?.output.summary ?? '', /could not mint the publish job's token \(checks, contents and pull-requests write on acme\/push-proxy/);
      assert.match(run.log, /The permissions requested are not granted to this installation/, "GitHub's answer is in the step's log");
      assert.deepEqual(
        standin.minted.slice(minted).filter((m) => m.repositories.includes('acme/perf-reports')),
        [],
        'no App token for the reports repository',
      );
    },
  );

  await t.test(
    'the second product gates the same version labels into the shared reports repository: each report keeps its own branch, directory and pull request',
    async () => {
      const productA = reports.branchHead(`perf-report/acme/chat-server/${BASELINE}-vs-${CANDIDATE}`);
      const run = await dispatch(w, b, 3002, { candidate: CANDIDATE, baseline: BASELINE }, ['-s', `LOADGATE_REPORTS_TOKEN=${REPORTS_PAT}`]);
      assert.deepEqual(standin.rejected, [], run.where);
      const check = pushProxy.checkRuns.filter((r) => r.name === 'loadgate').at(-1);
      assert.deepEqual([check?.status, check?.conclusion], ['completed', 'action_required'], run.where);
      assert.equal(reportOn(reports, 'push-proxy').verdict.decision.pairs, 1);
      assert.deepEqual(reports.pulls.map((pr) => pr.head).sort(), [
        `perf-report/acme/chat-server/${BASELINE}-vs-${CANDIDATE}`,
        `perf-report/acme/push-proxy/${BASELINE}-vs-${CANDIDATE}`,
      ]);
      assert.equal(reports.branchHead(`perf-report/acme/chat-server/${BASELINE}-vs-${CANDIDATE}`), productA, "the first product's report is untouched");
      assert.equal(reportOn(reports, 'chat-server').verdict.decision.pairs, 3);
      assert.equal(bench.bench.runningK6(), 0, 'the load is stopped');
    },
  );
}
