import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';

/**
 * A loopback stand-in for the Grafana HTTP API routes loadgate calls, following the
 * documented requests, answers and status codes (docs/sources/developers/http_api:
 * dashboard.md, snapshot.md, data_source.md):
 *
 * - 401 without a valid `Authorization: Bearer` token, 403 for a read-only token on writes;
 * - POST /api/dashboards/db: 400 on a missing/untitled dashboard, 412 `name-exists` when the
 *   uid exists and `overwrite` is false, else 200 { id, uid, url, status, version, slug };
 * - GET /api/dashboards/uid/:uid: 200 { dashboard, meta } or 404;
 * - POST /api/ds/query: 400 on bad bodies, 404 for an unknown data source, else the frames of
 *   the series that exist in that data source (`instances`: each Prometheus's scrape targets):
 *   as Prometheus evaluates a query, a selector whose label matchers (=, !=, =~, !~, regexes
 *   fully anchored) match no series yields no data (Prometheus HTTP API, "Expression
 *   queries"), and Grafana then answers status 200 with one frame that has no fields, only
 *   metadata (pkg/promlib: "Add frame to attach metadata", ExecutedQueryString); an aggregation
 *   (sum, histogram_quantile) answers one series, anything else one per matching instance
 *   (a `fail_query` expr answers a per-query error);
 * - POST /api/snapshots: 400 without a dashboard or with external=true lacking key/deleteKey,
 *   else 200 { deleteKey, deleteUrl, key, url, id }, with `url` and `deleteUrl` built from
 *   the server's root_url as Grafana does (pkg/api/dashboard_snapshot.go), whose default is
 *   http://localhost:3000/ (conf/defaults.ini: `root_url = %(protocol)s://%(domain)s:%(http_port)s/`,
 *   domain localhost, http_port 3000), not from the address the request reached;
 * - GET / DELETE /api/snapshots/:key: 200 or 404.
 */

export interface Snapshot {
  id: number;
  key: string;
  deleteKey: string;
  name?: string;
  expires?: number;
  external: boolean;
  dashboard: Record<string, unknown>;
}

export class GrafanaStandIn {
  readonly dashboards = new Map<string, { id: number; version: number; dashboard: Record<string, unknown> }>();
  readonly snapshots = new Map<string, Snapshot>();
  readonly requests: { method: string; path: string; authorization?: string }[] = [];
  readonly datasources = new Set(['prometheus']);
  /**
   * The `instance` labels of the series each data source holds (every metric exists on each);
   * a data source added to `datasources` without an entry here holds none.
   */
  readonly instances = new Map<string, string[]>([['prometheus', ['app0:8067', 'app1:8067']]]);
  /** Every PromQL expression `/api/ds/query` received. */
  readonly queriedExprs: string[] = [];
  /** The data source uids `/api/ds/query` was asked for. */
  readonly queriedDatasources = new Set<string>();
  private nextId = 1;
  private server: Server | undefined;
  baseUrl = '';

