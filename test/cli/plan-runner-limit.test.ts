import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { runCli } from '../support/cli.ts';

const CONFIG = 'examples/aws-mattermost.yml';
const jsonPlan = z.object({
  durationSec: z.object({ tests: z.number() }),
  runs: z.array(z.object({ test: z.string(), side: z.string(), repeat: z.number(), seconds: z.number() })),
  jobs: z.object({
    limitMinutes: z.number(),
    runJobs: z.number(),
    jobs: z.array(z.object({ name: z.string(), seconds: z.number(), runs: z.array(z.object({ test: z.string(), side: z.string(), repeat: z.number(), seconds: z.number() })).optional() })),
  }),
});

test('the AWS gate (up to 12 h) is split into jobs that each fit a GitHub-hosted runner, every run exactly once, in order', async () => {
  const { code, out, err } = await runCli(['plan', '--config', CONFIG, '--format', 'json']);
  assert.equal(code, 0, err);
  const plan = jsonPlan.parse(JSON.parse(out));
  assert.equal(plan.jobs.limitMinutes, 360);
  for (const job of plan.jobs.jobs) assert.ok(job.seconds <= 360 * 60 - 20 * 60, `${job.name}: ${job.seconds}s`);
  assert.deepEqual(plan.jobs.jobs.flatMap((j) => j.runs ?? []), plan.runs, 'the run jobs hold every run once, in the interleaved order');
  assert.equal(plan.jobs.jobs[0]?.name, 'provision');
  assert.equal(plan.jobs.jobs.at(-1)?.name, 'teardown');
  assert.equal(plan.jobs.runJobs, 3);
  assert.ok(plan.durationSec.tests > 6 * 3600, 'the tests alone exceed one job, which is why they are split');
});

test('a config whose longest run cannot fit in one job is refused (exit 3), naming the setting and its largest value', async () => {
  const { code, err } = await runCli(['plan', '--config', CONFIG, '--runner-limit', '240']);
  assert.equal(code, 3);
  assert.match(err, /^loadgate plan: tests\[1\]\.maxDuration: one unbounded run takes up to 4h5m .*longer than the runner's job limit of 4h .*Lower tests\[1\]\.maxDuration to at most 3h35m\. On a self-hosted runner, raise the limit with --runner-limit/);
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
