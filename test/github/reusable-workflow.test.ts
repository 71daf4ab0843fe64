/**
 * The reusable workflow's contract, checked the way GitHub checks a call (workflow syntax
 * reference, "on.workflow_call" and "jobs.<job_id>.uses"): a caller passes only declared
 * inputs and secrets, every required input, numbers where a number is declared, and grants
 * at least the permissions the called jobs ask for (a called job can only narrow them).
 * Both callers are checked: this repository's release-gate.yml and the shipped example.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { z } from 'zod';

const REUSABLE = '.github/workflows/loadgate.yml';
const CALLERS = ['.github/workflows/release-gate.yml', 'examples/workflows/loadgate.yml'];

const input = z.object({
  description: z.string().min(1),
  required: z.boolean().optional(),
  type: z.enum(['string', 'number', 'boolean']),
  default: z.unknown().optional(),
});
const step = z
  .object({ name: z.string().optional(), uses: z.string().optional(), run: z.string().optional(), with: z.record(z.string(), z.unknown()).optional() })
  .loose();
const calledJob = z.object({ permissions: z.record(z.string(), z.enum(['read', 'write'])).optional(), steps: z.array(step).default([]) }).loose();
const reusableSchema = z.object({
  on: z.object({
    workflow_call: z.object({
      inputs: z.record(z.string(), input),
      secrets: z.record(z.string(), z.object({ description: z.string(), required: z.boolean() })),
    }),
  }),
  jobs: z.record(z.string(), calledJob),
});
const callerSchema = z.object({
  on: z.object({ push: z.object({ tags: z.array(z.string()) }), workflow_dispatch: z.unknown() }),
  jobs: z.object({
    gate: z.strictObject({
      uses: z.string(),
      permissions: z.record(z.string(), z.enum(['read', 'write'])),
      with: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
      secrets: z.record(z.string(), z.string()).optional(),
    }),
  }),
});

const reusable = reusableSchema.parse(parse(readFileSync(REUSABLE, 'utf8')));
const LEVEL = { read: 1, write: 2 } as const;

for (const file of CALLERS) {
  test(`${file} calls ${REUSABLE} as GitHub would accept it`, () => {
    const caller = callerSchema.parse(parse(readFileSync(file, 'utf8')));
    const { gate } = caller.jobs;
    const declared = reusable.on.workflow_call.inputs;
    for (const key of Object.keys(gate.with)) assert.ok(key in declared, `${file}: with.${key} is not an input of ${REUSABLE}`);
    for (const [key, spec] of Object.entries(declared)) {
      if (spec.required) assert.ok(key in gate.with, `${file}: required input ${key} is missing`);
      const value = gate.with[key];
      if (spec.type === 'number' && typeof value === 'string') assert.match(value, /^\$\{\{.*\}\}$/, `${file}: ${key} is a number input`);
    }
    for (const key of Object.keys(gate.secrets ?? {})) assert.ok(key in reusable.on.workflow_call.secrets, `${file}: secret ${key} is not declared`);
    for (const [name, job] of Object.entries(reusable.jobs)) {
      for (const [scope, level] of Object.entries(job.permissions ?? {})) {
        const granted = gate.permissions[scope];
        assert.ok(granted && LEVEL[granted] >= LEVEL[level], `${file} grants ${scope}: ${granted ?? 'none'}, but job ${name} needs ${level}`);
      }
    }
    // The called workflow checks loadgate out at the ref the caller runs: a remote caller
    // repeats its uses line's repository and ref; this repository passes its own commit.
    const remote = /^([\w.-]+\/[\w.-]+)\/\.github\/workflows\/loadgate\.yml@(.+)$/.exec(gate.uses);
    if (remote) {
      assert.equal(gate.with['loadgate-repository'], remote[1], `${file}: loadgate-repository names the repository of the uses line`);
      assert.equal(String(gate.with['loadgate-ref']), remote[2], `${file}: loadgate-ref repeats the ref of the uses line`);
    } else {
      assert.equal(gate.uses, `./${REUSABLE}`);
      assert.equal(gate.with['loadgate-repository'], '${{ github.repository }}');
      assert.equal(gate.with['loadgate-ref'], '${{ github.sha }}');
    }
  });
}

test(`${REUSABLE} takes its actions from the loadgate checkout, never from the caller's workspace`, () => {
  for (const [name, job] of Object.entries(reusable.jobs)) {
    const checkout = job.steps.findIndex((s) => s.name === 'Check out loadgate');
    job.steps.forEach((s, i) => {
      if (s.uses?.startsWith('./') || /\.loadgate\//.test(s.run ?? '')) {
        assert.ok(s.uses === undefined || s.uses.startsWith('./.loadgate/action/'), `${name}: ${s.uses} resolves in the caller's workspace`);
        assert.ok(checkout >= 0 && checkout < i, `${name}: step ${i} uses .loadgate before it is checked out`);
      }
    });
    if (checkout >= 0) {
      const { with: w } = job.steps[checkout]!;
      assert.deepEqual(w, {
        repository: '${{ inputs.loadgate-repository }}',
        ref: '${{ inputs.loadgate-ref }}',
        path: '.loadgate',
        'persist-credentials': false,
      });
    }
  }
});

/** The token every step that talks to GitHub gets: the App's, minted in its job, else the workflow's. */
const JOB_TOKEN = '${{ steps.app-token.outputs.token || github.token }}';

