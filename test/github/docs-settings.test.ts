import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * docs/aws.md and docs/github.md name exactly the secrets and variables the workflows
 * read, each as the kind it is read as, and the shipped caller passes every secret the
 * reusable workflow declares.
 *
 * GitHub's rules this rests on ("Reuse workflows", "Using environment secrets"): a job that
 * calls a reusable workflow cannot use `environment`, so the `secrets` it passes are the
 * repository's and organisation's; a called workflow sees only the secrets passed to it
 * (on.workflow_call.secrets); `vars` in a job with `environment: bench` holds the
 * environment's variables over the repository's.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const WORKFLOWS = [
  ...readdirSync(join(ROOT, '.github', 'workflows')).map((f) => `.github/workflows/${f}`),
  ...readdirSync(join(ROOT, 'examples', 'workflows')).map((f) => `examples/workflows/${f}`),
].filter((f) => f.endsWith('.yml'));
const DOCS = ['docs/aws.md', 'docs/github.md'];
/**
 * Repository variables only loadgate's own workflows read: release-gate.yml, and the janitor
 * when it runs here (no loadgate-ref input). A product repository passes the same as inputs.
 */
const OWN_ONLY = ['LOADGATE_CONFIG', 'LOADGATE_BENCH_REGIONS'];
const OWN_WORKFLOWS = ['.github/workflows/release-gate.yml', '.github/workflows/ci.yml', '.github/workflows/release.yml'];

/** Environment variables the docs mention (of the act and infra tests, and the one the workflow sets for the run step), never secrets or variables. */
const TOOLING_ENV = ['LOADGATE_ACT_ARTIFACTS', 'LOADGATE_ACT_RUNS', 'LOADGATE_ACT_SHARE', 'LOADGATE_INFRA_CALL_LOG', 'LOADGATE_SNAPSHOT_GRAFANA'];

type Kind = 'secret' | 'variable';
type Job = { environment?: string | { name: string }; uses?: string; secrets?: Record<string, string> | 'inherit' };
type Workflow = { on?: { workflow_call?: { secrets?: Record<string, unknown> } }; jobs: Record<string, Job> };

type Read = { name: string; kind: Kind; file: string; job: string; environment: boolean; expression: string };

/** Every `secrets.LOADGATE_*` and `vars.LOADGATE_*` a workflow reads, with whether the reading job has an environment. */
function reads(): Read[] {
  const found: Read[] = [];
  for (const file of WORKFLOWS) {
    const workflow = parse(read(file)) as Workflow;
    for (const [id, job] of Object.entries(workflow.jobs)) {
      const text = JSON.stringify(job);
      for (const e of text.matchAll(/\$\{\{(.*?)\}\}/g)) {
        for (const m of (e[1] as string).matchAll(/\b(secrets|vars)\.(LOADGATE_[A-Z0-9_]+)/g)) {
          found.push({
            name: m[2] as string,
            kind: m[1] === 'secrets' ? 'secret' : 'variable',
            file,
            job: id,
            environment: job.environment !== undefined,
            expression: e[0],
          });
        }
      }
    }
  }
  return found;
}

/** What a product repository sets: every read but the own-only variables. */
const adopterReads = () => reads().filter((r) => !OWN_ONLY.includes(r.name));

test("the own-only variables are read only by loadgate's own workflows, or by the janitor when it is not called", () => {
  const own = reads().filter((r) => OWN_ONLY.includes(r.name));
  assert.deepEqual([...new Set(own.map((r) => r.name))].sort(), [...OWN_ONLY].sort());
  for (const r of own) {
    if (OWN_WORKFLOWS.includes(r.file)) continue;
    assert.equal(r.file, '.github/workflows/janitor.yml', `${r.file} reads ${r.name}`);
    assert.match(
      r.expression,
      new RegExp(`^\\$\\{\\{ inputs\\.loadgate-ref == '' && vars\\.${r.name} \\|\\| inputs\\.[\\w-]+ \\}\\}$`),
      `the janitor reads ${r.name} only when run here`,
    );
  }
});

