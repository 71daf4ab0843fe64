import { readFileSync, readdirSync } from 'node:fs';
import { parse } from 'yaml';

/**
 * Checks requests against the vendored part of Mattermost's API v4 description
 * (test/fixtures/mattermost-openapi, each file citing its source commit): the path and
 * method must be an operation, a required body must be there with its required fields, and
 * every top-level body field must be one the operation declares, with a declared value if
 * the field is an enumeration; an array body must be an array of the declared length.
 * Deeper objects are not closed (the description leaves out some nested fields the server
 * accepts, such as metadata.priority.persistent_notifications of model.PostPriority).
 * Every query parameter sent must be one the operation declares, and every required one must
 * be sent (the subsets keep the query parameters of the operations the scenario sends a
 * query to, and of those with a required one). A request no vendored operation covers is a
 * problem unless UNDESCRIBED names it.
 */

interface Schema {
  type?: string;
  required?: string[];
  properties?: Record<string, { type?: string; enum?: unknown[] }>;
  items?: { type?: string };
  minItems?: number;
  maxItems?: number;
}
interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { required?: boolean; content?: { 'application/json'?: { schema?: Schema } } };
}
export interface ApiOperation {
  method: string;
  path: string;
  pattern: RegExp;
  /** Per segment: 0 literal, 1 template; a literal segment wins over a template (OpenAPI 3, "Path Templating Matching"). */
  rank: number[];
  operation: Operation;
}

/**
 * Requests Mattermost serves for which its API description has no operation, each with why.
 * Nothing else may go without an operation.
 */
const UNDESCRIBED: readonly { method: string; pattern: RegExp; reason: string }[] = [
  {
    method: 'GET',
    pattern: /^\/api\/v4\/websocket$/,
    // mattermost/mattermost api/v4/source/introduction.yaml at 00b23b1cef61a626357d05ab5bf2f765dccaf94d.
    reason:
      'the WebSocket upgrade: the description names /api/v4/websocket only in the text of its "WebSocket" tag (RFC 6455 opening handshake), with no path item',
  },
];

/**
 * Body fields the server decodes that the description's schema leaves out, per operation.
 * The scenario sends back the category the server returned, as Mattermost's web app does.
 */
const UNDESCRIBED_FIELDS: Readonly<Record<string, { fields: readonly string[]; reason: string }>> = {
  UpdateSidebarCategoryForTeamForUser: {
    fields: ['sort_order', 'sorting', 'muted', 'collapsed', 'channel_ids'],
    // mattermost/mattermost server/public/model/channel_sidebar.go at 42c05bfeaed38d41a44536b7ff0cda0f09d0936f;
    // @mattermost/types channel_categories ChannelCategory (v11.9.0) has the same fields but sort_order.
    reason:
      'the handler decodes model.SidebarCategoryWithChannels, whose JSON adds sort_order, sorting, muted, collapsed and channel_ids to the five fields of the described SidebarCategory',
  },
};

/** Query parameters the server reads that the description does not declare, per operation. */
const UNDESCRIBED_QUERY: Readonly<Record<string, { names: readonly string[]; reason: string }>> = {
  GetUserThreads: {
    names: ['unread'],
    // mattermost/mattermost server/channels/api4/user.go at 004cacd43c54177e1e322e38ae1ebb0995feff69;
    // @mattermost/client 11.9.0 Client4.getUserThreads sends unread too.
    reason: 'getThreadsForUser parses "unread" into GetUserThreadsOpts.Unread',
  },
};

/** Query parameters the description marks required that the server treats as optional. */
const OPTIONAL_QUERY: Readonly<Record<string, { names: readonly string[]; reason: string }>> = {
  GetTeamsUnreadForUser: {
    names: ['exclude_team'],
    // mattermost/mattermost server/channels/api4/team.go at 033bd0c6fdc8bdf51e22c090b66c2c0c2b14c3a2;
    // @mattermost/client 11.9.0 Client4.getMyTeamUnreads never sends it.
    reason: 'getTeamsUnreadForUser reads it as an "optional team id to be excluded from the result"',
  },
};

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const FIXTURES = new URL('../../fixtures/mattermost-openapi/', import.meta.url);

/** Every vendored subset file. */
function fixtureFiles(): string[] {
  return readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.yaml'))
    .sort();
}

