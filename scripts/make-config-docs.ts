/**
 * Writes the field reference of docs/config.md from schema/gate-config.schema.json, which
 * `npm run schema` generates from the zod schema and its `.describe()` texts. Only the part
 * between the markers is generated, so the page's prose stays hand-written while every
 * field, type, default and description comes from the one declaration.
 *
 *   tsx scripts/make-config-docs.ts           rewrite docs/config.md
 *   tsx scripts/make-config-docs.ts --check   exit 1 when docs/config.md is stale
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { replaceSection, writeOrCheck, type GeneratedSection } from './generated-section.ts';

export const BEGIN = '<!-- config-reference:begin -->';
export const END = '<!-- config-reference:end -->';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const SCHEMA_PATH = join(root, 'schema/gate-config.schema.json');
export const DOC_PATH = join(root, 'docs/config.md');

/** The subset of JSON Schema that zod's export produces for the gate config. */
interface Node {
  type?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  properties?: Record<string, Node>;
  required?: string[];
  items?: Node;
  additionalProperties?: Node | boolean;
  anyOf?: Node[];
  oneOf?: Node[];
}

interface Row {
  key: string;
  type: string;
  default: string;
  description: string;
}

const code = (s: string) => '`' + s + '`';
/** Table cells cannot hold a bare pipe or a line break. */
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

// Durations are the one anyOf of an integer and a pattern string; naming them once here
// keeps every duration row readable instead of repeating the regular expression.
function isDuration(n: Node): boolean {
  return !!n.anyOf && n.anyOf.length === 2 && n.anyOf.some((a) => a.type === 'integer') && n.anyOf.some((a) => a.type === 'string' && !!a.pattern);
}

function typeOf(n: Node): string {
  if (isDuration(n)) return 'duration';
  if (n.anyOf && n.anyOf.every((a) => a.const !== undefined)) return n.anyOf.map((a) => code(JSON.stringify(a.const))).join(' or ');
  if (n.enum) return n.enum.map((v) => code(String(v))).join(' or ');
  if (n.const !== undefined) return code(JSON.stringify(n.const));
  if (n.type === 'array') return 'list';
  if (n.type === 'object' && n.additionalProperties && typeof n.additionalProperties === 'object') return `map of ${typeOf(n.additionalProperties)}`;
  if (n.type === 'string' && n.pattern) return `string matching ${code(n.pattern)}`;
  return n.type ?? 'any';
}

function defaultOf(n: Node, required: boolean): string {
  if (required) return 'required';
  if (n.default === undefined) return '';
  if (typeof n.default === 'object' && n.default !== null && Object.keys(n.default).length === 0) return '';
  return code(typeof n.default === 'string' ? n.default : JSON.stringify(n.default));
}

function walk(n: Node, key: string, required: boolean, rows: Row[]): void {
  const isObject = n.type === 'object' && n.properties;
  // An object's own row only when it says something its fields do not.
  if (!isObject || n.description)
    rows.push({ key, type: isObject ? 'object' : typeOf(n), default: isObject ? '' : defaultOf(n, required), description: n.description ?? '' });
  if (isObject) {
    for (const [name, child] of Object.entries(n.properties ?? {})) walk(child, `${key}.${name}`, (n.required ?? []).includes(name), rows);
  }
  if (n.type === 'array' && n.items) {
    const variants = n.items.oneOf ?? [n.items];
    for (const v of variants) {
      const tag = v.properties?.type?.const;
      const itemKey = tag !== undefined ? `${key}[] (type: ${String(tag)})` : `${key}[]`;
      if (v.properties) for (const [name, child] of Object.entries(v.properties)) walk(child, `${itemKey}.${name}`, (v.required ?? []).includes(name), rows);
      else walk(v, itemKey, false, rows);
    }
  }
}

function table(rows: readonly Row[]): string[] {
  return [
    '| Key | Type | Default | Description |',
    '| --- | --- | --- | --- |',
    ...rows.map((r) => `| ${cell(code(r.key))} | ${cell(r.type)} | ${cell(r.default)} | ${cell(r.description)} |`),
  ];
}

/**
 * The tolerances share a few shapes across many metrics; one table of fields per shape and
 * one of defaults per metric says the same as nine near-identical blocks.
 */
function tolerances(n: Node): string[] {
  const out: string[] = [];
  const metrics = Object.entries(n.properties ?? {});
  const scalars = metrics.filter(([, m]) => !m.properties);
  const rows: Row[] = [];
  for (const [name, m] of scalars) walk(m, `tolerances.${name}`, false, rows);
  const shapes = new Map<string, { names: string[]; node: Node }>();
  for (const [name, m] of metrics.filter(([, m]) => m.properties)) {
    const signature = JSON.stringify(Object.entries(m.properties ?? {}).map(([k, p]) => [k, p.description ?? '', typeOf(p)]));
    const shape = shapes.get(signature) ?? { names: [], node: m };
    shape.names.push(name);
    shapes.set(signature, shape);
  }
  for (const { names, node } of shapes.values()) {
    const group = names.length === 1 ? (names[0] as string) : `{${names.join(',')}}`;
    for (const [field, p] of Object.entries(node.properties ?? {})) {
      rows.push({
        key: `tolerances.${group}.${field}`,
        type: typeOf(p),
        default: defaultOf(p, (node.required ?? []).includes(field)),
        description: p.description ?? '',
      });
    }
  }
  out.push(
    ...table(rows),
    '',
    'Defaults per metric (a metric given in the config replaces its default as a whole):',
    '',
    '| Metric | Default |',
    '| --- | --- |',
  );
  for (const [name, m] of metrics.filter(([, m]) => m.properties && defaultOf(m, false)))
    out.push(`| ${code(name)} | ${cell(code(JSON.stringify(m.default ?? {})))} |`);
  return out;
}

/** The generated reference: one section per top-level key group. */
export function configReference(schema: Node): string {
  const out: string[] = [];
  const top = Object.entries(schema.properties ?? {}).filter(([name]) => name !== '$schema');
  const scalarRows: Row[] = [];
  for (const [name, n] of top) {
    if ((n.type === 'object' && n.properties) || n.type === 'array') continue;
    walk(n, name, (schema.required ?? []).includes(name), scalarRows);
  }
  out.push('### Top level', '', ...table(scalarRows), '');
  for (const [name, n] of top) {
    if (!((n.type === 'object' && n.properties) || n.type === 'array')) continue;
    out.push(`### ${code(name)}`, '');
    if (name === 'tolerances') out.push(...tolerances(n));
    else {
      const rows: Row[] = [];
      walk(n, name, (schema.required ?? []).includes(name), rows);
      out.push(...table(rows));
    }
    out.push('');
  }
  return out.join('\n').trimEnd();
}

const SECTION: GeneratedSection = { name: 'docs/config.md', begin: BEGIN, end: END, source: 'scripts/make-config-docs.ts from schema/gate-config.schema.json' };

/** The page with its generated part replaced; throws when the markers are missing. */
export function renderConfigDocs(page: string, schema: Node): string {
  return replaceSection(page, SECTION, configReference(schema));
}

function main(): void {
  const schema = JSON.parse(readFileSync(SCHEMA_PATH, 'utf8')) as Node;
  writeOrCheck(DOC_PATH, SECTION, renderConfigDocs(readFileSync(DOC_PATH, 'utf8'), schema), 'npm run config-docs');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
