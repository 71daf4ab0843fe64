import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import { formatIssuePath } from '../util/errors.ts';
import {
  createSnapshotResponseSchema,
  deleteSnapshotResponseSchema,
  dsQueryResponseSchema,
  getDashboardResponseSchema,
  getSnapshotResponseSchema,
  grafanaErrorSchema,
  saveDashboardResponseSchema,
  type CreateSnapshotResponse,
  type DsQueryResponse,
  type GetDashboardResponse,
  type GetSnapshotResponse,
  type SaveDashboardResponse,
} from './schema.ts';

/**
 * A small client for the parts of Grafana's HTTP API loadgate uses. Authentication is a
 * service-account token sent as `Authorization: Bearer`; it lives in a private field so it
 * never shows up in logs, errors or `console.log(client)`. Network calls go through a
 * swappable `fetch` so tests need no network.
 */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface GrafanaClientOptions {
  /** e.g. https://grafana.example.com or http://127.0.0.1:3000 (a sub-path is kept). */
  baseUrl: string;
  token: string;
  fetch?: FetchLike;
  timeoutMs?: number;
}

export class GrafanaError extends Error {
  constructor(
    message: string,
    readonly route: string,
    readonly httpStatus?: number,
    /** Grafana's `status` field on 412 answers, e.g. "name-exists", "version-mismatch". */
    readonly grafanaStatus?: string,
  ) {
    super(message);
    this.name = 'GrafanaError';
  }
}

const STATUS_HINTS: Record<number, string> = {
  401: 'the token was refused: check the service-account token in the environment variable',
  403: 'the token lacks permission: the service account needs the Editor role (dashboards:write, snapshots:create)',
  404: 'not found',
  412: 'precondition failed',
};

export interface SnapshotRequest {
  /** The dashboard model with each panel's data embedded (`snapshotData`). */
  dashboard: Record<string, unknown>;
  name?: string;
  /** Seconds until the snapshot expires; omitted means never. */
  expires?: number;
  /**
   * Store it on the Grafana's external snapshot server (snapshots.raintank.io unless
   * configured otherwise) so it outlives the bench's Grafana. Grafana then requires a
   * `key` and `deleteKey` from the caller; random ones are generated.
   */
  external?: boolean;
}

export interface DsQuery {
  refId: string;
  datasource: { uid: string; type?: string };
  expr: string;
  legendFormat?: string;
  intervalMs?: number;
  maxDataPoints?: number;
  range?: boolean;
  instant?: boolean;
}

export class GrafanaClient {
  readonly #token: string;
  readonly baseUrl: string;
  private readonly doFetch: FetchLike;
  private readonly timeoutMs: number;

  constructor(options: GrafanaClientOptions) {
    if (!options.token) throw new GrafanaError('a Grafana service-account token is required', '(client)');
    this.#token = options.token;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.doFetch = options.fetch ?? globalThis.fetch;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** `POST /api/dashboards/db` with `overwrite: true`: creates or replaces by uid. */
  async upsertDashboard(dashboard: Record<string, unknown>, message = 'loadgate upload'): Promise<SaveDashboardResponse> {
    // id null: Grafana matches by uid, so the same file works on any Grafana.
    const body = { dashboard: { ...dashboard, id: null }, overwrite: true, message };
    return this.request('POST', '/api/dashboards/db', body, saveDashboardResponseSchema);
  }

  /** `GET /api/dashboards/uid/:uid`. */
  async getDashboard(uid: string): Promise<GetDashboardResponse> {
    return this.request('GET', `/api/dashboards/uid/${encodeURIComponent(uid)}`, undefined, getDashboardResponseSchema);
  }

  /** `POST /api/snapshots`: stored on this Grafana, or on its external snapshot server when `external`. */
  async createSnapshot(request: SnapshotRequest): Promise<CreateSnapshotResponse> {
    const body = {
      dashboard: request.dashboard,
      external: request.external === true,
      ...(request.external ? { key: randomBytes(16).toString('hex'), deleteKey: randomBytes(16).toString('hex') } : {}),
      ...(request.name ? { name: request.name } : {}),
      ...(request.expires ? { expires: request.expires } : {}),
    };
    return this.request('POST', '/api/snapshots', body, createSnapshotResponseSchema);
  }

  /** `GET /api/snapshots/:key`. */
  async getSnapshot(key: string): Promise<GetSnapshotResponse> {
    return this.request('GET', `/api/snapshots/${encodeURIComponent(key)}`, undefined, getSnapshotResponseSchema);
  }

  /** `DELETE /api/snapshots/:key`. */
  async deleteSnapshot(key: string): Promise<{ message: string; id?: number }> {
    return this.request('DELETE', `/api/snapshots/${encodeURIComponent(key)}`, undefined, deleteSnapshotResponseSchema);
  }

  /** `POST /api/ds/query`: Grafana runs the queries against the data source; times in epoch ms. */
  async queryDataSource(queries: DsQuery[], fromMs: number, toMs: number): Promise<DsQueryResponse> {
    // One failing query makes the whole answer HTTP 400 (207 with the datasourceQueryMultiStatus
    // feature), but the body still holds every query's result: the others' frames and the
    // failing one's error (grafana pkg/api/metrics.go toJsonStreamingResponse). Kept, so one
    // bad query costs its own series only, not the whole panel.
    return this.request('POST', '/api/ds/query', { queries, from: String(fromMs), to: String(toMs) }, dsQueryResponseSchema, [400]);
  }

  /** `partialStatuses`: error statuses whose body is still a valid answer when it parses with `schema`. */
  private async request<S extends z.ZodType>(
    method: string,
    path: string,
    body: unknown,
    schema: S,
    partialStatuses: readonly number[] = [],
  ): Promise<z.output<S>> {
    const route = `${method} ${path.replace(/\/(uid|snapshots)\/[^/]+$/, '/$1/:key')}`;
    let response: Response;
    try {
      response = await this.doFetch(`${this.baseUrl}${path}`, {
        method,
        headers: {
          Accept: 'application/json',
          Authorization: `Bearer ${this.#token}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : (error as Error).message;
      throw new GrafanaError(`Grafana ${route} at ${this.baseUrl} failed: ${reason}`, route);
    }
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : {};
    } catch {
      throw new GrafanaError(`Grafana ${route} answered HTTP ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`, route, response.status);
    }
    if (!response.ok && partialStatuses.includes(response.status)) {
      const partial = schema.safeParse(json);
      if (partial.success) return partial.data;
    }
    if (!response.ok) {
      const error = grafanaErrorSchema.safeParse(json);
      const detail = error.success ? (error.data.message ?? error.data.error) : undefined;
      const hint = STATUS_HINTS[response.status];
      const grafanaStatus = error.success ? error.data.status : undefined;
      const parts = [detail, hint, grafanaStatus && `status ${grafanaStatus}`].filter(Boolean).join('; ');
      throw new GrafanaError(`Grafana ${route} failed with HTTP ${response.status}${parts ? `: ${parts}` : ''}`, route, response.status, grafanaStatus);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${formatIssuePath(i.path)}: ${i.message}`).join('; ');
      throw new GrafanaError(`Grafana ${route} answered with an unexpected body (${issues}); is ${this.baseUrl} a Grafana server?`, route, response.status);
    }
    return parsed.data;
  }
}
