import { z } from 'zod';

/**
 * Shapes of Grafana's documented HTTP API (docs/sources/developers/http_api: dashboard.md,
 * snapshot.md, data_source.md "Query a data source") and of the dashboard files loadgate
 * uploads. Responses use `z.object`/`z.looseObject`: Grafana adds fields between versions.
 */

/** A panel query. Only Prometheus targets are queried for snapshots. */
const panelTargetSchema = z.looseObject({
  refId: z.string().min(1).default('A'),
  expr: z.string().optional(),
  legendFormat: z.string().optional(),
  datasource: z.looseObject({ type: z.string().optional(), uid: z.string().optional() }).optional(),
});

const panelSchema = z.looseObject({
  id: z.number().int().nonnegative(),
  type: z.string().min(1),
  title: z.string().default(''),
  targets: z.array(panelTargetSchema).default([]),
  datasource: z.looseObject({ type: z.string().optional(), uid: z.string().optional() }).nullable().optional(),
});

const templateVariableSchema = z.looseObject({
  name: z.string().min(1),
  type: z.string(),
  query: z.unknown().optional(),
  current: z.looseObject({ value: z.unknown().optional() }).optional(),
});

/** The dashboard model (what Grafana's "Export → JSON" gives). */
export const dashboardSchema = z.looseObject({
  uid: z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'expected a uid of at most 40 letters, digits, "-" or "_"'),
  title: z.string().min(1, 'a dashboard needs a title'),
  panels: z.array(panelSchema).min(1, 'a dashboard needs at least one panel'),
  templating: z.looseObject({ list: z.array(templateVariableSchema).default([]) }).optional(),
});
export type Dashboard = z.output<typeof dashboardSchema>;

/** A dashboard file is either the model or the `{ dashboard: model }` API wrapper. */
export const dashboardFileSchema = z.union([z.looseObject({ dashboard: dashboardSchema }).transform((f) => f.dashboard), dashboardSchema]);

/** `POST /api/dashboards/db` → 200. */
export const saveDashboardResponseSchema = z.object({
  id: z.number(),
  uid: z.string(),
  url: z.string(),
  status: z.string(),
  version: z.number(),
  slug: z.string().optional(),
});
export type SaveDashboardResponse = z.output<typeof saveDashboardResponseSchema>;

/** `GET /api/dashboards/uid/:uid` → 200. */
export const getDashboardResponseSchema = z.object({
  dashboard: z.looseObject({ uid: z.string(), title: z.string() }),
  meta: z.looseObject({ url: z.string().optional(), slug: z.string().optional() }),
});
export type GetDashboardResponse = z.output<typeof getDashboardResponseSchema>;

/** `POST /api/snapshots` → 200. */
export const createSnapshotResponseSchema = z.object({
  key: z.string().min(1),
  deleteKey: z.string().min(1),
  url: z.string().min(1),
  deleteUrl: z.string().min(1),
  id: z.number().optional(),
});
export type CreateSnapshotResponse = z.output<typeof createSnapshotResponseSchema>;

/** `GET /api/snapshots/:key` → 200. */
export const getSnapshotResponseSchema = z.object({
  meta: z.looseObject({ isSnapshot: z.boolean().optional(), expires: z.string().optional(), created: z.string().optional() }),
  dashboard: z.looseObject({ title: z.string().optional(), panels: z.array(z.looseObject({})).optional() }),
});
export type GetSnapshotResponse = z.output<typeof getSnapshotResponseSchema>;

/** `DELETE /api/snapshots/:key` → 200. */
export const deleteSnapshotResponseSchema = z.object({ message: z.string(), id: z.number().optional() });

/** Error bodies: `{ message, status? }` (412 adds status such as "name-exists"). */
export const grafanaErrorSchema = z.object({ message: z.string().optional(), status: z.string().optional(), error: z.string().optional() });

/** A data frame as `/api/ds/query` returns it: a schema plus column-major values. */
export const wireFrameSchema = z.object({
  schema: z.object({
    name: z.string().optional(),
    refId: z.string().optional(),
    fields: z.array(
      z.object({
        name: z.string(),
        type: z.string().optional(),
        labels: z.record(z.string(), z.string()).nullable().optional(),
        config: z.looseObject({}).nullable().optional(),
      }),
    ),
  }),
  data: z.object({ values: z.array(z.array(z.union([z.number(), z.string(), z.null()]))) }).optional(),
});
export type WireFrame = z.output<typeof wireFrameSchema>;

/** `POST /api/ds/query` → 200 (or 400 with per-query errors). */
export const dsQueryResponseSchema = z.object({
  results: z.record(
    z.string(),
    z.object({
      status: z.number().optional(),
      error: z.string().optional(),
      frames: z.array(wireFrameSchema).optional(),
    }),
  ),
});
export type DsQueryResponse = z.output<typeof dsQueryResponseSchema>;