test(`${REUSABLE}: with app-client-id and the app-private-key secret, every step that talks to GitHub uses a GitHub App token minted in its own job`, () => {
  assert.ok('app-client-id' in reusable.on.workflow_call.inputs);
  assert.ok('app-private-key' in reusable.on.workflow_call.secrets);
  const talking: string[] = [];
  for (const [name, job] of Object.entries(reusable.jobs)) {
    job.steps.forEach((s, i) => {
      const publishes = s.uses === './.loadgate/action/publish' && s.with?.mode !== 'scan';
      const env = (s as { env?: Record<string, string> }).env ?? {};
      if (!publishes && env.GITHUB_TOKEN === undefined) return;
      talking.push(`${name}: ${s.name ?? s.id ?? s.uses}`);
      assert.equal(publishes ? s.with?.token : env.GITHUB_TOKEN, JOB_TOKEN, `${name}: step ${i} talks to GitHub with the App's token when there is one`);
      const mint = job.steps.findIndex((m) => (m as { id?: string }).id === 'app-token');
      assert.ok(mint >= 0 && mint < i, `${name}: the App token is minted before step ${i}`);
      const minted = job.steps[mint]! as { if?: string; uses?: string; with?: Record<string, string> };
      assert.match(minted.uses ?? '', /^actions\/create-github-app-token@[0-9a-f]{40}$/);
      assert.equal(minted.if, "${{ inputs.app-client-id != '' }}");
      assert.equal(minted.with?.['client-id'], '${{ inputs.app-client-id }}');
      assert.equal(minted.with?.['private-key'], '${{ secrets.app-private-key }}');
    });
  }
  assert.ok(talking.some((t) => t.startsWith('prepare:')) && talking.some((t) => t.startsWith('publish:')), talking.join('\n'));
});

test(`${REUSABLE}: a prepare job that fails before its check run started completes one (publish --mode abort)`, () => {
  const steps = reusable.jobs.prepare!.steps as { id?: string; if?: string; uses?: string; with?: Record<string, string> }[];
  const start = steps.findIndex((s) => s.id === 'start');
  const abort = steps.findIndex((s) => s.with?.mode === 'abort');
  assert.ok(start >= 0 && abort > start, 'the abort step comes after the start step');
  const step = steps[abort]!;
  assert.equal(step.uses, './.loadgate/action/publish');
  // A calibration has no check run to complete.
  assert.equal(
    step.if,
    "${{ failure() && steps.inputs.outputs.candidate != '' && steps.inputs.outputs.mode != 'calibrate' && steps.start.outputs.check-run-id == '' }}",
  );
  assert.equal(step.with?.candidate, '${{ steps.inputs.outputs.candidate }}');
  assert.equal(step.with?.config, '${{ steps.inputs.outputs.config }}');
  assert.equal(step.with?.['check-name'], '${{ steps.inputs.outputs.check-name }}');
});

