import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { convertFiles } from '@cdktn/hcl2json';
import { z } from 'zod';

/** Test helper: infra/aws parsed to JSON by @cdktn/hcl2json (HashiCorp's HCL parser, compiled to wasm). */

export const INFRA_DIR = fileURLToPath(new URL('../../infra/aws/', import.meta.url));

/** hcl2json's shape: each block type maps names to a list of bodies (one per definition). */
const blockMap = z.record(z.string(), z.array(z.record(z.string(), z.unknown())));
export const moduleJsonSchema = z.object({
  variable: blockMap.default({}),
  output: blockMap.default({}),
  module: blockMap.default({}),
  locals: z.array(z.record(z.string(), z.unknown())).default([]),
  resource: z.record(z.string(), blockMap).default({}),
  data: z.record(z.string(), blockMap).default({}),
  terraform: z.array(z.record(z.string(), z.unknown())).default([]),
  provider: z.record(z.string(), z.array(z.record(z.string(), z.unknown()))).default({}),
});
export type ModuleJson = z.output<typeof moduleJsonSchema>;

const cache = new Map<string, Promise<ModuleJson>>();

/** One directory's *.tf files merged, as Terraform reads a module. */
export function loadModule(relativeDir: string): Promise<ModuleJson> {
  let loaded = cache.get(relativeDir);
  if (!loaded) {
    loaded = convertFiles(join(INFRA_DIR, relativeDir)).then((json) => moduleJsonSchema.parse(json));
    cache.set(relativeDir, loaded);
  }
  return loaded;
}

/** Every directory under infra/aws holding .tf files. */
export function moduleDirs(): string[] {
  const dirs: string[] = [];
  const walk = (relative: string): void => {
    const absolute = join(INFRA_DIR, relative);
    const entries = readdirSync(absolute);
    if (entries.some((e) => e.endsWith('.tf'))) dirs.push(relative || '.');
    for (const entry of entries) {
      if (entry.startsWith('.')) continue;
      if (statSync(join(absolute, entry)).isDirectory()) walk(relative ? `${relative}/${entry}` : entry);
    }
  };
  walk('');
  return dirs.sort();
}

/** The single body of a named block, failing clearly when it is missing or defined twice. */
export function only<T>(bodies: readonly T[] | undefined, what: string): T {
  if (!bodies || bodies.length !== 1) throw new Error(`expected exactly one ${what}, found ${bodies?.length ?? 0}`);
  return bodies[0] as T;
}

export function resource(json: ModuleJson, type: string, name: string): Record<string, unknown> {
  return only(json.resource[type]?.[name], `resource ${type}.${name}`);
}

/** The one-line rule objects of a security-group module call's ingress_rules expression. */
export interface RuleText {
  description: string;
  /** tcp unless the rule says otherwise (the module's default). */
  protocol: string;
  from: string;
  to: string;
  source: string;
}
export function ruleObjects(expression: string): RuleText[] {
  const rules: RuleText[] = [];
  const pattern = /\{\s*description\s*=\s*"([^"]*)",\s*(?:ip_protocol\s*=\s*"([a-z]+)",\s*)?from_port\s*=\s*([^,]+),\s*to_port\s*=\s*([^,]+),\s*([^}]+?)\s*\}/g;
  for (const match of expression.matchAll(pattern)) {
    rules.push({
      description: match[1] as string,
      protocol: match[2] ?? 'tcp',
      from: (match[3] as string).trim(),
      to: (match[4] as string).trim(),
      source: (match[5] as string).trim(),
    });
  }
  // Every rule object must have been understood, or a new shape would go unchecked.
  const objects = (expression.match(/\{\s*description\s*=/g) ?? []).length;
  if (objects !== rules.length) throw new Error(`ruleObjects understood ${rules.length} of ${objects} rule objects in: ${expression}`);
  return rules;
}
