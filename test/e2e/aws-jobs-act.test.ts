/**
 * The AWS gate's job graph under act, as a product repository runs it: a consumer
 * repository layout with the shipped caller (examples/workflows/loadgate.yml) and a gate
 * config of `bench.kind: aws`, run by workflow_dispatch in host mode against the GitHub
 * stand-in. The reusable workflow comes from a release tree of this checkout.
 *
 * prepare → provision-aws → run-aws-1 → run-aws-2 → publish → teardown, with:
 * - `terraform`, `aws` and `curl` stood in on PATH (test/support/aws-cli-standin.ts), and
 *   configure-aws-credentials by its act stand-in (no OIDC or STS offline);
 * - the bench itself the loopback AWS bench (test/bench/aws/loopback-bench.ts), provisioned
 *   in duet as examples/aws-mattermost.yml runs: two Mattermost stand-ins (slots a and b),
 *   two real k6 agents (one group per slot), a real Prometheus per slot and node_exporter,
 *   its nodes reached through the stood-in SSM;
 * - each job on its own runner with its own public address, and the controller's ports
 *   (both Prometheus servers, Grafana, the agents' API) behind the bench's security groups
 *   (test/support/bench-firewall.ts): a connection from a runner whose address no rule
 *   admits is refused, as EC2 would drop it. The agents share one API port on their own
 *   public addresses, 127.0.0.1 and 127.0.0.2 here (control traffic only; the load goes
 *   from k6 to the stand-ins on 127.0.0.1).
 * The caller runs on runners with a 47-minute job limit (runner-limit-minutes: 47, the
 * least `loadgate plan` accepts: a duet of a 30-second test is planned with 26.5 minutes
 * of set-up, and each job keeps 20 minutes for its own) and gives its run
 * jobs a budget of JOB_BUDGET_SEC (run-job-budget), so that run-aws-1 finishes the first
 * duet, cannot fit the second, and ends with next: repeat; run-aws-2 resumes.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { awsGateSettings, GRAFANA_SECRET, startAwsActBench } from '../support/aws-act-bench.ts';
import { verdictFileSchema } from '../../src/results/verdict-schema.ts';
import { runResultSchema } from '../../src/results/schema.ts';
import { runLogged } from '../support/logged-process.ts';
import { ROOT, gateEnvArgs, replacedActions, startConsumerRepository, writeReleaseTree } from '../support/act.ts';
import { MACHINERY_TOLERANCES } from '../bench/aws/loopback-bench.ts';
import { findK6, NO_K6 } from '../engine/k6/k6-binary.ts';

const ACT = [process.env.ACT_BIN, join(ROOT, '.cache', 'bin', 'act')].find((p) => p && existsSync(p));
const k6 = findK6();
const prometheus = existsSync('/usr/bin/prometheus') && existsSync('/usr/bin/prometheus-node-exporter');
const TOKEN = 'act-token-aws-jobs-0123456789';
const BASELINE = 'v10.12.0';
const CANDIDATE = 'v11.0.1-rc2';
const RUNNER_LIMIT_MINUTES = 47;
/**
 * Which duets land in which job follows the budget, so the budget sits inside the window
 * that gives the split with room either way. Tests of 30 s (DURATION_SEC); the budget check
 * before a duet counts its test and the longest set-up the job has measured. Measured in
 * run-aws-1: duet 1 was checked at once (30 s to come, no set-up measured yet), duet 2
 * 63 s after the budget clock started (set-up with a boot wait of BOOT_SECONDS, then duet 1)
 * with 45 s to come. A budget of 75 s starts duet 1 on a machine where its check comes as
 * late as 45 s, and leaves duet 2 over on any faster machine: it cannot be checked before
 * 10 + 30 = 40 s, with at least 30 + 10 s to come. The test prints the check time.
 */
const BOOT_SECONDS = 10;
const DURATION_SEC = 30;
const JOB_BUDGET_SEC = 75;
const TIMEOUT_MS = 20 * 60_000;
const ADMIN_EMAIL = 'sysadmin@chat-server.example';
const ADMIN_PASSWORD = 'act-admin-password-0123456789';