  constructor(
    private readonly tokens: { editor: string; viewer?: string },
    /** [server] root_url; Grafana's default unless the node sets GF_SERVER_ROOT_URL. */
    private readonly rootUrl = 'http://localhost:3000/',
  ) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.baseUrl;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const method = req.method ?? 'GET';
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    this.requests.push({ method, path, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
    const send = (status: number, body: unknown): void => {
      res.writeHead(status, { 'Content-Type': 'application/json; charset=UTF-8' }).end(JSON.stringify(body));
    };

    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const role = token === this.tokens.editor ? 'editor' : token !== undefined && token === this.tokens.viewer ? 'viewer' : undefined;
    if (!role) return send(401, { message: 'Unauthorized' });
    const writes = method !== 'GET' && path !== '/api/ds/query';
    if (writes && role !== 'editor') return send(403, { message: 'Access denied' });

    let body: Record<string, unknown> = {};
    if (text) {
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        return send(400, { message: 'bad request data' });
      }
    }

    if (method === 'POST' && path === '/api/dashboards/db') return this.saveDashboard(body, send);
    let m = /^\/api\/dashboards\/uid\/([^/]+)$/.exec(path);
    if (method === 'GET' && m) {
      const stored = this.dashboards.get(decodeURIComponent(m[1]!));
      if (!stored) return send(404, { message: 'Dashboard not found' });
      const uid = stored.dashboard.uid as string;
      return send(200, {
        dashboard: { ...stored.dashboard, id: stored.id, version: stored.version },
        meta: { url: `/d/${uid}/${slug(stored.dashboard.title)}`, slug: slug(stored.dashboard.title), isStarred: false },
      });
    }
    if (method === 'POST' && path === '/api/ds/query') return this.query(body, send);
    if (method === 'POST' && path === '/api/snapshots') return this.createSnapshot(body, send);
    m = /^\/api\/snapshots\/([^/]+)$/.exec(path);
    if (m) {
      const key = decodeURIComponent(m[1]!);
      const snapshot = this.snapshots.get(key);
      if (!snapshot) return send(404, { message: 'Snapshot not found' });
      if (method === 'GET') {
        return send(200, {
          meta: {
            isSnapshot: true,
            type: 'snapshot',
            canSave: false,
            canEdit: false,
            canStar: false,
            slug: '',
            created: '2025-09-30T18:00:00Z',
            expires: '2200-01-01T00:00:00Z',
          },
          dashboard: snapshot.dashboard,
        });
      }
      if (method === 'DELETE') {
        this.snapshots.delete(key);
        return send(200, { message: "Snapshot deleted. It might take an hour before it's cleared from any CDN caches.", id: snapshot.id });
      }
    }
    send(404, { message: 'Not found' });
  }

  private saveDashboard(body: Record<string, unknown>, send: (s: number, b: unknown) => void): void {
    const dashboard = body.dashboard as Record<string, unknown> | undefined;
    if (!dashboard || typeof dashboard !== 'object') return send(400, { message: 'bad request data' });
    if (typeof dashboard.title !== 'string' || !dashboard.title.trim()) return send(400, { message: 'Dashboard title cannot be empty', status: 'empty-name' });
    const uid = typeof dashboard.uid === 'string' && dashboard.uid ? dashboard.uid : randomBytes(7).toString('hex');
    if (uid.length > 40) return send(400, { message: 'Dashboard UID too long' });
    const existing = this.dashboards.get(uid);
    if (existing && body.overwrite !== true) return send(412, { message: 'A dashboard with the same uid already exists', status: 'name-exists' });
    if (dashboard.id !== null && dashboard.id !== undefined && (!existing || existing.id !== dashboard.id))
      return send(404, { message: 'Dashboard not found' });
    const stored = { id: existing?.id ?? this.nextId++, version: (existing?.version ?? 0) + 1, dashboard: { ...dashboard, uid } };
    this.dashboards.set(uid, stored);
    send(200, { id: stored.id, uid, url: `/d/${uid}/${slug(dashboard.title)}`, status: 'success', version: stored.version, slug: slug(dashboard.title) });
  }

