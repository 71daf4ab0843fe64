/**
 * The run jobs' budget (src/aws/job-limits.ts jobBudgetSec): the runner's limit less the
 * 20 minutes kept per job, or a lower run-job-budget. `prepare` (inputs.sh, through
 * `loadgate check-inputs`) refuses a bad one before anything is provisioned; each run job
 * (run.sh) passes the limit and the budget to `loadgate run --runner-limit --job-budget`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  JOB_MARGIN_SEC,
  jobBudgetSec,
  planJobs,
  PROVISION_JOB_TIMEOUT_MINUTES,
  TEARDOWN_JOB_TIMEOUT_MINUTES,
  WORKFLOW_RUN_JOBS,
} from '../../src/aws/job-limits.ts';
import { parse } from 'yaml';
import { estimateDuration, RUN_SETUP_SEC, TIMING_SEC } from '../../src/aws/cost.ts';
import { resolveBench } from '../../src/aws/presets.ts';
import { SetupTimes } from '../../src/bench/aws/aws-gate-bench.ts';
import { awsGate } from './fixtures.ts';
import { loadGateConfig } from '../../src/config/load.ts';
import { validateGateInputs } from '../../src/inputs/validate.ts';
import { parseRunOptions, usage as runUsage } from '../../src/run/options.ts';
import { runCli } from '../support/cli.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const INPUTS = join(ROOT, 'action', 'lib', 'inputs.sh');
const CONFIG = 'test/github/fixtures/gate.yml';
const CANDIDATE = 'v1.3.0-rc1';
const RUN = ['run', '--config', 'examples/local-synapse.yml', '--baseline', '1.162.0', '--candidate', '1.163.2', '--out', 'reports/x'];
const INPUT_NAMES = { limit: 'runner-limit-minutes', budget: 'run-job-budget' };

/** The budget check-inputs derives from the two workflow inputs (with a valid candidate). */
function inputBudget(limit: string, asked: string): number {
  return validateGateInputs({ candidate: CANDIDATE, runnerLimitMinutes: limit, runJobBudget: asked }).runJobBudgetSec;
}

test('the default budget is the runner limit less the margin the plan keeps', () => {
  for (const limit of [30, 45, 360, 7200]) {
    assert.equal(jobBudgetSec(limit), limit * 60 - JOB_MARGIN_SEC);
    assert.equal(inputBudget(String(limit), ''), limit * 60 - JOB_MARGIN_SEC);
  }
  assert.equal(inputBudget('', ''), 360 * 60 - JOB_MARGIN_SEC, 'empty: GitHub-hosted');
});

test('at its edges: exactly the limit less 20 minutes is accepted, one second more and 0 are refused, naming both settings', () => {
  const most = 45 * 60 - JOB_MARGIN_SEC;
  assert.equal(jobBudgetSec(45, most), most);
  assert.equal(jobBudgetSec(45, 1), 1);
  assert.throws(
    () => jobBudgetSec(45, most + 1),
    (e: Error) =>
      e.name === 'InputError' &&
      /^--job-budget: 25m1s is longer than --runner-limit allows; .*at most 25m \(1500s: --runner-limit 45 less 20m per job for set-up\)/.test(e.message),
  );
  assert.throws(() => jobBudgetSec(45, 0), /^InputError: --job-budget: must be above 0; /);
  assert.throws(() => jobBudgetSec(45, most + 1, INPUT_NAMES), /^InputError: run-job-budget: .*runner-limit-minutes 45 less 20m .*leave run-job-budget unset/);
});

test('run-job-budget in loadgate duration syntax: plain digits are seconds, anything else is refused naming the input', () => {
  assert.deepEqual(
    [
      inputBudget('45', '140s'),
      inputBudget('45', '90'),
      inputBudget('360', '4h30m'),
      inputBudget('360', '1h5m30s'),
      inputBudget('45', '25m'),
      inputBudget('45', '1500'),
    ],
    [140, 90, 16200, 3930, 1500, 1500],
  );
  for (const asked of ['1501', '25m1s', '26m', '0', '0s', '1.5m', '5x', '1m1h', '$(id)', ' 90', '90 ', '-5', '1e3']) {
    assert.throws(
      () => inputBudget('45', asked),
      /^InputError: run-job-budget: .*at most 25m \(1500s: runner-limit-minutes 45 less 20m per job for set-up\)/,
      asked,
    );
  }
  for (const limit of ['29', '7201', '0x3c', '45.5', ' 45', '$(id)']) {
    assert.throws(() => inputBudget(limit, ''), /^InputError: runner-limit-minutes: .* is not a job limit; give whole minutes from 30 to 7200/, limit);
  }
});

