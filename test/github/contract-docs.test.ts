/**
 * The adopter's contract has one source: the reusable workflows' `on.workflow_call`.
 * The docs' tables of inputs and secrets are checked against it both ways (nothing
 * documented that the workflow lacks, nothing it takes undocumented), with each input's
 * type, whether it is required and its default; and every `inputs.`/`secrets.` name the
 * README and the shipped callers use is one that is declared.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** Each reusable workflow, the doc that holds its tables, and its shipped caller. */
const CONTRACTS = [
  { workflow: '.github/workflows/loadgate.yml', doc: 'docs/github.md', caller: 'examples/workflows/loadgate.yml' },
  { workflow: '.github/workflows/janitor.yml', doc: 'docs/aws.md', caller: 'examples/workflows/janitor.yml' },
] as const;

const declarationSchema = z.object({
  on: z.object({
    workflow_call: z.object({
      inputs: z
        .record(
          z.string(),
          z.object({
            type: z.enum(['string', 'number', 'boolean']),
            required: z.boolean().optional(),
            default: z.union([z.string(), z.number(), z.boolean()]).optional(),
          }),
        )
        .default({}),
      secrets: z.record(z.string(), z.object({ required: z.boolean().optional() })).default({}),
    }),
  }),
});

type Row = string[];

/** The rows of the table that follows `<!-- workflow_call <kind>: <workflow> -->` in a doc (header and rule dropped). */
function table(doc: string, kind: 'inputs' | 'secrets', workflow: string): Row[] {
  const marker = `<!-- workflow_call ${kind}: ${workflow} -->`;
  const text = read(doc);
  const at = text.indexOf(marker);
  assert.ok(at >= 0, `${doc} has the table of ${workflow}'s ${kind} (${marker})`);
  const lines = text
    .slice(at + marker.length)
    .trimStart()
    .split('\n');
  const rows: Row[] = [];
  for (const line of lines) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split(' | ')
        .map((c) => c.trim()),
    );
  }
  assert.ok(rows.length > 2, `${doc}: the ${kind} table of ${workflow} has rows`);
  return rows.slice(2);
}

const code = (cell: string | undefined) => /^`([^`]*)`$/.exec(cell ?? '')?.[1];

/** What a Default cell says: "required", or the default as written in backticks ('' for an empty string). */
function defaultCell(cell: string | undefined): { required: true } | { value: string } {
  if (cell === 'required') return { required: true };
  const value = code(cell);
  assert.ok(value !== undefined, `a default is \`value\` or "required", not ${JSON.stringify(cell)}`);
  return { value: value === "''" ? '' : value };
}

for (const { workflow, doc, caller } of CONTRACTS) {
  const declared = declarationSchema.parse(parse(read(workflow))).on.workflow_call;

  test(`${doc} documents exactly ${workflow}'s inputs, each with its type, default or "required"`, () => {
    const rows = table(doc, 'inputs', workflow);
    const documented = rows.map((r) => code(r[0]));
    assert.deepEqual([...documented].sort(), Object.keys(declared.inputs).sort(), 'documented inputs = declared inputs');
    assert.equal(new Set(documented).size, documented.length, 'each input once');
    for (const [name, type, dflt] of rows) {
      const input = declared.inputs[code(name) ?? '']!;
      assert.equal(type, input.type, `${name}: type`);
      const said = defaultCell(dflt);
      if ('required' in said) {
        assert.equal(input.required, true, `${name} is documented as required`);
      } else {
        assert.notEqual(input.required, true, `${name} is required in the workflow`);
        assert.equal(said.value, String(input.default ?? ''), `${name}: default`);
      }
    }
  });

  test(`${doc} documents exactly ${workflow}'s secrets, each from the secret the shipped caller passes`, () => {
    const rows = table(doc, 'secrets', workflow);
    const documented = rows.map((r) => code(r[0]));
    assert.deepEqual([...documented].sort(), Object.keys(declared.secrets).sort(), 'documented secrets = declared secrets');
    const passed = (parse(read(caller)) as { jobs: Record<string, { secrets?: Record<string, string> }> }).jobs;
    const secrets = Object.assign({}, ...Object.values(passed).map((j) => j.secrets ?? {})) as Record<string, string>;
    for (const [name, from] of rows) {
      const key = code(name) ?? '';
      assert.equal(secrets[key], `\${{ secrets.${code(from)} }}`, `${caller} passes ${key} from ${from}`);
    }
  });

  test(`every inputs. and secrets. name in ${caller} is declared where it is read`, () => {
    const file = parse(read(caller)) as {
      on: { workflow_dispatch?: { inputs?: Record<string, unknown> } };
      jobs: Record<string, { with?: Record<string, unknown>; secrets?: Record<string, string> }>;
    };
    const own = Object.keys(file.on.workflow_dispatch?.inputs ?? {});
    for (const job of Object.values(file.jobs)) {
      for (const key of Object.keys(job.with ?? {})) assert.ok(key in declared.inputs, `${caller}: with.${key} is an input of ${workflow}`);
      for (const key of Object.keys(job.secrets ?? {})) assert.ok(key in declared.secrets, `${caller}: secrets.${key} is a secret of ${workflow}`);
    }
    // The caller's own expressions: inputs.* are its workflow_dispatch inputs.
    for (const m of read(caller).matchAll(/\binputs\.([\w-]+)/g))
      assert.ok(own.includes(m[1] as string), `${caller}: inputs.${m[1]} is one of its workflow_dispatch inputs`);
  });
}

test("the README names only inputs and secrets the reusable workflow declares; its adoption steps and the docs' name only settings of the table", () => {
  const declared = declarationSchema.parse(parse(read('.github/workflows/loadgate.yml'))).on.workflow_call;
  const readme = read('README.md');
  for (const m of readme.matchAll(/\b(inputs|secrets)\.([\w-]+)/g)) {
    const names = m[1] === 'inputs' ? declared.inputs : declared.secrets;
    assert.ok((m[2] as string) in names, `README.md uses ${m[0]}, which .github/workflows/loadgate.yml does not declare`);
  }
  // Every LOADGATE_ name the README's or the docs' adoption steps tell a user to set is a row of the table.
  const known = new Set([...read('docs/github.md').matchAll(/^\| `(LOADGATE_[A-Z0-9_]+)` \| (?:secret|variable) \|/gm)].map((m) => m[1]));
  const steps = read('docs/github.md').split('## Make `loadgate` a required check')[0] ?? '';
  const adopt = readme.split('## Adopt it in five steps')[1]?.split('\n## ')[0];
  assert.ok(adopt, 'the README has "Adopt it in five steps"');
  for (const m of (adopt + steps).matchAll(/LOADGATE_[A-Z0-9_]+/g)) assert.ok(known.has(m[0]), `${m[0]} is in the "Secrets and variables" table`);
});

test("the README's adoption steps put the secrets where the caller can pass them: repository or organisation secrets, never the bench environment's", () => {
  const adopt = read('README.md').split('## Adopt it in five steps')[1]?.split('\n## ')[0] ?? '';
  const flat = adopt.replace(/\s+/g, ' ');
  assert.match(flat, /\*\*repository\*\* \(or organisation\) secrets, which the caller passes to the reusable workflow/);
  assert.doesNotMatch(flat, /`bench` environment and its secrets/);
  assert.match(flat, /`bench` environment with its \*\*variables\*\*/);
});