const skip =
  process.env.LOADGATE_SKIP_INTEGRATION === '1'
    ? 'LOADGATE_SKIP_INTEGRATION=1'
    : !ACT
      ? 'act is not installed (bash scripts/setup.sh --tests installs it)'
      : !k6
        ? NO_K6
        : !prometheus
          ? 'prometheus and prometheus-node-exporter (Debian packages) are not installed'
          : false;

const CONFIG = `version: 1
name: aws-act
dataset: Stand-in dataset, 40 users
target:
  system: mattermost
  versionPattern: '^v[0-9]+\\.[0-9]+\\.[0-9]+(-rc[0-9]+)?$'
mode: duet
# One loopback agent per slot; their CPU is the machine's, so the saturation limit is lifted.
bench:
  kind: aws
  aws: { preset: L.110, agentCount: 2, usersPerAgent: 20, maxEngineCpuPercent: 100 }
engine:
  kind: k6
  idle: { minimumMs: 200, averageMs: 600, rateMultiplier: 1 }
  actions: { SwitchChannel: 4, ScrollChannel: 2, CreatePost: 3, ViewThread: 1, AddReaction: 1, ViewGlobalThreads: 1, UnreadCheck: 1 }
repeats: 2
maxRepeats: 2
tests:
  - type: bounded
    users: 6
    rampUp: 3s
    duration: ${DURATION_SEC}s
# This checks the jobs, not performance.
${MACHINERY_TOLERANCES}`;

/** The shipped caller, as a repository whose runners stop jobs at RUNNER_LIMIT_MINUTES adopts it, with a short run-job budget. */
function callerWithRunnerLimit(): string {
  const shipped = readFileSync(join(ROOT, 'examples', 'workflows', 'loadgate.yml'), 'utf8');
  const anchor = /^( {6})config: .*$/m;
  assert.match(shipped, anchor, 'the shipped caller passes config');
  return shipped.replace(
    anchor,
    (line, indent: string) => `${line}\n${indent}runner-limit-minutes: ${RUNNER_LIMIT_MINUTES}\n${indent}run-job-budget: ${JOB_BUDGET_SEC}s`,
  );
}

