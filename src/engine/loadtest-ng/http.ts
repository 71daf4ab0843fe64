import type { z } from 'zod';
import { formatIssuePath } from '../../util/errors.ts';

/**
 * The network layer of the load-test-ng clients. Everything goes through a `fetch`-shaped
 * function so tests can point the clients at a local stand-in (or swap the function out)
 * without touching the network, as octokit does with its `request` option.
 */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface HttpOptions {
  /** Base URL of the agent or coordinator API, e.g. http://10.0.0.5:4000. */
  baseUrl: string;
  fetch?: FetchLike;
  /** Per-request limit. Adding users logs each one in, so this must allow for slow logins. */
  timeoutMs?: number;
}

/** A call to the load-test-ng API failed: transport error, bad status, API error or bad body. */
export class LoadTestNgError extends Error {
  constructor(
    message: string,
    /** e.g. "POST /loadagent/lt0/run" */
    readonly route: string,
    /** HTTP status, absent when no response arrived. */
    readonly httpStatus?: number,
    /** The API's own `error` field, when it sent one. */
    readonly apiError?: string,
  ) {
    super(message);
    this.name = 'LoadTestNgError';
  }
}

export interface ApiCall {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  body?: unknown;
}

/**
 * Sends one request and parses the JSON body with `schema`. Returns the HTTP status too,
 * because the API sometimes reports a failure with 200 and an `error` field.
 */
export async function callApi<S extends z.ZodType>(options: HttpOptions, call: ApiCall, schema: S): Promise<{ httpStatus: number; body: z.output<S> }> {
  const route = `${call.method} ${call.path.split('?')[0]}`;
  const url = new URL(call.path, ensureTrailingSlash(options.baseUrl)).toString();
  const doFetch = options.fetch ?? globalThis.fetch;
  let response: Response;
  try {
    response = await doFetch(url, {
      method: call.method,
      headers: call.body === undefined ? { Accept: 'application/json' } : { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
    });
  } catch (error) {
    const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${options.timeoutMs ?? 60_000} ms` : (error as Error).message;
    throw new LoadTestNgError(`load-test-ng ${route} at ${options.baseUrl} failed: ${reason}`, route);
  }
  const text = await response.text();
  const json = firstJsonValue(text);
  if (json === undefined) {
    throw new LoadTestNgError(
      `load-test-ng ${route} answered HTTP ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`,
      route,
      response.status,
    );
  }
  const parsed = schema.safeParse(json.value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${formatIssuePath(i.path)}: ${i.message}`).join('; ');
    throw new LoadTestNgError(
      `load-test-ng ${route} answered HTTP ${response.status} with an unexpected body (${issues}); is this a load-test-ng API?`,
      route,
      response.status,
    );
  }
  return { httpStatus: response.status, body: parsed.data };
}

/**
 * The first JSON value of a body. load-test-ng's handlers write each answer with a
 * json.Encoder (one value and a newline), and some write twice: api/agent.go
 * createLoadAgentHandler answers 400 when NewControllerWrapper fails but does not return,
 * so a second answer follows. The first one carries the real error. Undefined when the
 * body does not start with a JSON value.
 */
export function firstJsonValue(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    // Not one value: perhaps several.
  }
  const start = text.search(/\S/);
  if (start < 0 || (text[start] !== '{' && text[start] !== '[')) return undefined;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) {
        try {
          return { value: JSON.parse(text.slice(start, i + 1)) as unknown };
        } catch {
          return undefined;
        }
      }
    }
  }
  return undefined;
}

function ensureTrailingSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}
