import { z } from 'zod';

/**
 * A client for k6's REST API (`k6 run --address 127.0.0.1:<port>`): the status document
 * (active and maximum VUs), scaling the externally-controlled executor, and the metrics
 * snapshot. Every response is parsed with zod; the HTTP call itself goes through an
 * injectable `fetch`, so tests can answer without a k6 process.
 */

/** k6 lib.ExecutionStatus, in order (lib/execution.go). */
const K6_EXECUTION_STATUS = [
  'created',
  'init-vus',
  'init-executors',
  'init-done',
  'paused-before-run',
  'started',
  'setup',
  'running',
  'teardown',
  'ended',
  'interrupted',
] as const;

export const k6StatusSchema = z.object({
  data: z.object({
    type: z.literal('status'),
    attributes: z.object({
      status: z.number().int().nonnegative(),
      paused: z.boolean().nullable(),
      vus: z.number().int().nonnegative().nullable(),
      'vus-max': z.number().int().nonnegative().nullable(),
      stopped: z.boolean(),
      running: z.boolean(),
      tainted: z.boolean(),
    }),
  }),
});

export interface K6Status {
  phase: (typeof K6_EXECUTION_STATUS)[number] | `unknown-${number}`;
  running: boolean;
  stopped: boolean;
  paused: boolean;
  vus: number;
  vusMax: number;
}

const sampleSchema = z.record(z.string(), z.number());

export const k6MetricsSchema = z.object({
  data: z.array(
    z.object({
      type: z.literal('metrics'),
      id: z.string().min(1),
      attributes: z.object({
        type: z.enum(['counter', 'gauge', 'rate', 'trend']),
        contains: z.string().nullable(),
        sample: sampleSchema,
      }),
    }),
  ),
});

export interface K6Metric {
  type: 'counter' | 'gauge' | 'rate' | 'trend';
  sample: Record<string, number>;
}

/** metric name -> its type and current summary (counter: count, rate; gauge: value; ...) */
export type K6Metrics = Map<string, K6Metric>;

const k6ErrorSchema = z.object({
  errors: z.array(z.object({ status: z.string().optional(), title: z.string().optional(), detail: z.string().optional() })).min(1),
});

export type FetchLike = (
  url: string,
  init?: { method?: string; body?: string; headers?: Record<string, string>; signal?: AbortSignal },
) => Promise<{
  status: number;
  text(): Promise<string>;
}>;

export class K6ApiError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'K6ApiError';
  }
}

export interface K6ApiOptions {
  port: number;
  /**
   * Where k6 listens: 127.0.0.1 on the local bench; an agent's address on the AWS bench
   * (its security group admits only the controller). An IPv4 address or host name.
   */
  host?: string;
  /** Defaults to the global fetch. */
  fetch?: FetchLike;
  timeoutMs?: number;
}

export class K6Api {
  readonly baseUrl: string;
  private readonly fetch: FetchLike;
  private readonly timeoutMs: number;

  constructor(options: K6ApiOptions) {
    if (!Number.isInteger(options.port) || options.port < 1 || options.port > 65535) {
      throw new RangeError(`k6 API port must be 1-65535, got ${options.port}`);
    }
    const host = options.host ?? '127.0.0.1';
    if (!/^[A-Za-z0-9.-]+$/.test(host)) throw new RangeError(`k6 API host must be an address or host name, got ${JSON.stringify(host)}`);
    this.baseUrl = `http://${host}:${options.port}`;
    this.fetch = options.fetch ?? (globalThis.fetch as unknown as FetchLike);
    this.timeoutMs = options.timeoutMs ?? 5000;
  }

  async status(): Promise<K6Status> {
    return toStatus(await this.request('GET', '/v1/status', k6StatusSchema));
  }

  /** Sets the number of active VUs of the externally-controlled executor. */
  async setVUs(vus: number): Promise<K6Status> {
    const body = { data: { type: 'status', id: 'default', attributes: { vus } } };
    return toStatus(await this.request('PATCH', '/v1/status', k6StatusSchema, body));
  }

  async metrics(): Promise<K6Metrics> {
    const parsed = await this.request('GET', '/v1/metrics', k6MetricsSchema);
    return new Map(parsed.data.map((m) => [m.id, { type: m.attributes.type, sample: m.attributes.sample }]));
  }

  private async request<T>(method: string, path: string, schema: z.ZodType<T>, body?: unknown): Promise<T> {
    const url = `${this.baseUrl}${path}`;
    let status: number;
    let text: string;
    try {
      const res = await this.fetch(url, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.status;
      text = await res.text();
    } catch (error) {
      throw new K6ApiError(`k6 REST API ${method} ${url} failed: ${describeFetchError(error)}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new K6ApiError(`k6 REST API ${method} ${path} answered HTTP ${status} with non-JSON: ${text.slice(0, 200)}`);
    }
    if (status < 200 || status >= 300) {
      const problem = k6ErrorSchema.safeParse(json);
      const detail = problem.success ? problem.data.errors.map((e) => [e.title, e.detail].filter(Boolean).join(': ')).join('; ') : text.slice(0, 200);
      throw new K6ApiError(`k6 REST API ${method} ${path} answered HTTP ${status}: ${detail}`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new K6ApiError(`k6 REST API ${method} ${path}: unexpected response (${issue?.path.join('.') || '(root)'}: ${issue?.message}); is this k6 v1?`);
    }
    return parsed.data;
  }
}

function toStatus(parsed: z.output<typeof k6StatusSchema>): K6Status {
  const a = parsed.data.attributes;
  return {
    phase: K6_EXECUTION_STATUS[a.status] ?? `unknown-${a.status}`,
    running: a.running,
    stopped: a.stopped,
    paused: a.paused ?? false,
    vus: a.vus ?? 0,
    vusMax: a['vus-max'] ?? 0,
  };
}

function describeFetchError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as Error & { cause?: { code?: string; message?: string } }).cause;
  if (error.name === 'TimeoutError') return 'timed out';
  return cause?.code ?? cause?.message ?? error.message;
}

/** A counter's total from a metrics snapshot; 0 when k6 has not seen it yet. */
export function counterTotal(metrics: K6Metrics, name: string): number {
  const metric = metrics.get(name);
  return metric?.type === 'counter' ? (metric.sample.count ?? 0) : 0;
}