test(`${REUSABLE}: mode calibrate posts no check run, plans its cost first, runs calibrate in the gate's run jobs and opens the model's pull request`, () => {
  type Step = { id?: string; name?: string; if?: string; uses?: string; run?: string; with?: Record<string, string>; env?: Record<string, string> };
  const stepsOf = (job: string) => reusable.jobs[job]!.steps as Step[];
  const prepare = stepsOf('prepare');
  const inputs = prepare.find((s) => s.id === 'inputs')!;
  assert.equal(inputs.env?.INPUT_MODE, '${{ inputs.mode }}', 'check-inputs validates the mode');
  const start = prepare.find((s) => s.id === 'start')!;
  assert.equal(start.if, "${{ steps.inputs.outputs.mode != 'calibrate' }}", 'no check run on the tag for a calibration');
  const plan = prepare.findIndex((s) => s.run?.includes('publish-calibration --mode plan') === true);
  assert.ok(plan >= 0, 'the calibration plan (its cost) goes to the job summary');
  assert.equal(prepare[plan]!.if, "${{ steps.inputs.outputs.mode == 'calibrate' }}");
  // The bench is provisioned and budgeted as for a gate: the candidate on both sides, repeats pairs.
  const provision = stepsOf('provision-aws').find((s) => s.id === 'provision')!;
  assert.equal(provision.with?.['max-repeats'], '${{ needs.prepare.outputs.new-pairs-at-most }}');
  assert.equal(provision.with?.['max-cost'], '${{ needs.prepare.outputs.max-cost }}');
  for (const job of ['gate-local', 'run-aws-1']) {
    const run = stepsOf(job).find((s) => s.id === 'run')!;
    assert.equal(run.with?.mode, '${{ needs.prepare.outputs.mode }}', `${job} runs calibrate in calibrate mode`);
  }
  const publish = stepsOf('publish');
  const finish = publish.find((s) => s.with?.mode === 'finish')!;
  assert.equal(
    finish.if,
    "${{ always() && needs.prepare.outputs.mode != 'calibrate' }}",
    "a calibration completes no check run; a gate's is completed whatever failed before",
  );
  const pr = publish.find((s) => s.run?.includes('publish-calibration --mode finish') === true)!;
  assert.equal(pr.if, "${{ needs.prepare.outputs.mode == 'calibrate' }}");
  assert.equal(pr.env?.LG_RESULT, finish.with?.['gate-result'], 'the calibration is published only when its last job succeeded, judged as a gate is');
});

test('the root action also completes the check run of a gate that could not start', () => {
  const action = parse(readFileSync('action.yml', 'utf8')) as { runs: { steps: { id?: string; if?: string; env?: Record<string, string> }[] } };
  const steps = action.runs.steps;
  const start = steps.findIndex((s) => s.id === 'start');
  const abort = steps.findIndex((s) => s.env?.LG_MODE === 'abort');
  assert.ok(start >= 0 && abort > start, 'the abort step comes after the start step');
  assert.equal(steps[abort]!.if, "failure() && steps.inputs.outputs.candidate != '' && steps.start.outputs.check-run-id == ''");
  assert.equal(steps[abort]!.env?.LG_CANDIDATE, '${{ steps.inputs.outputs.candidate }}');
  assert.equal(steps[abort]!.env?.GITHUB_TOKEN, '${{ inputs.token }}');
});
