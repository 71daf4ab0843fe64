import { fileURLToPath } from 'node:url';
import { GrafanaClient, type FetchLike } from '../../grafana/client.ts';
import { loadDashboardFile, publishSnapshot } from '../../grafana/snapshot.ts';
import type { Dashboard } from '../../grafana/schema.ts';

/**
 * One Grafana snapshot per test run, taken after the run from the bench's Grafana with
 * the comparison dashboard, so the run result links to its graphs. Best effort: a
 * failure is a warning for the report, never a crashed run.
 */
const COMPARISON_DASHBOARD = fileURLToPath(new URL('../../../grafana/dashboards/loadgate-comparison.json', import.meta.url));

export interface RunSnapshotsOptions {
  grafanaUrl: string;
  /** The service-account token, read when the first snapshot is taken (Secrets Manager). */
  token: () => Promise<string>;
  mode: 'local' | 'external' | 'off';
  /** The Grafana datasource of the series to show: a duet's slot b has its own Prometheus. */
  datasourceUid?: string;
  /**
   * The port of the slot's Mattermost metrics (8067; a duet's slot b 8167): the dashboard's
   * panels select `instance=~"$app_instance"`, whose default matches :8067 only.
   */
  metricsPort?: number;
  dashboardFile?: string;
  fetch?: FetchLike;
}

export type SnapshotOutcome = { link: { title: string; url: string }; warnings: string[] } | { link?: undefined; warnings: string[] };

export class RunSnapshots {
  private client: GrafanaClient | undefined;
  private dashboard: Dashboard | undefined;

  constructor(private readonly o: RunSnapshotsOptions) {}

  async take(name: string, from: Date, to: Date): Promise<SnapshotOutcome> {
    if (this.o.mode === 'off') return { warnings: [] };
    try {
      this.client ??= new GrafanaClient({ baseUrl: this.o.grafanaUrl, token: await this.o.token(), ...(this.o.fetch ? { fetch: this.o.fetch } : {}) });
      this.dashboard ??= await loadDashboardFile(this.o.dashboardFile ?? COMPARISON_DASHBOARD);
      const outcome = await publishSnapshot(this.client, {
        dashboard: this.dashboard,
        name,
        from,
        to,
        datasourceUid: this.o.datasourceUid ?? 'prometheus',
        ...(this.o.metricsPort ? { variables: { app_instance: `.*:${this.o.metricsPort}` } } : {}),
        ...(this.o.mode === 'external' ? { external: true } : {}),
      });
      return { link: { title: `Grafana snapshot: ${name}`, url: outcome.url }, warnings: outcome.warnings.map((w) => `Grafana snapshot "${name}": ${w}`) };
    } catch (error) {
      return { warnings: [`Grafana snapshot "${name}" could not be taken: ${(error as Error).message}`] };
    }
  }
}
