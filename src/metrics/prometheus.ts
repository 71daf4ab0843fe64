import { z } from 'zod';

/**
 * A small Prometheus HTTP API client: instant queries and range queries over fetch, each
 * response checked with zod at the boundary. Errors carry the query and Prometheus' own
 * message; an empty result ("Prometheus has no data") is an error of its own type, so the
 * caller can report which series was missing instead of graphing nothing.
 */
export type FetchLike = (url: string, init?: RequestInit) => Promise<Response>;

/** Prometheus encodes sample values as strings, including "NaN" and "+Inf". */
const sampleValue = z.string().transform((s) => Number(s));
const samplePair = z.tuple([z.number(), sampleValue]);
const metricLabels = z.record(z.string(), z.string());

const vectorData = z.object({
  resultType: z.literal('vector'),
  result: z.array(z.object({ metric: metricLabels, value: samplePair })),
});
const matrixData = z.object({
  resultType: z.literal('matrix'),
  result: z.array(z.object({ metric: metricLabels, values: z.array(samplePair) })),
});
const scalarData = z.object({ resultType: z.literal('scalar'), result: samplePair });

const successSchema = z.object({
  status: z.literal('success'),
  data: z.discriminatedUnion('resultType', [vectorData, matrixData, scalarData]),
  warnings: z.array(z.string()).optional(),
});
const errorSchema = z.object({ status: z.literal('error'), errorType: z.string(), error: z.string() });

export interface InstantSample {
  labels: Record<string, string>;
  value: number;
}
export interface RangeSeries {
  labels: Record<string, string>;
  /** Unix seconds. */
  t: number[];
  v: number[];
}

export class PrometheusError extends Error {
  constructor(
    readonly query: string,
    message: string,
  ) {
    super(`Prometheus query failed: ${message}\n  query: ${query}`);
    this.name = 'PrometheusError';
  }
}

export class NoDataError extends PrometheusError {
  constructor(query: string, detail = 'the query returned no series') {
    super(query, `Prometheus has no data (${detail}); is the scraped component up and exporting it?`);
    this.name = 'NoDataError';
  }
}

export class PrometheusClient {
  constructor(
    readonly baseUrl: string,
    private readonly fetchImpl: FetchLike = fetch,
    private readonly timeoutMs = 15_000,
  ) {}

  private async get(path: string, params: Record<string, string>, query: string): Promise<z.output<typeof successSchema>['data']> {
    const url = `${this.baseUrl}${path}?${new URLSearchParams(params).toString()}`;
    let response: Response;
    try {
      response = await this.fetchImpl(url, { signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (error) {
      throw new PrometheusError(query, `cannot reach Prometheus at ${this.baseUrl}: ${(error as Error).message}`);
    }
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new PrometheusError(query, `HTTP ${response.status}, not JSON: ${text.slice(0, 200)}`);
    }
    const failed = errorSchema.safeParse(json);
    if (failed.success) throw new PrometheusError(query, `${failed.data.errorType}: ${failed.data.error}`);
    const ok = successSchema.safeParse(json);
    if (!ok.success) {
      throw new PrometheusError(
        query,
        `unexpected response (HTTP ${response.status}): ${ok.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    }
    return ok.data.data;
  }

  /** Instant query: every series' value at `time` (unix seconds; now when omitted). */
  async query(promql: string, time?: number): Promise<InstantSample[]> {
    const params: Record<string, string> = { query: promql };
    if (time !== undefined) params.time = String(time);
    const data = await this.get('/api/v1/query', params, promql);
    if (data.resultType === 'scalar') return [{ labels: {}, value: data.result[1] }];
    if (data.resultType !== 'vector') throw new PrometheusError(promql, `expected an instant vector, got a ${data.resultType}`);
    return data.result.map((r) => ({ labels: r.metric, value: r.value[1] }));
  }

  /**
   * A query that must give one number (a health query): the single series' value, null
   * when the value is NaN (e.g. a rate divided by a zero rate: no traffic yet), and
   * NoDataError when there is no series at all.
   */
  async queryNumber(promql: string, time?: number): Promise<number | null> {
    const samples = await this.query(promql, time);
    if (samples.length === 0) throw new NoDataError(promql);
    if (samples.length > 1) throw new PrometheusError(promql, `expected a single number, got ${samples.length} series; aggregate it (sum, avg, max)`);
    const value = (samples[0] as InstantSample).value;
    return Number.isNaN(value) ? null : value;
  }

  /** Range query from `start` to `end` (unix seconds) at `stepSec`. */
  async queryRange(promql: string, start: number, end: number, stepSec: number): Promise<RangeSeries[]> {
    const data = await this.get('/api/v1/query_range', { query: promql, start: String(start), end: String(end), step: String(stepSec) }, promql);
    if (data.resultType !== 'matrix') throw new PrometheusError(promql, `expected a range vector, got a ${data.resultType}`);
    return data.result.map((r) => ({ labels: r.metric, t: r.values.map((p) => p[0]), v: r.values.map((p) => p[1]) }));
  }
}
