// A CommonJS package whose named exports Node's ESM loader cannot detect: take the default.
import { z } from 'zod';
import { InputError } from '../../util/errors.ts';

/**
 * A Mattermost gate needs a licence. Without one Mattermost starts no metrics server at all
 * (MetricsSettings is an Enterprise feature: server/enterprise/metrics registers only with a
 * licence), so every mattermost_* series the gate judges (API and store latencies, CPU,
 * heap, the 5xx health query) is absent and the run cannot be judged; nor can app nodes
 * form a high-availability cluster (ClusterSettings is licensed too). Refused before any
 * money is spent, and watched for during a run.
 */
const LICENCE_REASON =
  'without a licence Mattermost serves no /metrics (every mattermost_* series the gate compares would be missing) and cannot run its app nodes as a cluster';

/** `loadgate plan` (the provisioning path): the licence secret must be given. */
export function requireLicenceSecret(system: string, licenseSecretArn: string | undefined, flag: string): void {
  if (system !== 'mattermost' || licenseSecretArn) return;
  throw new InputError(
    `${flag}: a Mattermost gate on AWS needs a licence: ${LICENCE_REASON}. Store the licence in Secrets Manager and pass its ARN (vars.LOADGATE_LICENSE_SECRET_ARN)`,
  );
}

// api4/license.go getClientLicense, format=old: a flat map of strings; IsLicensed "true"/"false".
const clientLicenseSchema = z.object({ IsLicensed: z.enum(['true', 'false']) });

/** Checks an answer of GET /api/v4/license/client?format=old; `where` names the server in messages. */
export function checkClientLicence(answer: unknown, where: string): void {
  const parsed = clientLicenseSchema.safeParse(answer);
  if (!parsed.success) throw new Error(`Mattermost at ${where} answered /api/v4/license/client with an unexpected body: no IsLicensed "true" or "false"`);
  if (parsed.data.IsLicensed !== 'true') {
    // platform/license.go SaveLicense refuses a file licence with fewer users (Features.Users)
    // than the database holds, and an expired one; LoadLicense then runs unlicensed.
    throw new InputError(
      `Mattermost at ${where} has no licence installed: ${LICENCE_REASON}. Provision the bench with license-secret-arn, with a licence that has not expired and whose user count is at least the dataset's users (Mattermost refuses one with fewer: "api.license.add_license.unique_users.app_error" in its log)`,
    );
  }
}

/** Any Mattermost series at all, as Prometheus on the metrics node sees them. */
export const MATTERMOST_SERIES_QUERY = 'count({__name__=~"mattermost_.+"})';

/**
 * During a run: if the first `graceSec` of load bring no mattermost_* series, the run stops
 * as invalid with the reason, without waiting for the coordinator's no-data limit.
 * `check` returns the problem once, then undefined; once a series is seen it stops asking.
 */
export class MattermostSeriesWatch {
  private seen = false;
  private reported = false;

  constructor(
    private readonly count: () => Promise<number | undefined>,
    private readonly graceSec = 60,
  ) {}

  async check(elapsedSec: number): Promise<string | undefined> {
    if (this.seen || this.reported) return undefined;
    const n = await this.count().catch(() => undefined);
    if (n !== undefined && n > 0) {
      this.seen = true;
      return undefined;
    }
    if (elapsedSec < this.graceSec) return undefined;
    this.reported = true;
    return `no mattermost_* series in Prometheus after ${this.graceSec} s of load: ${LICENCE_REASON}; is a licence installed?`;
  }
}
