import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { OpenAPIBackend, type Document } from 'openapi-backend';

/**
 * GitHub's published OpenAPI description (npm @octokit/openapi, api.github.com), cut
 * down to the operations the stand-in serves, with every component they reference
 * copied verbatim. Cutting keeps start-up near 3 s instead of compiling 800 paths;
 * the schemas loadgate's requests are validated against are GitHub's own.
 */
export const SERVED_OPERATIONS = [
  'repos/get',
  'repos/list-tags',
  'repos/compare-commits-with-basehead',
  'repos/list-commits',
  'git/get-ref',
  'git/create-ref',
  'git/update-ref',
  'git/list-matching-refs',
  'git/get-tag',
  'git/create-blob',
  'git/get-blob',
  'git/create-tree',
  'git/get-tree',
  'git/create-commit',
  'git/get-commit',
  'checks/create',
  'checks/update',
  'checks/get',
  'checks/list-for-ref',
  'pulls/list',
  'pulls/create',
  'pulls/update',
  'pulls/get',
  'repos/create-repo-ruleset',
  'apps/get-repo-installation',
  'apps/get-user-installation',
  'apps/create-installation-access-token',
  'apps/revoke-installation-access-token',
] as const;
export type ServedOperation = (typeof SERVED_OPERATIONS)[number];

interface OpenApiSpec {
  openapi: string;
  info: unknown;
  paths: Record<string, Record<string, { operationId?: string } | unknown>>;
  components: Record<string, Record<string, unknown>>;
}

function specPath(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@octokit/openapi/package.json')), 'generated', 'api.github.com.json');
}

function subsetSpec(spec: OpenApiSpec, operations: readonly string[]): Document {
  const wanted = new Set(operations);
  const paths: OpenApiSpec['paths'] = {};
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const id = (op as { operationId?: string })?.operationId;
      if (id && wanted.has(id)) (paths[path] ??= {})[method] = op;
    }
  }
  const found = new Set(Object.values(paths).flatMap((item) => Object.values(item).map((op) => (op as { operationId: string }).operationId)));
  const missing = operations.filter((o) => !found.has(o));
  if (missing.length) throw new Error(`operations missing from GitHub's OpenAPI description: ${missing.join(', ')}`);
  const components: OpenApiSpec['components'] = {};
  const seen = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && !seen.has(ref)) {
      seen.add(ref);
      const [, , kind, name] = ref.split('/') as [string, string, string, string];
      const target = spec.components[kind]?.[name];
      if (target === undefined) throw new Error(`unresolvable $ref ${ref}`);
      (components[kind] ??= {})[name] = target;
      walk(target);
    }
    for (const value of Object.values(node)) walk(value);
  };
  walk(paths);
  dropUntypedNullable({ paths, components });
  return { openapi: spec.openapi, info: spec.info, paths, components } as unknown as Document;
}

/**
 * OpenAPI 3.0.3 (4.8.24.1): `nullable: true` adds null to the types named by `type`, so
 * without `type` it has no effect. GitHub's description has such schemas (the ruleset
 * responses), and ajv refuses them outright, so the no-op keyword is dropped.
 */
function dropUntypedNullable(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(dropUntypedNullable);
  if (!node || typeof node !== 'object') return;
  const schema = node as Record<string, unknown>;
  if (schema.nullable === true && schema.type === undefined) delete schema.nullable;
  for (const value of Object.values(schema)) dropUntypedNullable(value);
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

let cached: Promise<OpenAPIBackend> | undefined;

/** One validator per test process: the first caller pays the load, the rest share it. */
export function loadGitHubApi(): Promise<OpenAPIBackend> {
  cached ??= (async () => {
    const spec = JSON.parse(readFileSync(specPath(), 'utf8')) as OpenApiSpec;
    const api = new OpenAPIBackend({
      definition: subsetSpec(spec, SERVED_OPERATIONS),
      validate: true,
      quick: false,
      customizeAjv: (ajv) => {
        ajv.addFormat('date-time', DATE_TIME);
        ajv.addFormat('uri', (s: string) => URL.canParse(s));
        // GitHub-specific or informational formats: accepted as any string.
        for (const name of ['email', 'repo.nwo', 'uri-template', 'date', 'hostname', 'ip', 'binary']) ajv.addFormat(name, true);
        return ajv;
      },
    });
    await api.init();
    return api;
  })();
  return cached;
}
