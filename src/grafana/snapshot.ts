import { readFile } from 'node:fs/promises';
import { InputError, formatIssuePath } from '../util/errors.ts';
import { GrafanaClient, GrafanaError, type DsQuery, type FetchLike } from './client.ts';
import { toSnapshotFrames, type SnapshotFrame } from './frames.ts';
import { dashboardFileSchema, type Dashboard } from './schema.ts';
import { dashboardVariables, interpolate } from './variables.ts';

/**
 * Uploads the comparison dashboard and publishes a snapshot of it over one time range with
 * each panel's data embedded, so the link keeps working after the bench (and its
 * Prometheus) is destroyed. The data comes from Grafana itself (`/api/ds/query`).
 */

export interface SnapshotOptions {
  dashboard: Dashboard;
  name: string;
  from: Date;
  to: Date;
  /** uid of the Prometheus data source in this Grafana. */
  datasourceUid: string;
  variables?: Record<string, string>;
  /** Seconds until the snapshot expires; 0/undefined: never. */
  expiresSec?: number;
  maxDataPoints?: number;
  /** Publish on Grafana's external snapshot server instead of the bench's Grafana. */
  external?: boolean;
  /** Where the snapshot is kept; default `snapshotStoreFromEnv()`. */
  store?: SnapshotStore;
}

/**
 * Where a snapshot is kept. A bench's Grafana is destroyed at teardown, so a link to it
 * dies with the bench:
 * - `source`: the Grafana the data comes from keeps it (one that outlives the run);
 * - `grafana`: another Grafana keeps it, the user's own: the snapshot is created there
 *   with `POST /api/snapshots` and `external: false`, every panel's data embedded, so it
 *   needs no data source there (Grafana HTTP API, "Snapshot API");
 * - `none`: nothing outlives the source, so no snapshot is taken and nothing is linked.
 */
export type SnapshotStore = { kind: 'source' } | { kind: 'none' } | { kind: 'grafana'; client: GrafanaClient };

/**
 * The store the environment names: LOADGATE_SNAPSHOT_GRAFANA is the URL of the Grafana
 * that keeps the snapshots (its token in LOADGATE_GRAFANA_TOKEN), or `none`; unset keeps
 * them on the source Grafana. The reusable workflow always sets it for the AWS bench.
 */
export function snapshotStoreFromEnv(env: NodeJS.ProcessEnv = process.env, fetch?: FetchLike): SnapshotStore {
  const target = env.LOADGATE_SNAPSHOT_GRAFANA?.trim();
  if (target === undefined || target === '') return { kind: 'source' };
  if (target === 'none') return { kind: 'none' };
  if (!/^https?:\/\/\S+$/.test(target)) throw new InputError(`LOADGATE_SNAPSHOT_GRAFANA: expected the URL of a Grafana or none, got "${target.slice(0, 80)}"`);
  const token = env.LOADGATE_GRAFANA_TOKEN ?? '';
  if (!token) {
    throw new InputError(
      `LOADGATE_GRAFANA_TOKEN: empty, but LOADGATE_SNAPSHOT_GRAFANA names ${target} to keep each test's snapshot, which takes a service-account token with snapshots:create there. ` +
        'In the workflow: the repository (or organisation) secret LOADGATE_GRAFANA_TOKEN, passed by the caller as grafana-token, beside the variable LOADGATE_GRAFANA_URL (docs/github.md, "Secrets and variables"); ' +
        'by hand: export LOADGATE_GRAFANA_TOKEN, or set LOADGATE_SNAPSHOT_GRAFANA=none to keep no snapshot',
    );
  }
  return { kind: 'grafana', client: new GrafanaClient({ baseUrl: target, token, ...(fetch ? { fetch } : {}) }) };
}

export interface SnapshotOutcome {
  /** What goes into a run result's `links`. */
  title: string;
  url: string;
  key: string;
  /** The live (uploaded) dashboard, while the bench lives. */
  dashboardUrl: string;
  /** Panels whose data could not be fetched; they are in the snapshot, empty. */
  warnings: string[];
}

