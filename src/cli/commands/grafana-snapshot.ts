import { z } from 'zod';
import { parseFlags } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';
import { InputError } from '../../util/errors.ts';
import { durationSchema } from '../../util/duration.ts';
import { GrafanaClient, GrafanaError } from '../../grafana/client.ts';
import { loadDashboardFile, publishSnapshot } from '../../grafana/snapshot.ts';
import { parseVariableFlags } from '../../grafana/variables.ts';

export const usage = `Usage: loadgate grafana-snapshot --url URL --dashboard FILE --from ISO --to ISO --name NAME
                                 [--token-env NAME] [--datasource-uid UID] [--expires DURATION] [--var name=value]... [--external]

Uploads the dashboard (overwriting the one with the same uid), then creates a snapshot of
it between --from and --to with every panel's data embedded, and prints
{"title","url","dashboardUrl","key"} as JSON. The snapshot outlives the bench.

  --url             Grafana base URL, e.g. http://10.0.1.20:3000
  --token-env       Name of the environment variable holding a Grafana service-account
                    token (Editor role). Default GRAFANA_TOKEN. The token itself is never
                    taken as a flag, so it stays out of process lists and logs.
  --dashboard       Dashboard JSON, e.g. grafana/dashboards/loadgate-comparison.json
  --from, --to      ISO 8601 times, e.g. 2025-09-30T14:05:00Z
  --name            Snapshot name, e.g. "v11.0.1-rc2 unbounded"
  --datasource-uid  uid of the Prometheus data source in that Grafana (default prometheus)
  --expires         Expire the snapshot after this long, e.g. 720h (30 days); default never
  --var             Dashboard variable value, repeatable, e.g. --var app_instance=app.*:8067
  --external        Publish on Grafana's external snapshot server (outlives the bench's Grafana)

Exit 0 with the snapshot, 1 when Grafana fails, 3 on bad input (including a refused token).`;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const flagsSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/, error: 'expected an http(s) URL such as http://127.0.0.1:3000' }),
  'token-env': z
    .string()
    .default('GRAFANA_TOKEN')
    // Never echo the value: a pasted token must not end up in the error output.
    .refine((v) => ENV_NAME.test(v) && v.length <= 100, 'expected the NAME of an environment variable (such as GRAFANA_TOKEN), not the token itself'),
  dashboard: z.string().min(1, 'name the dashboard JSON file'),
  from: z.iso.datetime({ offset: true, error: 'expected an ISO 8601 time such as 2025-09-30T14:05:00Z' }),
  to: z.iso.datetime({ offset: true, error: 'expected an ISO 8601 time such as 2025-09-30T17:05:00Z' }),
  name: z.string().min(1).max(200),
  'datasource-uid': z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'expected a data source uid').default('prometheus'),
  expires: durationSchema.optional(),
  var: z.array(z.string()).default([]),
  external: z.boolean().default(false),
  positionals: z.array(z.string()).max(0, 'takes no positional arguments'),
});

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = parseFlags(
    argv,
    {
      url: { type: 'string' },
      'token-env': { type: 'string' },
      dashboard: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      name: { type: 'string' },
      'datasource-uid': { type: 'string' },
      expires: { type: 'string' },
      var: { type: 'string', multiple: true },
      external: { type: 'boolean' },
    },
    flagsSchema,
    usage,
  );
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
