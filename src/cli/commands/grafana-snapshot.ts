import { z } from 'zod';
import { defineCommand, flag } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';
import { InputError } from '../../util/errors.ts';
import { durationSchema } from '../../util/duration.ts';
import { GrafanaClient, GrafanaError } from '../../grafana/client.ts';
import { loadDashboardFile, publishSnapshot } from '../../grafana/snapshot.ts';
import { parseVariableFlags } from '../../grafana/variables.ts';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const snapshotCommand = defineCommand({
  command: 'grafana-snapshot',
  about: `Uploads the dashboard (overwriting the one with the same uid), then creates a snapshot of
it between --from and --to with every panel's data embedded, and prints
{"title","url","dashboardUrl","key"} as JSON. The snapshot outlives the bench.`,
  flags: {
    url: flag.required(
      'URL',
      z.url({ protocol: /^https?$/, error: 'expected an http(s) URL such as http://127.0.0.1:3000' }),
      'Grafana base URL, e.g. http://10.0.1.20:3000',
    ),
    dashboard: flag.required('FILE', z.string().min(1, 'name the dashboard JSON file'), 'Dashboard JSON, e.g. grafana/dashboards/loadgate-comparison.json'),
    from: flag.required(
      'ISO',
      z.iso.datetime({ offset: true, error: 'expected an ISO 8601 time such as 2025-09-30T14:05:00Z' }),
      'Start, an ISO 8601 time, e.g. 2025-09-30T14:05:00Z',
    ),
    to: flag.required('ISO', z.iso.datetime({ offset: true, error: 'expected an ISO 8601 time such as 2025-09-30T17:05:00Z' }), 'End, an ISO 8601 time'),
    name: flag.required('NAME', z.string().min(1).max(200), 'Snapshot name, e.g. "v11.0.1-rc2 unbounded"'),
    'token-env': flag.withDefault(
      'NAME',
      // Never echo the value: a pasted token must not end up in the error output.
      z
        .string()
        .refine((v) => ENV_NAME.test(v) && v.length <= 100, 'expected the NAME of an environment variable (such as GRAFANA_TOKEN), not the token itself'),
      'GRAFANA_TOKEN',
      'Name of the environment variable holding a Grafana service-account token (Editor role). The token itself is never taken as a flag, so it stays out of process lists and logs',
    ),
    'datasource-uid': flag.withDefault(
      'UID',
      z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'expected a data source uid'),
      'prometheus',
      'uid of the Prometheus data source in that Grafana',
    ),
    expires: flag.optional('DURATION', durationSchema, 'Expire the snapshot after this long, e.g. 720h (30 days); default never'),
    var: flag.list('name=value', z.array(z.string()), 'Dashboard variable value, e.g. --var app_instance=app.*:8067'),
    external: flag.toggle("Publish on Grafana's external snapshot server (outlives the bench's Grafana)"),
  },
  notes: 'Exit 0 with the snapshot, 1 when Grafana fails, 3 on bad input (including a refused token).',
});

export const usage = snapshotCommand.usage;

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = snapshotCommand.parse(argv);
  const tokenEnv = flags['token-env'];
  const token = process.env[tokenEnv];
  if (!token) throw new InputError(`--token-env: the environment variable ${tokenEnv} is not set; put the Grafana service-account token in it`);
  const variables = parseVariableFlags(flags.var);
  const dashboard = await loadDashboardFile(flags.dashboard);
  const client = new GrafanaClient({ baseUrl: flags.url, token });
  try {
    const outcome = await publishSnapshot(client, {
      dashboard,
      name: flags.name,
      from: new Date(flags.from),
      to: new Date(flags.to),
      datasourceUid: flags['datasource-uid'],
      variables,
      ...(flags.expires ? { expiresSec: flags.expires } : {}),
      ...(flags.external ? { external: true } : {}),
    });
    for (const warning of outcome.warnings) io.err(`warning: ${warning}`);
    io.out(JSON.stringify({ title: outcome.title, url: outcome.url, dashboardUrl: outcome.dashboardUrl, key: outcome.key }));
    return 0;
  } catch (error) {
    if (error instanceof GrafanaError) {
      if (error.httpStatus === 401 || error.httpStatus === 403) throw new InputError(`${error.message} (token from ${tokenEnv})`);
      io.err(`loadgate grafana-snapshot: ${error.message}`);
      return 1;
    }
    throw error;
  }
}
