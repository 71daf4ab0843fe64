import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/**
 * Checks requests against the vendored part of Mattermost's API v4 description
 * (test/fixtures/mattermost-openapi, each file citing its source commit): the path and
 * method must be an operation, a required body must be there with its required fields, and
 * every top-level body field must be one the operation declares. Deeper objects are not
 * closed (the description leaves out some nested fields the server accepts, such as
 * metadata.priority.persistent_notifications of model.PostPriority).
 */

interface Schema {
  type?: string;
  required?: string[];
  properties?: Record<string, unknown>;
}
interface Operation {
  operationId: string;
  requestBody?: { required?: boolean; content?: { 'application/json'?: { schema?: Schema } } };
}
export interface ApiOperation {
  method: string;
  path: string;
  pattern: RegExp;
  operation: Operation;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export function loadOperations(files: readonly string[]): ApiOperation[] {
  const ops: ApiOperation[] = [];
  for (const file of files) {
    const doc = parse(readFileSync(new URL(`../../fixtures/mattermost-openapi/${file}`, import.meta.url), 'utf8')) as { paths: Record<string, Record<string, Operation>> };
    for (const [path, item] of Object.entries(doc.paths)) {
      const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      for (const [method, operation] of Object.entries(item)) if (METHODS.includes(method)) ops.push({ method: method.toUpperCase(), path, pattern, operation });
    }
  }
  return ops;
}

/** The problems of one request, or undefined when no operation has its path (not covered). */
export function checkRequest(ops: readonly ApiOperation[], method: string, path: string, body: unknown): { operationId?: string; problems: string[] } | undefined {
  const samePath = ops.filter((o) => o.pattern.test(path));
  if (!samePath.length) return undefined;
  const op = samePath.find((o) => o.method === method);
  if (!op) return { problems: [`${method} ${path}: no such operation; the description has ${samePath.map((o) => `${o.method} ${o.path}`).join(', ')}`] };
  const problems: string[] = [];
  const rb = op.operation.requestBody;
  const schema = rb?.content?.['application/json']?.schema;
  if (rb?.required && body === undefined) problems.push(`${method} ${op.path} (${op.operation.operationId}): the request body is required`);
  if (body !== undefined && !rb) problems.push(`${method} ${op.path} (${op.operation.operationId}): takes no request body`);
  if (body !== undefined && schema?.type === 'object') {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) problems.push(`${method} ${op.path}: the body must be a JSON object`);
    else {
      for (const key of schema.required ?? []) if (!(key in body)) problems.push(`${method} ${op.path} (${op.operation.operationId}): "${key}" is required`);
      for (const key of Object.keys(body)) if (!(key in (schema.properties ?? {}))) problems.push(`${method} ${op.path} (${op.operation.operationId}): "${key}" is not a field of the request body`);
    }
  }
  return { operationId: op.operation.operationId, problems };
}