  private query(body: Record<string, unknown>, send: (s: number, b: unknown) => void): void {
    const queries = body.queries as { refId?: string; datasource?: { uid?: string }; expr?: string; intervalMs?: number; maxDataPoints?: number }[] | undefined;
    if (!Array.isArray(queries) || queries.length === 0) return send(400, { message: 'No queries found' });
    const from = Number(body.from);
    const to = Number(body.to);
    if (!Number.isFinite(from) || !Number.isFinite(to) || to <= from) return send(400, { message: 'invalid time range' });
    const results: Record<string, unknown> = {};
    let failed = false;
    for (const q of queries) {
      const refId = q.refId ?? 'A';
      if (!q.datasource?.uid || !this.datasources.has(q.datasource.uid)) return send(404, { message: 'Data source not found' });
      if (typeof q.expr !== 'string' || !q.expr) return send(400, { message: `query ${refId}: expr is required` });
      this.queriedExprs.push(q.expr);
      this.queriedDatasources.add(q.datasource.uid);
      if (q.expr.includes('fail_query')) {
        failed = true;
        results[refId] = { status: 400, error: 'bad_data: parse error: unexpected identifier "fail_query"' };
        continue;
      }
      // Deterministic data: one point per interval, at most maxDataPoints, two instances for per-instance exprs.
      const step = Math.max(q.intervalMs ?? 15_000, Math.ceil((to - from) / (q.maxDataPoints ?? 100)));
      const times: number[] = [];
      // Grafana's Prometheus data source aligns the range to the step, the start down and the
      // end up (pkg/promlib AlignTimeRange; the frontend's alignRange), so a window shorter
      // than one step still has a point.
      for (let t = Math.floor(from / step) * step; t <= Math.ceil(to / step) * step; t += step) times.push(t);
      const matching = matchingInstances(q.expr, this.instances.get(q.datasource.uid) ?? []);
      if (!matching.length) {
        results[refId] = {
          status: 200,
          frames: [
            { schema: { refId, meta: { typeVersion: [0, 0], executedQueryString: `Expr: ${q.expr}\nStep: ${step}ms` }, fields: [] }, data: { values: [] } },
          ],
        };
        continue;
      }
      const instances = q.expr.includes('sum(') || q.expr.includes('histogram_quantile') ? [undefined] : matching;
      results[refId] = {
        status: 200,
        frames: instances.map((instance, k) => ({
          schema: {
            refId,
            fields: [
              { name: 'Time', type: 'time', typeInfo: { frame: 'time.Time' } },
              {
                name: 'Value',
                type: 'number',
                typeInfo: { frame: 'float64' },
                labels: instance ? { instance } : {},
                config: { displayNameFromDS: instance ?? '' },
              },
            ],
          },
          data: { values: [times, times.map((_, i) => (i + 1) * (k + 1))] },
        })),
      };
    }
    send(failed ? 400 : 200, { results });
  }

  private createSnapshot(body: Record<string, unknown>, send: (s: number, b: unknown) => void): void {
    const dashboard = body.dashboard as Record<string, unknown> | undefined;
    if (!dashboard || typeof dashboard !== 'object' || Array.isArray(dashboard)) return send(400, { message: 'bad request data' });
    if (body.expires !== undefined && (typeof body.expires !== 'number' || body.expires < 0)) return send(400, { message: 'bad request data' });
    const external = body.external === true;
    if (external && (typeof body.key !== 'string' || typeof body.deleteKey !== 'string'))
      return send(400, { message: 'key and deleteKey are required for external snapshots' });
    const key = typeof body.key === 'string' ? body.key : randomBytes(16).toString('hex');
    const deleteKey = typeof body.deleteKey === 'string' ? body.deleteKey : randomBytes(16).toString('hex');
    const snapshot: Snapshot = {
      id: this.nextId++,
      key,
      deleteKey,
      external,
      dashboard,
      ...(typeof body.name === 'string' ? { name: body.name } : {}),
      ...(typeof body.expires === 'number' ? { expires: body.expires } : {}),
    };
    this.snapshots.set(key, snapshot);
    const root = this.rootUrl.replace(/\/?$/, '/');
    send(200, { deleteKey, deleteUrl: `${root}api/snapshots-delete/${deleteKey}`, key, url: `${root}dashboard/snapshot/${key}`, id: snapshot.id });
  }
}

function slug(title: unknown): string {
  return String(title)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/**
 * The instances every selector of `expr` matches (the series all of its selectors find); an
 * empty list when any selector matches none. Selectors are `name{...}`; only `instance`
 * matchers narrow the set here, since every metric exists on every instance.
 */
function matchingInstances(expr: string, instances: readonly string[]): string[] {
  let found = [...instances];
  for (const selector of expr.matchAll(/\{([^}]*)\}/g)) {
    for (const m of (selector[1] ?? '').matchAll(/(\w+)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g)) {
      if (m[1] !== 'instance') continue;
      const value = JSON.parse(`"${m[3]}"`) as string;
      const test = (instance: string): boolean => {
        switch (m[2]) {
          case '=':
            return instance === value;
          case '!=':
            return instance !== value;
          case '=~':
            return new RegExp(`^(?:${value})$`).test(instance);
          default:
            return !new RegExp(`^(?:${value})$`).test(instance);
        }
      };
      found = found.filter(test);
    }
  }
  return found;
}