test('check-inputs refuses a bad run-job-budget (exit 3, the input and the fix named) and writes no output', async () => {
  const temp = mkdtempSync(join(tmpdir(), 'loadgate-budget-'));
  try {
    const output = join(temp, 'out');
    writeFileSync(output, '');
    const env = { INPUT_CANDIDATE: CANDIDATE, INPUT_CONFIG: CONFIG, INPUT_RUNNER_LIMIT_MINUTES: '45', GITHUB_OUTPUT: output, GITHUB_EVENT_PATH: undefined };
    const bad = await runCli(['check-inputs', '--github-output'], { ...env, INPUT_RUN_JOB_BUDGET: '1.5m' });
    assert.equal(bad.code, 3, bad.err);
    assert.match(
      bad.err,
      /^loadgate check-inputs: run-job-budget: "1\.5m" is not a duration; give a duration such as 4h30m, 90s or 90 \(seconds\), above 0 and at most 25m \(1500s/m,
    );
    assert.equal(readFileSync(output, 'utf8'), '');
    const flag = await runCli(['check-inputs', '--runner-limit-minutes', '45', '--run-job-budget', '25m1s', '--candidate', CANDIDATE, '--config', CONFIG], {
      GITHUB_EVENT_PATH: undefined,
    });
    assert.equal(flag.code, 3);
    assert.match(flag.err, /run-job-budget: 25m1s is longer than runner-limit-minutes allows/);
    const ok = await runCli(['check-inputs', '--json'], { ...env, INPUT_RUN_JOB_BUDGET: '90' });
    assert.equal(ok.code, 0, ok.err);
    assert.equal(JSON.parse(ok.out).candidate, CANDIDATE);
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
});

test('prepare (inputs.sh) refuses a bad run-job-budget with exit 3 before anything else', () => {
  const temp = mkdtempSync(join(tmpdir(), 'loadgate-budget-'));
  try {
    const output = join(temp, 'out');
    const env = {
      PATH: process.env.PATH,
      RUNNER_TEMP: temp,
      GITHUB_OUTPUT: output,
      INPUT_CANDIDATE: CANDIDATE,
      INPUT_BASELINE: 'v1.2.0',
      INPUT_CONFIG: CONFIG,
      INPUT_RUNNER_LIMIT_MINUTES: '45',
    };
    for (const asked of ['30m', '$(id)']) {
      writeFileSync(output, '');
      const r = spawnSync('bash', [INPUTS], { cwd: ROOT, encoding: 'utf8', env: { ...env, INPUT_RUN_JOB_BUDGET: asked } });
      assert.equal(r.status, 3, r.stderr);
      assert.match(r.stderr, /loadgate check-inputs: run-job-budget: .*at most 25m \(1500s: runner-limit-minutes 45 less 20m per job for set-up\)/);
      assert.equal(r.stdout, '', 'no inputs printed');
      assert.equal(readFileSync(output, 'utf8'), '', 'no step output written');
    }
    // A plain number of seconds, which the shell copy of the parser used to refuse.
    writeFileSync(output, '');
    const ok = spawnSync('bash', [INPUTS], { cwd: ROOT, encoding: 'utf8', env: { ...env, INPUT_RUN_JOB_BUDGET: '90' } });
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(readFileSync(output, 'utf8'), /^candidate=v1\.3\.0-rc1$/m);
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
});

test('loadgate run --runner-limit: the limit less 20 minutes, or a lower --job-budget; --job-budget alone as before', async () => {
  const parse = (...flags: string[]) => parseRunOptions([...RUN.slice(1), ...flags]).then((o) => o.jobBudgetSec);
  assert.equal(await parse('--runner-limit', '45'), 1500);
  assert.equal(await parse('--runner-limit', '45', '--job-budget', '140s'), 140);
  assert.equal(await parse('--runner-limit', '45', '--job-budget', '90'), 90);
  assert.equal(await parse('--runner-limit', '45', '--job-budget', '25m'), 1500);
  assert.equal(await parse('--job-budget', '90'), 90);
  assert.equal(await parse('--job-budget', '26m'), 1560, 'without --runner-limit the budget is not capped');
  assert.equal(await parse(), undefined);
  await assert.rejects(
    parse('--runner-limit', '45', '--job-budget', '25m1s'),
    /^InputError: --job-budget: 25m1s is longer than --runner-limit allows; .*at most 25m \(1500s: --runner-limit 45/,
  );
  await assert.rejects(parse('--runner-limit', '45', '--job-budget', '0'), /--job-budget: expected a duration above 0/);
  await assert.rejects(parse('--runner-limit', '45', '--job-budget', '1m1h'), /--job-budget: expected a duration such as/);
  assert.match(runUsage, /--runner-limit <minutes>/);
});

test('run refuses a budget above the limit through the CLI (exit 3), and --runner-limit follows the rules of plan --runner-limit', async () => {
  const over = await runCli([...RUN, '--runner-limit', '45', '--job-budget', '26m']);
  assert.equal(over.code, 3);
  assert.match(over.err, /^loadgate run: --job-budget: 26m is longer than --runner-limit allows/);
  for (const [limit, message] of [
    ['29', 'at least 30 minutes'],
    ['7201', 'at most 7200 minutes'],
    ['45.5', 'expected whole minutes'],
    ['x', 'expected whole minutes'],
    ['0x3c', 'expected whole minutes'],
    ['1e2', 'expected whole minutes'],
    [' 60', 'expected whole minutes'],
    ['', 'expected whole minutes'],
  ]) {
    const run = await runCli([...RUN, '--runner-limit', limit as string]);
    const plan = await runCli(['plan', '--config', 'examples/aws-mattermost-sequential.yml', '--runner-limit', limit as string]);
    assert.deepEqual([run.code, plan.code], [3, 3], limit);
    assert.match(run.err, new RegExp(`^loadgate run: --runner-limit: ${message}`), limit);
    assert.match(plan.err, new RegExp(`^loadgate plan: --runner-limit: ${message}`), limit);
  }
});

test('run.sh passes runner-limit-minutes and job-budget to loadgate run as arguments, and refuses job-budget alone', () => {
  const temp = mkdtempSync(join(tmpdir(), 'loadgate-budget-'));
  try {
    // The action's scripts with a stand-in bundle that records its arguments.
    cpSync(join(ROOT, 'action', 'lib'), join(temp, 'action', 'lib'), { recursive: true });
    mkdirSync(join(temp, 'dist'));
    const argvFile = join(temp, 'argv.json');
    writeFileSync(join(temp, 'dist', 'loadgate.js'), `require('fs').writeFileSync(${JSON.stringify(argvFile)}, JSON.stringify(process.argv.slice(2)));\n`);
    writeFileSync(join(temp, 'package.json'), '{"type":"commonjs"}\n');
    chmodSync(join(temp, 'action', 'lib', 'run.sh'), 0o755);
    const runSh = (extra: Record<string, string>) =>
      spawnSync('bash', [join(temp, 'action', 'lib', 'run.sh')], {
        cwd: temp,
        encoding: 'utf8',
        env: {
          PATH: process.env.PATH,
          RUNNER_TEMP: join(temp, 'runner'),
          GITHUB_OUTPUT: join(temp, 'out'),
          LG_CONFIG: 'gate.yml',
          LG_BASELINE: 'v1',
          LG_CANDIDATE: 'v2',
          LG_OUT: 'report',
          ...extra,
        },
      });
    const base = ['run', '--config', 'gate.yml', '--baseline', 'v1', '--candidate', 'v2', '--out', 'report'];
    let r = runSh({ LG_RUNNER_LIMIT_MINUTES: '45', LG_JOB_BUDGET: '$(id)' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(readFileSync(argvFile, 'utf8')), [...base, '--resume', '--runner-limit', '45', '--job-budget', '$(id)']);
    r = runSh({ LG_RUNNER_LIMIT_MINUTES: '45' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(readFileSync(argvFile, 'utf8')), [...base, '--resume', '--runner-limit', '45']);
    rmSync(argvFile);
    r = runSh({ LG_JOB_BUDGET: '90' });
    assert.equal(r.status, 3);
    assert.match(r.stderr, /::error::job-budget: applies only with runner-limit-minutes/);
    assert.throws(() => readFileSync(argvFile), /ENOENT/, 'loadgate did not run');
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
});

test("the job split counts every run's set-up (stop, restore, migrations, agents, collection): a run that fits only without it goes to the next job", async () => {
  // The stated set-up, step by step; the plan adds it to every run.
  assert.deepEqual(Object.keys(RUN_SETUP_SEC), ['stop', 'restore', 'install', 'start', 'agents', 'windDown']);
  assert.equal(
    TIMING_SEC.runOverhead,
    Object.values(RUN_SETUP_SEC).reduce((a, b) => a + b, 0),
  );
  assert.ok(TIMING_SEC.runOverhead >= 20 * 60, 'a restore and a migrating start are more than the 5 minutes of a build switch');
  // Two 40-minute bounded runs fit a 2 h job's 100 minutes, with a 5-minute build switch each too; with their set-up they do not.
  const config = awsGate({}, { maxRepeats: 2, tests: [{ type: 'bounded', users: 7500, rampUp: '15m', duration: '40m' }] });
  const duration = estimateDuration(config, resolveBench(config.bench.aws, config.tests), 'snapshot');
  assert.ok(duration.runs.every((r) => r.seconds === 40 * 60 + TIMING_SEC.runOverhead));
  const jobs = planJobs(config, duration, 120);
  const budget = jobBudgetSec(120);
  assert.ok(2 * (40 * 60 + 5 * 60) <= budget && 2 * (40 * 60 + TIMING_SEC.runOverhead) > budget, 'the case the set-up decides');
  assert.equal(jobs.runJobs, 4, 'one run per job');
  for (const job of jobs.jobs) assert.ok(job.seconds <= budget, `${job.name}: ${job.seconds} s, set-up included, within ${budget} s`);
  // The shipped example's worst case still fits the workflow's run jobs, set-up included.
  const shipped = await loadGateConfig('examples/aws-mattermost-sequential.yml');
  const example = planJobs(shipped, estimateDuration(shipped, resolveBench(shipped.bench.aws, shipped.tests), 'dump'));
  assert.ok(example.runJobs <= WORKFLOW_RUN_JOBS, `${example.runJobs} run jobs`);
  for (const job of example.jobs) assert.ok(job.seconds <= jobBudgetSec(360), `${job.name}: ${job.seconds} s`);
});

test('a runner limit that the set-up alone fills is refused with the limit that fits, not a test duration of 0', () => {
  const config = { ...awsGate({}, { tests: [{ type: 'bounded', users: 7500, rampUp: '30s', duration: '1m' }] }), mode: 'duet' as const };
  const duration = estimateDuration(config, resolveBench(config.bench.aws, config.tests), 'empty');
  const run = duration.runs[0]?.seconds ?? 0;
  assert.equal(run, 60 + TIMING_SEC.runOverhead + RUN_SETUP_SEC.restore, "a duet: one run's set-up and a second restore");
  // 45 minutes less the 20 kept per job is 25, under the duet's 26.5-minute set-up.
  assert.throws(
    () => planJobs(config, duration, 45),
    new RegExp(
      `tests\\[0\\]\\.duration: .*Its set-up alone \\(26m30s\\) leaves no time for the test: the limit must be at least ${Math.ceil((run + JOB_MARGIN_SEC) / 60)} minutes`,
    ),
  );
  assert.doesNotThrow(() => planJobs(config, duration, Math.ceil((run + JOB_MARGIN_SEC) / 60)));
});

test('at run time the AWS bench budgets the longest set-up its job has measured, so a slower-than-stated restore still stops the job in time', () => {
  const times = new SetupTimes();
  assert.equal(times.budgetSec(), 0, "before the first run: the plan's split is the guarantee");
  times.record(1290.2);
  times.record(900);
  assert.equal(times.budgetSec(), 1291);
  times.record(3600);
  assert.equal(times.budgetSec(), 3600, 'a migration that took an hour is budgeted for the next run');
  times.record(Number.NaN);
  assert.equal(times.budgetSec(), 3600);
});

test("plan books the provision job's release wait and apply against its own timeout-minutes, and the dump load in the first run job", async () => {
  const workflow = parse(readFileSync(join(ROOT, '.github', 'workflows', 'loadgate.yml'), 'utf8')) as { jobs: Record<string, { 'timeout-minutes'?: unknown }> };
  assert.equal(
    workflow.jobs['provision-aws']?.['timeout-minutes'],
    PROVISION_JOB_TIMEOUT_MINUTES,
    "the workflow's provision job has the limit plan books against",
  );
  assert.equal(workflow.jobs.teardown?.['timeout-minutes'], TEARDOWN_JOB_TIMEOUT_MINUTES);
  const shipped = await loadGateConfig('examples/aws-mattermost.yml');
  const duration = estimateDuration(shipped, resolveBench(shipped.bench.aws, shipped.tests, shipped.mode), 'dump');
  const jobs = planJobs(shipped, duration);
  const provision = jobs.jobs[0]!;
  // An rc tag's tarball is waited for (30 minutes), then the apply builds the network, the nodes and Aurora.
  assert.deepEqual(provision.parts, [
    { what: 'release wait', seconds: 30 * 60 },
    { what: 'apply', seconds: TIMING_SEC.networkAndNodes + TIMING_SEC.auroraCreate },
  ]);
  assert.equal(provision.limitMinutes, PROVISION_JOB_TIMEOUT_MINUTES);
  assert.ok(provision.seconds <= PROVISION_JOB_TIMEOUT_MINUTES * 60 - JOB_MARGIN_SEC);
  const first = jobs.jobs[1]!;
  assert.deepEqual(first.parts, [{ what: 'dump load', seconds: TIMING_SEC.dumpLoad }]);
  assert.equal(first.seconds, TIMING_SEC.dumpLoad + (first.runs ?? []).reduce((sum, r) => sum + r.seconds, 0));
  for (const job of jobs.jobs)
    assert.ok(job.seconds <= job.limitMinutes * 60 - JOB_MARGIN_SEC, `${job.name}: ${job.seconds} s within ${job.limitMinutes} minutes less the margin`);

  // A release wait that, with the apply, overruns the provision job: refused before anything is spent.
  const longWait = { ...shipped, target: { ...shipped.target, releaseWait: 2 * 3600 } };
  assert.throws(
    () => planJobs(longWait, estimateDuration(longWait, resolveBench(longWait.bench.aws, longWait.tests, longWait.mode), 'dump')),
    (e: Error) =>
      e.name === 'InputError' &&
      /^target\.releaseWait: the provision job waits up to 2h for the release, then applies for up to 25m .*longer than the provision job's timeout-minutes \(120\) less 20m for set-up.*Lower target\.releaseWait to at most 1h15m\.$/.test(
        e.message,
      ),
  );
  const viaCli = await runCli(['plan', '--config', 'examples/aws-mattermost.yml', '--db-snapshot', 'lt-12m', '--runner-limit', '360'], {});
  assert.equal(viaCli.code, 0, viaCli.err);
  // A snapshot restore is a longer apply (30 minutes), and no dump load.
  assert.match(viaCli.out, /^ {2}provision +1h10m of 2h \(release wait 30m, apply 40m\)$/m);
  assert.match(viaCli.out, /^ {2}run 1 +\d/m);
  assert.doesNotMatch(viaCli.out, /dump load/);
  // Mattermost refuses a licence with fewer users than the database (SaveLicense): plan says so.
  assert.match(viaCli.out, /licence: its user count must be at least the dataset's users/);

  // The dump load and the first run together must fit the first run job: a 150-minute
  // runner fits a duet of the bounded test (1h56m30s, set-up included), not that and the load.
  const once = { ...shipped, maxRepeats: 1, tests: shipped.tests.slice(0, 1) };
  const onceDuration = estimateDuration(once, resolveBench(once.bench.aws, once.tests, once.mode), 'dump');
  assert.equal(planJobs(once, { ...onceDuration, datasetSec: 0 }, 150).runJobs, 1);
  assert.throws(
    () => planJobs(once, onceDuration, 150),
    /the first run job waits for the dataset's dump load \(up to 45m\) before its first run \(bounded, up to 1h56m30s\), longer than the runner's job limit of 2h30m .*Restore a snapshot instead/,
  );
});