/** The rows of docs/github.md's "Secrets and variables" table. */
function table(): { name: string; kind: Kind }[] {
  const section = read('docs/github.md')
    .split(/^## /m)
    .find((s) => s.startsWith('Secrets and variables\n'));
  assert.ok(section, 'docs/github.md has a "Secrets and variables" section');
  return [...section.matchAll(/^\| `(LOADGATE_[A-Z0-9_]+)` \| (secret|variable) \|/gm)].map((m) => ({ name: m[1] as string, kind: m[2] as Kind }));
}

const key = (r: { name: string; kind: Kind }) => `${r.kind} ${r.name}`;

test('the docs table lists exactly the secrets and variables the workflows read, each as the kind it is read as', () => {
  const read = [...new Set(adopterReads().map(key))].sort();
  const documented = table().map(key);
  assert.equal(new Set(documented).size, documented.length, 'each row once');
  assert.deepEqual([...documented].sort(), read);
});

test('every secret or variable name in docs/aws.md and docs/github.md is one the workflows read', () => {
  const names = new Set(reads().map((r) => r.name));
  for (const doc of DOCS) {
    for (const m of read(doc).matchAll(/LOADGATE_[A-Z0-9_]+/g)) {
      const name = m[0];
      if (TOOLING_ENV.includes(name)) continue;
      assert.ok(names.has(name), `${doc} names ${name}, which no workflow reads as a secret or variable`);
    }
  }
  // The tooling names are environment variables of the tests, not settings a user makes.
  const tooling =
    readdirSync(join(ROOT, 'test', 'support'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => read(`test/support/${f}`))
      .join('\n') +
    read('.github/workflows/loadgate.yml') +
    read('scripts/check-infra.sh');
  for (const name of TOOLING_ENV) {
    assert.ok(!names.has(name), `${name} is not a secret or variable`);
    assert.ok(tooling.includes(name), `${name} is read by the tooling`);
  }
});

test('a secret the callers read is never documented as an environment secret (the calling job has no environment)', () => {
  const callerSecrets = reads().filter((r) => r.kind === 'secret');
  assert.ok(callerSecrets.length > 0);
  for (const r of callerSecrets) assert.equal(r.environment, false, `${r.file} ${r.job} reads secrets.${r.name} in a job with an environment`);
  for (const doc of DOCS) {
    const text = read(doc).replace(/\s+/g, ' ');
    for (const sentence of text.split(/(?<=\.) /)) {
      if (
        !/environment(?:'s)? secrets?/i.test(sentence) ||
        /not as secrets of the `bench` environment|never sees an environment's secrets|would not reach the gate|its secrets are never read/.test(sentence)
      )
        continue;
      for (const r of callerSecrets)
        assert.ok(!sentence.includes(`\`${r.name}\``), `${doc} calls ${r.name} an environment secret: "${sentence.slice(0, 200)}"`);
    }
  }
});

test("docs/aws.md's bench-environment table holds only variables read in jobs of the bench environment", () => {
  const inBench = new Set(
    adopterReads()
      .filter((r) => r.kind === 'variable' && r.environment)
      .map((r) => r.name),
  );
  const rows = [...read('docs/aws.md').matchAll(/^ {3}\| `(LOADGATE_[A-Z0-9_]+)`/gm)].map((m) => m[1] as string);
  assert.ok(rows.length > 0, 'docs/aws.md has the bench environment table');
  assert.deepEqual([...rows].sort(), [...inBench].sort(), 'the table lists every bench variable a product repository sets');
});

test('the shipped caller passes every secret the reusable workflow declares, from the documented secret', () => {
  const reusable = parse(read('.github/workflows/loadgate.yml')) as Workflow;
  const declared = Object.keys(reusable.on?.workflow_call?.secrets ?? {}).sort();
  const caller = parse(read('examples/workflows/loadgate.yml')) as Workflow;
  const gate = Object.values(caller.jobs).find((j) => j.uses?.includes('.github/workflows/loadgate.yml'));
  assert.ok(gate && typeof gate.secrets === 'object', 'the shipped caller passes secrets by name');
  const passed = gate.secrets as Record<string, string>;
  assert.deepEqual(Object.keys(passed).sort(), declared, 'every declared secret is passed, or it reaches the run empty');
  const documented = new Set(
    table()
      .filter((r) => r.kind === 'secret')
      .map((r) => r.name),
  );
  for (const [name, value] of Object.entries(passed)) {
    const from = /^\$\{\{ secrets\.(LOADGATE_[A-Z0-9_]+) \}\}$/.exec(value)?.[1];
    assert.ok(from && documented.has(from), `${name} comes from a documented secret (${value})`);
    assert.match(read('docs/github.md'), new RegExp(`\`${from}\` \\| secret \\| \`${name}\``), `docs/github.md says ${from} is passed as ${name}`);
  }
});
