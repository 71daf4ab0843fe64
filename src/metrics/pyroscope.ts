import { z } from 'zod';
import type { FetchLike } from './prometheus.ts';

/**
 * A small client of Grafana Pyroscope's query API: the querier's Connect service
 * (api/querier/v1/querier.proto, served at /querier.v1.QuerierService/<Method> by
 * pkg/api RegisterQuerierServiceHandler), in the Connect protocol's unary form: a POST
 * whose Content-Type names the codec of both the request and the answer.
 *
 * - SelectMergeProfile answers the matching profiles merged into one pprof profile
 *   (google.v1.Profile, pprof's own profile.proto), so it is asked in protobuf and the
 *   answer's bytes are a pprof profile for pprof-format. No node limit applies unless
 *   max_nodes is sent (pkg/frontend/frontend_select_merge_profile.go: "the method is
 *   used for pprof export"); none is sent. Later Pyroscopes mark it deprecated for
 *   SelectMergeStacktraces' pprof format, which 1.13 lacks, and keep it in querier.v1.
 * - SelectSeries answers, per group_by label set, the sum of each profile's values per
 *   step; it is asked in JSON (protojson) and parsed with zod.
 * A failed call answers a Connect error, {"code", "message"} in JSON, whatever the codec.
 */

export interface ProfileQuery {
  /** <name>:<sample type>:<sample unit>:<period type>:<period unit>, e.g. process_cpu:cpu:nanoseconds:cpu:nanoseconds. */
  profileTypeId: string;
  /** A Prometheus-style selector, e.g. {service_name="mattermost"}. */
  labelSelector: string;
  /** Profiles whose time (the moment they started) is in [startMs, endMs], both included. */
  startMs: number;
  endMs: number;
}

export interface SeriesQuery extends ProfileQuery {
  stepSec: number;
  groupBy: string[];
}

export interface ProfileSeries {
  labels: Record<string, string>;
  points: { timestampMs: number; value: number }[];
}

class PyroscopeError extends Error {
  constructor(method: string, message: string) {
    super(`Pyroscope ${method} failed: ${message}`);
    this.name = 'PyroscopeError';
  }
}

const connectError = z.object({ code: z.string(), message: z.string().optional() });
/** protojson writes int64 as a string, and leaves out fields at their zero value. */
const int64 = z.union([z.string().regex(/^-?\d+$/), z.number().int()]).transform(Number);
const seriesAnswer = z.object({
  series: z
    .array(
      z.object({
        labels: z.array(z.object({ name: z.string(), value: z.string().default('') })).default([]),
        points: z.array(z.object({ value: z.number().default(0), timestamp: int64.default(0) })).default([]),
      }),
    )
    .default([]),
});

export class PyroscopeClient {
  constructor(
    readonly baseUrl: string,
    private readonly fetchImpl: FetchLike = fetch,
    private readonly timeoutMs = 120_000,
  ) {}

  /** The matching profiles merged, as the pprof profile's protobuf bytes (not gzipped). */
  async selectMergeProfile(q: ProfileQuery): Promise<Uint8Array> {
    const body = Uint8Array.from(
      Buffer.concat([protoString(1, q.profileTypeId), protoString(2, q.labelSelector), protoInt64(3, q.startMs), protoInt64(4, q.endMs)]),
    );
    const answer = await this.call('SelectMergeProfile', 'application/proto', body);
    return new Uint8Array(await answer.arrayBuffer());
  }

  /** Per group_by label set, the sum of each matching profile's values in each step that has one. */
  async selectSeries(q: SeriesQuery): Promise<ProfileSeries[]> {
    const body = JSON.stringify({
      profileTypeID: q.profileTypeId,
      labelSelector: q.labelSelector,
      start: String(q.startMs),
      end: String(q.endMs),
      groupBy: q.groupBy,
      step: q.stepSec,
    });
    const answer = await this.call('SelectSeries', 'application/json', body);
    const text = await answer.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new PyroscopeError('SelectSeries', `the answer is not JSON: ${text.slice(0, 200)}`);
    }
    const parsed = seriesAnswer.safeParse(json);
    if (!parsed.success)
      throw new PyroscopeError('SelectSeries', `unexpected answer: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    return parsed.data.series.map((s) => ({
      labels: Object.fromEntries(s.labels.map((l) => [l.name, l.value])),
      points: s.points.map((p) => ({ timestampMs: p.timestamp, value: p.value })),
    }));
  }

  private async call(method: string, contentType: string, body: Uint8Array<ArrayBuffer> | string): Promise<Response> {
    const url = `${this.baseUrl.replace(/\/$/, '')}/querier.v1.QuerierService/${method}`;
    let response: Response;
    try {
      response = await this.fetchImpl(url, {
        method: 'POST',
        headers: { 'Content-Type': contentType, 'Connect-Protocol-Version': '1', 'Connect-Timeout-Ms': String(this.timeoutMs) },
        body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new PyroscopeError(method, `cannot reach Pyroscope at ${this.baseUrl}: ${(error as Error).message}`);
    }
    if (response.ok) return response;
    const text = await response.text();
    let detail = `HTTP ${response.status}: ${text.slice(0, 300)}`;
    try {
      const e = connectError.safeParse(JSON.parse(text));
      if (e.success) detail = `${e.data.code}${e.data.message ? `: ${e.data.message}` : ''} (HTTP ${response.status})`;
    } catch {
      // Not a Connect error (a proxy's page): the status and the text say what happened.
    }
    throw new PyroscopeError(method, detail);
  }
}

/** A selector matching every label exactly, its values quoted as Prometheus' parser reads them. */
export function labelSelector(labels: Record<string, string>): string {
  const names = Object.keys(labels);
  if (!names.length) throw new Error('a Pyroscope selector needs at least one label');
  for (const name of names) if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`not a label name: ${JSON.stringify(name)}`);
  return `{${names.map((n) => `${n}=${JSON.stringify(labels[n])}`).join(', ')}}`;
}

// The request message in protobuf's wire format (protobuf.dev/programming-guides/encoding):
// a string is field tag (number << 3 | 2), length, UTF-8 bytes; an int64 is tag (number << 3 | 0)
// and a varint. Times in milliseconds stay far below 2^53.
function varint(n: number): number[] {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`cannot encode ${n} as a varint here`);
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}

function protoString(field: number, s: string): Buffer {
  const bytes = Buffer.from(s, 'utf8');
  return Buffer.concat([Buffer.from([...varint((field << 3) | 2), ...varint(bytes.length)]), bytes]);
}

function protoInt64(field: number, n: number): Buffer {
  return Buffer.from([...varint(field << 3), ...varint(n)]);
}
