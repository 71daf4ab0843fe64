import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * The AWS run jobs of the reusable workflow are one definition: run-aws-1 holds the steps,
 * permissions and outputs under YAML anchors and the next jobs alias them (GitHub resolves
 * anchors and aliases in workflow files, "Reusing workflow configurations"; it rejects the
 * merge key, so the keys that differ are written per job). A fix to a run step lands once.
 */

const FILE = join(import.meta.dirname, '..', '..', '.github', 'workflows', 'loadgate.yml');
const RUN_JOBS = ['run-aws-1', 'run-aws-2', 'run-aws-3', 'run-aws-4', 'run-aws-5'];
type Job = { name: string; needs: string[]; if: string; steps: unknown[]; [key: string]: unknown };

test('the AWS run jobs share one definition of their steps, permissions and outputs', () => {
  const text = readFileSync(FILE, 'utf8');
  for (const anchor of ['run-aws-steps', 'run-aws-permissions', 'run-aws-outputs']) {
    assert.equal(text.split(`&${anchor}\n`).length - 1, 1, `one &${anchor}`);
    assert.equal(text.split(`*${anchor}\n`).length - 1, RUN_JOBS.length - 1, 'aliased by the later run jobs');
  }
  // The run step is written twice in all: the local gate's and the run jobs' one.
  assert.equal(text.match(/uses: \.\/\.loadgate\/action\/run\n/g)?.length, 2);
  // Four written-out copies of the run job's 180 lines would take it past 1,600.
  assert.ok(text.split('\n').length < 1100, 'the workflow no longer repeats the run job');

  const jobs = (parse(text) as { jobs: Record<string, Job> }).jobs;
  const strip = ({ name: _name, needs: _needs, if: _if, ...rest }: Job) => rest;
  for (const id of RUN_JOBS.slice(1))
    assert.deepEqual(strip(jobs[id] as Job), strip(jobs['run-aws-1'] as Job), `${id} is run-aws-1 but for name, needs and if`);
  // Each hands over to the next while runs remain; every one can reach the bench's controller ports.
  RUN_JOBS.forEach((id, i) => {
    const job = jobs[id] as Job;
    assert.equal(job.name, `Run the tests (AWS bench, job ${i + 1})`);
    if (i === 0) assert.equal(job.if, "${{ needs.provision-aws.result == 'success' }}");
    else assert.equal(job.if, `\${{ needs.${RUN_JOBS[i - 1]}.outputs.next == 'repeat' }}`);
    assert.ok(job.needs.includes('provision-aws'), `${id} reads provision's controller-ingress`);
  });
});
