import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { actionMetadataSchema, expressionsInRunScripts } from '../support/action-metadata.ts';

const ACTION_FILES = [
  'action.yml',
  ...readdirSync('action', { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join('action', d.name, 'action.yml')))
    .map((d) => join('action', d.name, 'action.yml')),
  'test/support/github-standin/act-noop-action/action.yml',
  'test/support/github-standin/act-checkout-action/action.yml',
];
const WORKFLOWS = ['.github/workflows', 'examples/workflows'].flatMap((dir) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.yml'))
    .map((f) => join(dir, f)),
);
/** The shipped callers pin loadgate itself by its moving major tag (CHANGELOG.md); everything else by SHA. */
const LOADGATE_RELEASE = /^loadgate\/loadgate(\/\.github\/workflows\/loadgate\.yml)?@v\d+$/;

test('the expected composite actions exist', () => {
  for (const name of ['provision', 'run', 'compare', 'publish', 'teardown']) assert.ok(ACTION_FILES.includes(join('action', name, 'action.yml')), name);
});

for (const file of ACTION_FILES) {
  test(`${file} matches the action metadata schema and passes inputs through env`, () => {
    const parsed = actionMetadataSchema.safeParse(parse(readFileSync(file, 'utf8')));
    assert.ok(parsed.success, parsed.success ? '' : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n'));
    assert.deepEqual(expressionsInRunScripts(parsed.data), []);
  });
}

test('the schema rejects malformed metadata', () => {
  const base = { name: 'x', description: 'd', runs: { using: 'composite', steps: [{ run: 'echo', shell: 'bash' }] } };
  assert.ok(actionMetadataSchema.safeParse(base).success);
  const bad: unknown[] = [
    { ...base, description: undefined },
    { ...base, runs: { using: 'composite', steps: [{ run: 'echo' }] } },
    { ...base, runs: { using: 'composite', steps: [{ run: 'echo', shell: 'bash', uses: './x' }] } },
    { ...base, runs: { using: 'node12', main: 'index.js' } },
    { ...base, inputs: { 'bad name': { description: 'd' } } },
    { ...base, inputs: { ok: { descripton: 'typo' } } },
    { ...base, outputs: { o: { description: 'no value' } } },
    { ...base, branding: { color: 'pink' } },
  ];
  for (const doc of bad) assert.equal(actionMetadataSchema.safeParse(doc).success, false, JSON.stringify(doc));
  const spliced = actionMetadataSchema.parse({ ...base, runs: { using: 'composite', steps: [{ run: 'echo ${{ inputs.x }}', shell: 'bash' }] } });
  assert.equal(expressionsInRunScripts(spliced).length, 1);
});

interface Workflow {
  permissions?: unknown;
  jobs: Record<string, { uses?: string; permissions?: unknown; 'timeout-minutes'?: number | string; steps?: { uses?: string; run?: string }[] }>;
}

for (const file of WORKFLOWS) {
  test(`${file}: no default permissions, a timeout per job, third-party actions pinned, no input spliced into run`, () => {
    const workflow = parse(readFileSync(file, 'utf8')) as Workflow;
    assert.deepEqual(workflow.permissions, {});
    for (const [name, job] of Object.entries(workflow.jobs)) {
      // A job that calls a reusable workflow cannot set a timeout; its called jobs do.
      // A number, or the runner limit the caller gives (the AWS run jobs).
      if (!job.uses)
        assert.ok(typeof job['timeout-minutes'] === 'number' || job['timeout-minutes'] === '${{ inputs.runner-limit-minutes }}', `${name} has timeout-minutes`);
      assert.ok(job.permissions && typeof job.permissions === 'object', `${name} grants its own permissions`);
      for (const step of job.steps ?? []) {
        if (step.uses && !step.uses.startsWith('./') && !LOADGATE_RELEASE.test(step.uses))
          assert.match(step.uses, /^[\w.-]+\/[\w./-]+@[0-9a-f]{40}$/, `${name}: ${step.uses} is pinned to a commit SHA`);
        if (step.run)
          assert.ok(!/\$\{\{\s*(inputs|github\.event|github\.head_ref|steps|needs)\./.test(step.run), `${name}: a run script interpolates an input; use env:`);
      }
    }
  });
}

test('the reusable gate never cancels a running gate; teardown and publish run whatever happened', () => {
  const wf = parse(readFileSync('.github/workflows/loadgate.yml', 'utf8')) as Workflow & { concurrency: { 'cancel-in-progress': boolean } };
  assert.equal(wf.concurrency['cancel-in-progress'], false);
  const jobs = wf.jobs as Record<string, { if?: string; permissions?: Record<string, string> }>;
  assert.match(jobs.teardown?.if ?? '', /always\(\)/);
  assert.match(jobs.publish?.if ?? '', /always\(\)/);
  assert.deepEqual(jobs.publish?.permissions, { checks: 'write', contents: 'write', 'pull-requests': 'write' });
  assert.equal(jobs.prepare?.permissions?.['pull-requests'], undefined);
  assert.equal(jobs.prepare?.permissions?.['id-token'], undefined, 'id-token only where AWS is used');
});