export function loadOperations(files: readonly string[] = fixtureFiles()): ApiOperation[] {
  const ops: ApiOperation[] = [];
  for (const file of files) {
    const doc = parse(readFileSync(new URL(file, FIXTURES), 'utf8')) as { paths: Record<string, Record<string, Operation>> };
    for (const [path, item] of Object.entries(doc.paths)) {
      const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      const rank = path.split('/').map((s) => (s.startsWith('{') ? 1 : 0));
      for (const [method, operation] of Object.entries(item))
        if (METHODS.includes(method)) ops.push({ method: method.toUpperCase(), path, pattern, rank, operation });
    }
  }
  return ops;
}

function compareRank(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

export interface Checked {
  /** The operation the request matched. */
  operationId?: string;
  /** Why a request with no operation is accepted (an UNDESCRIBED entry). */
  undescribed?: string;
  problems: string[];
}

/** The problems of one request (`path` without the query string; `query`: the names of its query parameters). */
export function checkRequest(ops: readonly ApiOperation[], method: string, path: string, body: unknown, query: readonly string[] = []): Checked {
  const samePath = ops.filter((o) => o.pattern.test(path));
  if (!samePath.length) {
    const known = UNDESCRIBED.find((u) => u.method === method && u.pattern.test(path));
    if (known) return { undescribed: known.reason, problems: [] };
    return {
      problems: [
        `${method} ${path}: no vendored operation has this path; vendor it from mattermost/mattermost api/v4/source into test/fixtures/mattermost-openapi, or, if the description truly lacks it, add it to UNDESCRIBED with the reason`,
      ],
    };
  }
  // The most specific path decides, as in Mattermost's router: a GET /users/search does not
  // fall through to /users/{user_id}.
  const best = [...samePath].sort((a, b) => compareRank(a.rank, b.rank))[0]!.path;
  const candidates = samePath.filter((o) => o.path === best);
  const op = candidates.find((o) => o.method === method);
  if (!op) return { problems: [`${method} ${path}: no such operation; the description has ${candidates.map((o) => `${o.method} ${o.path}`).join(', ')}`] };
  const id = op.operation.operationId;
  const where = `${method} ${op.path} (${id})`;
  const problems: string[] = [];
  const declared = (op.operation.parameters ?? []).filter((p) => p.in === 'query');
  const extraQuery = UNDESCRIBED_QUERY[id]?.names ?? [];
  const optional = OPTIONAL_QUERY[id]?.names ?? [];
  for (const name of query)
    if (!declared.some((p) => p.name === name) && !extraQuery.includes(name))
      problems.push(`${where}: query parameter "${name}" is not declared${declared.length ? `; it has ${declared.map((p) => p.name).join(', ')}` : ''}`);
  for (const p of declared)
    if (p.required && !query.includes(p.name) && !optional.includes(p.name)) problems.push(`${where}: query parameter "${p.name}" is required`);
  const rb = op.operation.requestBody;
  const schema = rb?.content?.['application/json']?.schema;
  if (rb?.required && body === undefined) problems.push(`${where}: the request body is required`);
  if (body !== undefined && !rb) problems.push(`${where}: takes no request body`);
  if (body !== undefined && schema?.type === 'object') {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) problems.push(`${where}: the body must be a JSON object`);
    else {
      const extra = UNDESCRIBED_FIELDS[id]?.fields ?? [];
      const properties = schema.properties ?? {};
      for (const key of schema.required ?? []) if (!(key in body)) problems.push(`${where}: "${key}" is required`);
      for (const [key, value] of Object.entries(body)) {
        const declared = properties[key];
        if (!declared && !extra.includes(key)) problems.push(`${where}: "${key}" is not a field of the request body`);
        if (declared?.enum && !declared.enum.includes(value))
          problems.push(`${where}: "${key}" is ${JSON.stringify(value)}, not one of ${declared.enum.join(', ')}`);
      }
    }
  }
  if (body !== undefined && schema?.type === 'array') {
    if (!Array.isArray(body)) problems.push(`${where}: the body must be a JSON array`);
    else {
      if (schema.minItems !== undefined && body.length < schema.minItems) problems.push(`${where}: ${body.length} items, at least ${schema.minItems} needed`);
      if (schema.maxItems !== undefined && body.length > schema.maxItems) problems.push(`${where}: ${body.length} items, at most ${schema.maxItems} allowed`);
      if (schema.items?.type === 'string' && !body.every((v) => typeof v === 'string')) problems.push(`${where}: every item must be a string`);
    }
  }
  return { operationId: id, problems };
}
