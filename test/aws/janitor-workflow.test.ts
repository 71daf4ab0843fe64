import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { z } from 'zod';

/** The janitor workflow's security properties, read from the file. */
const stepSchema = z.object({
  name: z.string().optional(),
  uses: z.string().optional(),
  run: z.string().optional(),
  with: z.record(z.string(), z.unknown()).optional(),
  env: z.record(z.string(), z.unknown()).optional(),
});
const inputSchema = z.object({
  description: z.string().min(1),
  required: z.boolean(),
  type: z.enum(['string', 'number', 'boolean']),
  default: z.unknown().optional(),
});
const workflowSchema = z.object({
  on: z.object({
    schedule: z.array(z.object({ cron: z.string() })),
    workflow_dispatch: z.unknown(),
    workflow_call: z.object({
      inputs: z.record(z.string(), inputSchema),
      secrets: z.record(z.string(), z.object({ description: z.string(), required: z.boolean() })),
    }),
  }),
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
  assert.equal(aws?.with?.['role-to-assume'], '${{ secrets.aws-role-arn || vars.LOADGATE_AWS_ROLE_ARN }}');
  assert.doesNotMatch(text, /aws-access-key-id|aws-secret-access-key|AWS_SECRET_ACCESS_KEY/);
});

test('no expression is interpolated into a run script', () => {
  for (const step of workflow.jobs['destroy-expired']?.steps ?? []) {
    if (step.run) assert.doesNotMatch(step.run, /\$\{\{/, `${step.name ?? 'step'} maps expressions to env first`);
  }
  const destroy = workflow.jobs['destroy-expired']?.steps.find((s) => / janitor /.test(s.run ?? ''));
  assert.ok(destroy?.env && 'STATE_BUCKET' in destroy.env, 'the bucket comes in through env');
});

const CALLER = 'examples/workflows/janitor.yml';
const callerSchema = z.object({
  on: z.object({ schedule: z.array(z.object({ cron: z.string() })), workflow_dispatch: z.unknown() }),
  permissions: z.record(z.string(), z.string()),
  jobs: z.record(
    z.string(),
    z.strictObject({
      uses: z.string(),
      permissions: z.record(z.string(), z.string()),
      with: z.record(z.string(), z.unknown()),
      secrets: z.record(z.string(), z.string()).optional(),
    }),
  ),
});

test("a product repository calls the janitor (workflow_call); it runs loadgate from its own checkout at the called ref, never from the caller's", () => {
  const call = workflow.on.workflow_call;
  assert.equal(call.inputs['loadgate-repository']?.required, true);
  assert.equal(call.inputs['loadgate-ref']?.required, true);
  const steps = workflow.jobs['destroy-expired']?.steps ?? [];
  const checkout = steps.find((s) => s.name === 'Check out loadgate');
  assert.deepEqual(checkout?.with, {
    repository: '${{ inputs.loadgate-repository || github.repository }}',
    ref: '${{ inputs.loadgate-ref || github.sha }}',
    path: '.loadgate',
    'persist-credentials': false,
  });
  const sweep = steps.find((s) => s.run?.includes('janitor'));
  assert.match(sweep?.run ?? '', /node \.loadgate\/dist\/loadgate\.js janitor /);
  assert.match(sweep?.run ?? '', /--infra \.loadgate\/infra\/aws/);
  for (const step of steps) assert.doesNotMatch(step.run ?? '', /npm ci|npx /, 'the bundled CLI runs with no install');
  // Called, the config and regions come from the caller's inputs; here, from this repository's variables.
  assert.equal(sweep?.env?.GATE_CONFIG, "${{ inputs.loadgate-ref == '' && vars.LOADGATE_CONFIG || inputs.config }}");
  assert.equal(sweep?.env?.BENCH_REGIONS, "${{ inputs.loadgate-ref == '' && vars.LOADGATE_BENCH_REGIONS || inputs.regions }}");
});

test(`${CALLER} calls the janitor as GitHub would accept it, hourly, at the ref it repeats`, () => {
  const caller = callerSchema.parse(parse(readFileSync(new URL(`../../${CALLER}`, import.meta.url), 'utf8')));
  assert.match(caller.on.schedule[0]?.cron ?? '', /^\d+ \* \* \* \*$/);
  assert.deepEqual(caller.permissions, {});
  const [job, ...rest] = Object.values(caller.jobs);
  assert.ok(job && rest.length === 0);
  const remote = /^([\w.-]+\/[\w.-]+)\/\.github\/workflows\/janitor\.yml@(.+)$/.exec(job.uses);
  assert.ok(remote, job.uses);
  assert.equal(job.with['loadgate-repository'], remote[1]);
  assert.equal(job.with['loadgate-ref'], remote[2]);
  const declared = workflow.on.workflow_call;
  for (const key of Object.keys(job.with)) assert.ok(key in declared.inputs, `with.${key} is an input of the janitor`);
  for (const [key, spec] of Object.entries(declared.inputs)) if (spec.required) assert.ok(key in job.with, `required input ${key}`);
  for (const key of Object.keys(job.secrets ?? {})) assert.ok(key in declared.secrets, `secret ${key} is declared`);
  // The called job's grants are at most what the caller gives.
  for (const [scope, level] of Object.entries(workflow.jobs['destroy-expired']?.permissions ?? {}))
    assert.ok(job.permissions[scope] === level || job.permissions[scope] === 'write', `${scope}: ${level}`);
});
