import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { WORKFLOW_RUN_JOBS } from '../../src/aws/job-limits.ts';
import { runCli } from '../support/cli.ts';

const CONFIG = 'examples/aws-mattermost-sequential.yml';
const jsonPlan = z.object({
  durationSec: z.object({ tests: z.number() }),
  runs: z.array(z.object({ test: z.string(), side: z.string(), repeat: z.number(), seconds: z.number() })),
  jobs: z.object({
    limitMinutes: z.number(),
    runJobs: z.number(),
    jobs: z.array(
      z.object({
        name: z.string(),
        seconds: z.number(),
        runs: z.array(z.object({ test: z.string(), side: z.string(), repeat: z.number(), seconds: z.number() })).optional(),
      }),
    ),
  }),
});

test('the AWS gate (up to 23 h with every pair maxRepeats allows) is split into jobs that each fit a GitHub-hosted runner, every run exactly once, in order', async () => {
  const { code, out, err } = await runCli(['plan', '--config', CONFIG, '--format', 'json']);
  assert.equal(code, 0, err);
  const plan = jsonPlan.parse(JSON.parse(out));
  assert.equal(plan.jobs.limitMinutes, 360);
  for (const job of plan.jobs.jobs) assert.ok(job.seconds <= 360 * 60 - 20 * 60, `${job.name}: ${job.seconds}s`);
  assert.deepEqual(
    plan.jobs.jobs.flatMap((j) => j.runs ?? []),
    plan.runs,
    'the run jobs hold every run once, in the interleaved order',
  );
  assert.equal(plan.jobs.jobs[0]?.name, 'provision');
  assert.equal(plan.jobs.jobs.at(-1)?.name, 'teardown');
  // The first run job also waits for the dump load (about 45 minutes) on app0.
  assert.equal(plan.jobs.runJobs, 5);
  assert.ok(plan.durationSec.tests > 6 * 3600, 'the tests alone exceed one job, which is why they are split');
});

test('a config whose longest run cannot fit in one job is refused (exit 3), naming the setting and its largest value', async () => {
  const { code, err } = await runCli(['plan', '--config', CONFIG, '--runner-limit', '90']);
  assert.equal(code, 3);
  assert.match(
    err,
    /^loadgate plan: tests\[0\]\.duration: one bounded run takes up to 1h51m30s .*longer than the runner's job limit of 1h30m .*Lower tests\[0\]\.duration to at most 48m30s\. On a self-hosted runner, raise the limit with --runner-limit/,
  );
});

test('a worst case that needs more run jobs than the workflow has is refused (exit 3), naming maxRepeats', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lg-plan-'));
  try {
    const config = join(dir, 'gate.yml');
    const yaml = (await readFile(CONFIG, 'utf8')).replace('noiseModel: ../noise/', `noiseModel: ${resolve('noise')}/`);
    assert.match(yaml, /^maxRepeats: 3$/m);
    await writeFile(config, yaml.replace(/^maxRepeats: 3$/m, 'maxRepeats: 5'));
    const { code, err } = await runCli(['plan', '--config', config]);
    assert.equal(code, 3, err);
    assert.match(err, new RegExp(`needs \\d+ run jobs of at most 5h40m, and the workflow has ${WORKFLOW_RUN_JOBS}\\. Lower maxRepeats \\(now 5\\)`));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the workflow has exactly the run jobs the planner packs into', async () => {
  const workflow = parse(await readFile('.github/workflows/loadgate.yml', 'utf8')) as { jobs: Record<string, unknown> };
  const runJobs = Object.keys(workflow.jobs).filter((name) => /^run-aws-\d+$/.test(name));
  assert.equal(runJobs.length, WORKFLOW_RUN_JOBS);
});

test('self-hosted runners have longer limits: the same gate needs one run job under 48 h', async () => {
  const { code, out, err } = await runCli(['plan', '--config', CONFIG, '--format', 'json', '--runner-limit', '2880']);
  assert.equal(code, 0, err);
  assert.equal(jsonPlan.parse(JSON.parse(out)).jobs.runJobs, 1);
  for (const bad of ['abc', '10', '99999']) {
    const r = await runCli(['plan', '--config', CONFIG, '--runner-limit', bad]);
    assert.equal(r.code, 3, bad);
    assert.match(r.err, /--runner-limit: /);
  }
});

test('plan --max-repeats counts that many pairs in the worst case (a continued gate on a new bench)', async () => {
  const config = 'examples/aws-mattermost.yml';
  const runsOf = async (extra: string[]) => {
    const { code, out, err } = await runCli(['plan', '--config', config, '--format', 'json', ...extra]);
    assert.equal(code, 0, err);
    return jsonPlan.parse(JSON.parse(out)).runs;
  };
  const two = await runsOf(['--max-repeats', '2']);
  assert.equal(Math.max(...two.map((r) => r.repeat)), 1, 'pairs 0 and 1');
  const five = await runsOf(['--max-repeats', '5']);
  assert.equal(Math.max(...five.map((r) => r.repeat)), 4);
  assert.equal(five.length, (two.length / 2) * 5);
});
