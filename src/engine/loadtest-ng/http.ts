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
export async function callApi<S extends z.ZodType>(
  options: HttpOptions,
  call: ApiCall,
  schema: S,
): Promise<{ httpStatus: number; body: z.output<S> }> {
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
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new LoadTestNgError(
      `load-test-ng ${route} answered HTTP ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`,
      route,
      response.status,
    );
  }
  const parsed = schema.safeParse(json);
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

function ensureTrailingSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}