async function gate(t: TestContext): Promise<void> {
  const b = await startAwsActBench(t, k6 as string, {
    bootSeconds: BOOT_SECONDS,
    admin: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    keepEnv: ['LOADGATE_ADMIN_EMAIL', 'LOADGATE_ADMIN_PASSWORD', 'LOADGATE_GRAFANA_TOKEN', 'LOADGATE_SNAPSHOT_GRAFANA'],
  });
  const { bench, tools, userGrafana } = b;
  const { prometheusA, prometheusB, agent0, agent1, all: firewalls } = b.firewalls;
  const work = await mkdtemp(join(tmpdir(), 'loadgate-aws-jobs-'));
  t.after(() => rm(work, { recursive: true, force: true }));

  const consumer = join(work, 'chat-server');
  const release = writeReleaseTree(join(work, 'loadgate-release'));
  const share = join(work, 'share');
  const artifacts = join(work, 'artifacts');
  mkdirSync(join(consumer, '.github', 'workflows'), { recursive: true });
  writeFileSync(join(consumer, '.github', 'workflows', 'loadgate.yml'), callerWithRunnerLimit());
  writeFileSync(join(consumer, '.github', 'loadgate.yml'), CONFIG);
  copyFileSync(bench.usersFile, join(consumer, '.github', 'loadgate-users.txt'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: consumer, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('-c', 'user.name=consumer', '-c', 'user.email=consumer@example.invalid', 'commit', '-q', '-m', 'adopt loadgate');
  // The stand-in serves this repository's history: the tags the gate checks out are its own.
  const { standin, candidateSha } = await startConsumerRepository(TOKEN, { baseline: BASELINE, candidate: CANDIDATE }, { local: consumer });
  t.after(() => standin.close());

  const logFile = join(ROOT, 'tmp', 'act-aws-jobs.log');
  mkdirSync(join(ROOT, 'tmp'), { recursive: true });
  const args = [
    'workflow_dispatch',
    '-W',
    '.github/workflows/loadgate.yml',
    '-P',
    'ubuntu-latest=-self-hosted',
    '--local-repository',
    `loadgate/loadgate@v1=${release}`,
    ...replacedActions([join(consumer, '.github', 'workflows', 'loadgate.yml'), join(release, '.github', 'workflows', 'loadgate.yml')]),
    '--input',
    `candidate=${CANDIDATE}`,
    '--input',
    `baseline=${BASELINE}`,
    ...gateEnvArgs({ standin, loadgate: { repository: 'loadgate/loadgate', source: release }, workspace: consumer, share, token: TOKEN, artifacts }),
    ...awsGateSettings(b, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
  ];
  const { code } = await runLogged(ACT as string, args, { cwd: consumer, logFile, timeoutMs: TIMEOUT_MS, env: b.env });
  const log = readFileSync(logFile, 'utf8');
  const where = `act exit ${code}, log: ${logFile}`;
  // How far the budget was from the split's edges on this machine (see JOB_BUDGET_SEC).
  const budgetStop = log.match(/the job budget \([^)]*\) would end during [^;\n]*/)?.[0];
  t.diagnostic(`run-aws-1: ${budgetStop ?? 'no job-budget stop in the log'}`);
  assert.ok(budgetStop, `run-aws-1 stopped at its job budget (${where})`);

  assert.deepEqual(standin.rejected, [], `requests rejected by GitHub's OpenAPI schema (${where})`);
  assert.deepEqual(standin.unmatched, [], `requests to routes outside the served operations (${where})`);
  assert.doesNotMatch(log, /npm (ci|install)/, 'no npm ci or npm install while the gate ran');

  // Provisioned once, destroyed once, by the teardown job, with what provision applied.
  const applies = tools.terraform.filter((r) => r.command === 'apply');
  const destroys = tools.terraform.filter((r) => r.command === 'destroy');
  assert.deepEqual(
    applies.map((r) => r.job),
    ['provision-aws'],
    `terraform apply exactly once (${where})`,
  );
  assert.deepEqual(
    destroys.map((r) => r.job),
    ['teardown'],
    `terraform destroy exactly once (${where})`,
  );
  assert.equal(destroys[0]?.key, applies[0]?.key, 'destroyed the state provision wrote');
  assert.match(applies[0]?.key ?? '', /^loadgate\/mattermost-like\/chat-server\/[0-9]+\/1\/terraform\.tfstate$/);
  assert.deepEqual(destroys[0]?.vars, applies[0]?.vars, 'teardown destroyed with the variables provision stored beside the state');
  assert.deepEqual(
    tools.terraform.filter((r) => r.command === 'init').map((r) => r.job),
    ['provision-aws', 'teardown'],
    'no run job re-initialised or re-provisioned',
  );
  // The account's vCPU quota was read, by provision, before the apply.
  const quotaReads = tools.calls.filter((c) => c.tool === 'aws' && c.args[0] === 'service-quotas');
  assert.deepEqual(
    quotaReads.map((c) => `${c.job} ${c.args[1]}`),
    ['provision-aws get-service-quota'],
    `provision checked the vCPU quota (${where})`,
  );
  const applyAt = tools.calls.find((c) => c.tool === 'terraform' && c.args.includes('apply'))?.atMs ?? 0;
  assert.ok((quotaReads[0]?.atMs ?? Infinity) < applyAt, 'the quota was checked before the apply');

  // Every job on its own runner: the bench admitted no one at apply; each run job admitted
  // its own address (and only it) at its start and withdrew it at its end; nothing was refused.
  assert.deepEqual(
    (applies[0]?.vars?.bench as Record<string, unknown> | undefined)?.controller_cidr_blocks,
    [],
    'provision admits no runner at apply: it never talks to the bench',
  );
  const lookups = tools.calls.filter((c) => c.tool === 'curl');
  assert.deepEqual(
    lookups.map((c) => c.job),
    ['run-aws-1', 'run-aws-2'],
    'each run job looked up its own address',
  );
  const addresses = lookups.map((c) => tools.addressOf(c.runner));
  assert.equal(new Set(addresses).size, 2, `two runners, two addresses: ${addresses.join(', ')}`);
  for (const [i, job] of ['run-aws-1', 'run-aws-2'].entries()) {
    const own = tools.authorized.filter((r) => r.by === job);
    assert.deepEqual(
      own.map((r) => r.cidr),
      [0, 1, 2, 3].map(() => `${addresses[i]}/32`),
      `${job} admitted its own runner to the four controller ports`,
    );
    assert.ok(
      own.every((r) => r.revokedBy === job),
      `${job} withdrew every rule it added`,
    );
  }
  // The documented secrets reached the process that ran the gate, in every run job.
  const seen = firewalls.flatMap((f) => f.seen);
  assert.deepEqual(
    [...new Set(seen.map((c) => JSON.stringify(c.env)))],
    [
      JSON.stringify({
        LOADGATE_ADMIN_EMAIL: ADMIN_EMAIL,
        LOADGATE_ADMIN_PASSWORD: ADMIN_PASSWORD,
        LOADGATE_GRAFANA_TOKEN: GRAFANA_SECRET,
        LOADGATE_SNAPSHOT_GRAFANA: userGrafana.baseUrl,
      }),
    ],
    'the admin login and the Grafana token, set as the repository secrets docs/github.md names, reached the run through the shipped caller',
  );
  assert.equal(new Set(seen.map((c) => c.runner)).size, 2, 'from both run jobs');
  const refused = firewalls.flatMap((f) => f.refused);
  assert.deepEqual(refused, [], `no connection to the bench was refused by its security groups (${where})`);
  // The duet reached both slots' controller ports from each run job: each Prometheus, and
  // each agent at its own public address.
  for (const [name, f] of Object.entries({ 'slot a Prometheus': prometheusA, 'slot b Prometheus': prometheusB, agent0, agent1 })) {
    assert.equal(new Set(f.seen.map((c) => c.runner)).size, 2, `${name} was reached from both run jobs (${where})`);
  }

  // Which job drove the bench: the SSM commands each run job sent.
  const ssmJobs = [...new Set(tools.calls.filter((c) => c.tool === 'aws' && c.args[0] === 'ssm').map((c) => c.job))];
  assert.deepEqual(ssmJobs, ['run-aws-1', 'run-aws-2'], `run-aws-1 ended with next: repeat, run-aws-2 finished, run-aws-3 never ran (${where})`);
  const job2Start = Math.min(...tools.calls.filter((c) => c.job === 'run-aws-2').map((c) => c.atMs));
  const k6Starts = bench.calls.filter((c) => c.cmd === 'loadgate-agent' && c.args[0] === 'start-k6');
  assert.deepEqual(
    [k6Starts.filter((c) => (c.atMs ?? 0) < job2Start).length, k6Starts.filter((c) => (c.atMs ?? 0) >= job2Start).length],
    [2, 2],
    `each run job started both agent groups once, one duet each: no run redone (${where})`,
  );

  // The published report: four runs, duet 1 from run-aws-1, duet 2 from run-aws-2.
  const branch = `perf-report/${BASELINE}-vs-${CANDIDATE}`;
  const dir = `reports/${BASELINE}-vs-${CANDIDATE}`;
  const files = standin.filesOnBranch(branch);
  assert.ok(files.has(`${dir}/README.md`) && files.has(`${dir}/verdict.json`), `the report on ${branch} (${where})`);
  const results = [...files.entries()]
    .filter(([f]) => f.startsWith(`${dir}/results/`) && f.endsWith('.json'))
    .map(([, bytes]) => runResultSchema.parse(JSON.parse(bytes.toString('utf8'))));
  assert.equal(results.length, 4, 'two duets, each side run once in each');
  // Each duet ran both sides at once, one per slot, and the sides swapped slots between duets.
  for (const repeat of [0, 1]) {
    const duet = results.filter((r) => r.repeat === repeat);
    assert.deepEqual(duet.map((r) => r.duet?.slot).sort(), ['a', 'b'], `duet ${repeat + 1} ran one side in each slot`);
  }
  const slotOf = (version: string, repeat: number) => results.find((r) => r.target.version === version && r.repeat === repeat)?.duet?.slot;
  assert.notEqual(slotOf(BASELINE, 0), slotOf(BASELINE, 1), 'the baseline changed slots between duets');
  for (const r of results) {
    assert.equal(r.status, 'completed', `${r.target.version}: ${r.problems.join('; ')}`);
    const startedMs = Date.parse(r.startedAt);
    const inJob2 = startedMs >= job2Start;
    assert.equal(inJob2, r.repeat === 1, `${r.target.version} repeat ${r.repeat} ran in run-aws-${inJob2 ? 2 : 1}`);
  }
  // Each run's snapshot is kept on the user's Grafana and linked there, never on the bench's.
  const links = results.flatMap((r) => r.links.map((l) => l.url));
  assert.equal(links.length, 4, `one snapshot link per run: ${results.flatMap((r) => r.problems).join('; ')}`);
  for (const url of links) assert.ok(url.startsWith(`${userGrafana.baseUrl}/dashboard/snapshot/`), `${url} is on the user's Grafana`);
  assert.equal(userGrafana.snapshots.size, 4);
  assert.equal(bench.grafana.snapshots.size, 0, "no snapshot on the bench's Grafana, which teardown destroys");
  const reused = log.match(/reusing the completed results? /g) ?? [];
  assert.deepEqual(reused, ['reusing the completed results '], 'run-aws-2 reused the duet of run-aws-1, both results at once, and redid none');

  // The verdict and the check run on the candidate's commit, and the report PR.
  const verdict = verdictFileSchema.parse(JSON.parse((files.get(`${dir}/verdict.json`) as Buffer).toString('utf8')));
  assert.equal(verdict.decision.pairs, 2);
  const runs = standin.checkRuns.filter((r) => r.name === 'loadgate' && r.head_sha === candidateSha);
  assert.equal(runs.length, 1, 'one loadgate check run on the candidate commit');
  const expected = { pass: 'success', fail: 'failure', inconclusive: 'action_required' }[verdict.verdict];
  assert.equal(runs[0]?.status, 'completed');
  assert.equal(runs[0]?.conclusion, expected, `verdict ${verdict.verdict}: ${verdict.summary}`);
  assert.equal(standin.pulls.filter((p) => p.head === branch).length, 1, 'one report PR');
  assert.equal(code === 0, verdict.verdict === 'pass', `act exit code ${code} for verdict ${verdict.verdict}`);

  // Every AWS job assumed the role through the credentials stand-in; nothing is left running.
  // act masks the role ARN (a secret) as ***; the stand-in refuses an empty or malformed one.
  const sessions = [...log.matchAll(/\| credentials stand-in: assumed \*\*\* as (loadgate-[a-z0-9-]+?)-[0-9]+ in us-east-1/g)].map((m) => m[1]);
  assert.deepEqual(
    sessions,
    ['loadgate-provision', 'loadgate-run-aws-1', 'loadgate-run-aws-2', 'loadgate-teardown'],
    'provision, two run jobs and teardown, in order',
  );
  assert.equal(bench.runningK6(), 0, 'the load is stopped');
}

test(
  'the AWS gate in duet under act: provision once, run-aws-1 stops at its job budget, run-aws-2 resumes, publish, teardown destroys once',
  { skip, timeout: TIMEOUT_MS + 120_000 },
  (t) => gate(t),
);