export async function loadDashboardFile(path: string): Promise<Dashboard> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new InputError(`cannot read dashboard ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new InputError(`${path} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = dashboardFileSchema.safeParse(json);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${formatIssuePath(i.path)}: ${i.message}`);
    throw new InputError(`${path} is not a Grafana dashboard:\n${lines.join('\n')}`, lines);
  }
  return parsed.data;
}

export async function publishSnapshot(client: GrafanaClient, options: SnapshotOptions): Promise<SnapshotOutcome> {
  const fromMs = options.from.getTime();
  const toMs = options.to.getTime();
  if (!(toMs > fromMs)) throw new InputError('--to: must be later than --from');
  const store = options.store ?? snapshotStoreFromEnv();
  if (store.kind === 'none' && !options.external) {
    throw new InputError(
      `no snapshot of ${client.baseUrl}: that Grafana is destroyed with the bench and no Grafana is named to keep the snapshot (set the variable LOADGATE_GRAFANA_URL and the secret LOADGATE_GRAFANA_TOKEN, docs/github.md)`,
    );
  }
  // Check every query's variables before touching Grafana.
  const plans = panelQueries(options, fromMs, toMs);
  const saved = await client.upsertDashboard(options.dashboard as Record<string, unknown>, `loadgate: ${options.name}`);
  const { panels, warnings } = await panelsWithData(client, plans, options);

  const snapshotDashboard = {
    ...options.dashboard,
    id: null,
    editable: false,
    panels,
    time: { from: options.from.toISOString(), to: options.to.toISOString() },
    snapshot: { timestamp: new Date().toISOString() },
  };
  // The external snapshot server is the source Grafana's to reach; otherwise the store keeps it.
  const keeper = store.kind === 'grafana' && !options.external ? store.client : client;
  const created = await keeper.createSnapshot({
    dashboard: snapshotDashboard,
    name: options.name,
    ...(options.expiresSec ? { expires: options.expiresSec } : {}),
    ...(options.external ? { external: true } : {}),
  });
  return {
    title: options.name,
    // Grafana builds `url` from its root_url, which defaults to http://localhost:3000/; the
    // address it was reached at is the one a reader can reach too.
    url: options.external ? absolute(keeper.baseUrl, created.url) : `${keeper.baseUrl}/dashboard/snapshot/${encodeURIComponent(created.key)}`,
    key: created.key,
    dashboardUrl: absolute(client.baseUrl, saved.url),
    warnings,
  };
}

type Panel = Dashboard['panels'][number];

/** Each panel's visible queries with the dashboard's variables filled in. */
function panelQueries(options: SnapshotOptions, fromMs: number, toMs: number): { panel: Panel; queries: DsQuery[] }[] {
  const variables = dashboardVariables(options.dashboard, options.datasourceUid, options.variables);
  return options.dashboard.panels.map((panel) => ({
    panel,
    queries: panel.targets
      .filter((t) => typeof t.expr === 'string' && t.expr.trim() !== '' && t.hide !== true)
      .map((t): DsQuery => ({
        refId: t.refId,
        datasource: { uid: options.datasourceUid, type: 'prometheus' },
        expr: interpolate(t.expr!, variables, `panel "${panel.title}" query ${t.refId}`),
        ...(t.legendFormat ? { legendFormat: t.legendFormat } : {}),
        range: true,
        instant: false,
        maxDataPoints: options.maxDataPoints ?? 1000,
        intervalMs: intervalFor(fromMs, toMs, options.maxDataPoints ?? 1000),
      })),
  }));
}

/**
 * The panels with their data embedded. A panel whose query fails is kept empty, with a
 * warning; no data in any panel, or a refused token, is an error.
 */
async function panelsWithData(
  client: GrafanaClient,
  plans: readonly { panel: Panel; queries: DsQuery[] }[],
  options: SnapshotOptions,
): Promise<{ panels: Record<string, unknown>[]; warnings: string[] }> {
  const warnings: string[] = [];
  const panels: Record<string, unknown>[] = [];
  let withData = 0;
  for (const { panel, queries } of plans) {
    let snapshotData: SnapshotFrame[] = [];
    if (queries.length) {
      try {
        const response = await client.queryDataSource(queries, options.from.getTime(), options.to.getTime());
        for (const query of queries) {
          const result = response.results[query.refId];
          if (result?.error) warnings.push(`panel "${panel.title}" query ${query.refId}: ${result.error}`);
          snapshotData = snapshotData.concat(toSnapshotFrames(query.refId, result?.frames ?? [], query.legendFormat));
        }
        // A query that finds no series still answers a frame, with no fields, to carry its
        // metadata (Grafana pkg/promlib, "Add frame to attach metadata"): data means values.
        if (snapshotData.some((frame) => frame.fields.some((field) => field.values.length > 0))) withData++;
      } catch (error) {
        if (!(error instanceof GrafanaError) || error.httpStatus === 401 || error.httpStatus === 403) throw error;
        warnings.push(`panel "${panel.title}": ${error.message}`);
      }
    }
    panels.push({ ...panel, snapshotData });
  }
  if (withData === 0) {
    throw new GrafanaError(
      `no panel returned data between ${options.from.toISOString()} and ${options.to.toISOString()}:\n${warnings.join('\n') || 'every query came back empty'}`,
      'POST /api/ds/query',
    );
  }
  return { panels, warnings };
}

/** Grafana's step: at least 15 s (a scrape interval), at most maxDataPoints points. */
function intervalFor(fromMs: number, toMs: number, maxDataPoints: number): number {
  return Math.max(15_000, Math.ceil((toMs - fromMs) / maxDataPoints / 1000) * 1000);
}

/** Grafana answers absolute URLs (from its root_url) or paths; links need absolute ones. */
function absolute(baseUrl: string, url: string): string {
  return new URL(url, `${baseUrl}/`).toString();
}
