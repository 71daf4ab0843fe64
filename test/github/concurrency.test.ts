import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * "One AWS bench at a time" must hold for the bench's whole life: provision-aws, the run
 * jobs and teardown. A job-level concurrency group is released when its job ends, so only
 * the workflow-level group spans them (GitHub docs, "Control the concurrency of workflows
 * and jobs": `concurrency` at the workflow level or at `jobs.<job_id>.concurrency`).
 */

const FILE = join(import.meta.dirname, '..', '..', '.github', 'workflows', 'loadgate.yml');
type Concurrency = { group: string; 'cancel-in-progress'?: boolean; queue?: string };
type Workflow = { concurrency?: Concurrency; jobs: Record<string, { concurrency?: unknown; needs?: string | string[] }> };

test('the AWS bench group is the workflow-level one: per repository, held from provision to teardown, never cancelling', () => {
  const workflow = parse(readFileSync(FILE, 'utf8')) as Workflow;
  const group = workflow.concurrency?.group ?? '';
  assert.equal(group, 'loadgate-bench-${{ github.repository }}', 'one group per calling repository');
  // Nothing per candidate or per run in it: two rc tags share it.
  assert.doesNotMatch(group, /inputs\.|ref_name|run_id|sha/);
  assert.equal(workflow.concurrency?.['cancel-in-progress'], false);
  assert.equal(workflow.concurrency?.queue, 'max', 'waiting gates queue in order instead of being cancelled');
  // No job holds a group of its own: a job-level group would end with its job.
  for (const [id, job] of Object.entries(workflow.jobs)) assert.equal(job.concurrency, undefined, `${id} has no job-level concurrency`);
  // The bench's jobs are all in this workflow run, teardown last.
  for (const id of ['provision-aws', 'run-aws-1', 'run-aws-2', 'run-aws-3', 'run-aws-4', 'run-aws-5', 'teardown']) assert.ok(id in workflow.jobs, id);
  const teardownNeeds = workflow.jobs.teardown?.needs as string[];
  for (const id of ['provision-aws', 'run-aws-1', 'run-aws-2', 'run-aws-3', 'run-aws-4', 'run-aws-5'])
    assert.ok(teardownNeeds.includes(id), `teardown waits for ${id}`);
});
