import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { z } from 'zod';

/** The janitor workflow's security properties, read from the file. */
const stepSchema = z.object({ name: z.string().optional(), uses: z.string().optional(), run: z.string().optional(), with: z.record(z.string(), z.unknown()).optional(), env: z.record(z.string(), z.unknown()).optional() });
const workflowSchema = z.object({
  on: z.object({ schedule: z.array(z.object({ cron: z.string() })), workflow_dispatch: z.unknown() }),
  permissions: z.record(z.string(), z.string()),
  jobs: z.record(
    z.string(),
    z.object({
      'timeout-minutes': z.number(),
      environment: z.string(),
      permissions: z.record(z.string(), z.string()),
      steps: z.array(stepSchema),
    }),
  ),
});

const text = readFileSync(new URL('../../.github/workflows/janitor.yml', import.meta.url), 'utf8');
const workflow = workflowSchema.parse(parse(text));

test('the janitor runs hourly and by hand, with no default permissions', () => {
  assert.match(workflow.on.schedule[0]?.cron ?? '', /^\d+ \* \* \* \*$/);
  assert.deepEqual(workflow.permissions, {});
  const job = workflow.jobs['destroy-expired'];
  assert.ok(job);
  assert.deepEqual(job.permissions, { 'id-token': 'write', contents: 'read' });
  assert.match(text, /id-token: write # .+\n\s+contents: read # .+/, 'each grant is explained');
  assert.equal(job.environment, 'bench');
  assert.ok(job['timeout-minutes'] > 0 && job['timeout-minutes'] <= 360);
});

test('actions are pinned by full commit SHA and AWS access is OIDC only', () => {
  const steps = workflow.jobs['destroy-expired']?.steps ?? [];
  const uses = steps.filter((s) => s.uses).map((s) => s.uses as string);
  assert.ok(uses.length >= 3);
  for (const use of uses) assert.match(use, /^[\w.-]+\/[\w.-]+@[0-9a-f]{40}$/, `${use} is pinned`);
  const aws = steps.find((s) => s.uses?.startsWith('aws-actions/configure-aws-credentials@'));
  assert.equal(aws?.with?.['role-to-assume'], '${{ vars.LOADGATE_AWS_ROLE_ARN }}');
  assert.doesNotMatch(text, /aws-access-key-id|aws-secret-access-key|AWS_SECRET_ACCESS_KEY/);
});

test('no expression is interpolated into a run script', () => {
  for (const step of workflow.jobs['destroy-expired']?.steps ?? []) {
    if (step.run) assert.doesNotMatch(step.run, /\$\{\{/, `${step.name ?? 'step'} maps expressions to env first`);
  }
  const destroy = workflow.jobs['destroy-expired']?.steps.find((s) => s.run?.includes('loadgate janitor'));
  assert.ok(destroy?.env && 'STATE_BUCKET' in destroy.env, 'the bucket comes in through env');
});
