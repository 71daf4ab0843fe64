import { z } from 'zod';
import type { GateConfig } from '../config/schema.ts';
import { MATTERMOST_DOWNLOAD_URL } from '../chat-servers/mattermost/defaults.ts';
import { InputError } from '../util/errors.ts';
import { benchNodeDefaults, checkedOverrides, deepMerge } from '../chat-servers/mattermost/config-patch.ts';
import { isSupportedLoadTestNgVersion, SUPPORTED_LOADTEST_NG_VERSIONS } from '../config/engine-versions.ts';
import type { DurationEstimate } from './cost.ts';
import { usersNeeded, type ResolvedBench } from './presets.ts';
import { benchName, stateKey, type RunInfo } from './run-info.ts';

/**
 * terraform.tfvars.json for infra/aws: the run's identity and expiry at the top
 * (the root module's variables), and under `bench` the resolved sizes and what
 * to install, by the names of modules/bench's variables (test/aws/cli.test.ts
 * checks every key is one).
 */

/** Values the user data scripts put between single quotes: no quotes, spaces, `$` or backslashes. */
const shellSafe = /^[^\s'"`$\\]+$/;
const httpsUrl = z.string().regex(/^https:\/\/[^\s'"`$\\]+$/, 'expected an https:// URL without quotes, spaces, backslashes or $');

const benchSettingsSchema = z.strictObject({
  controller_cidr_blocks: z.array(z.string()),
  app_instance_type: z.string(),
  app_count: z.number().int(),
  agent_instance_type: z.string(),
  agent_count: z.number().int(),
  proxy_instance_type: z.string(),
  metrics_instance_type: z.string(),
  db_instance_class: z.string(),
  db_count: z.number().int(),
  db_name: z.string().optional(),
  db_snapshot_identifier: z.string().optional(),
  db_dump_url: httpsUrl.optional(),
  opensearch_count: z.union([z.literal(0), z.literal(2)]),
  mattermost_download_url: httpsUrl.regex(/\.tar\.gz$/, 'expected a .tar.gz release URL'),
  mattermost_license_secret_arn: z.string().optional(),
  mattermost_config_patch: z.string(),
  load_engine: z.enum(['k6', 'load-test-ng']),
  k6_version: z.string().optional(),
  loadtest_download_url: httpsUrl.optional(),
  agent_api_port: z.number().int(),
  duet: z.boolean(),
});

export const tfvarsSchema = z.strictObject({
  region: z.string(),
  bench_name: z.string().regex(/^[a-z][a-z0-9-]{1,23}[a-z0-9]$/),
  repository: z.string(),
  run_id: z.string(),
  run_attempt: z.number().int().min(1),
  commit_sha: z.string(),
  state_key: z.string(),
  expires_at: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
  bench: benchSettingsSchema,
});
export type Tfvars = z.output<typeof tfvarsSchema>;

/**
 * Narrowest prefix accepted for the controller (and SSH) ranges, as infra/aws's
 * bench variables (modules/bench): a /16 is as wide as one organisation's egress plausibly gets; wider
 * would open the agents' unauthenticated k6 API and Prometheus to much of the internet.
 */
const WIDEST_CONTROLLER_PREFIX = 16;

const controllerCidr = z
  .string()
  // abort: the refinements below read the octets and prefix the pattern guarantees.
  .regex(/^(\d{1,3}\.){3}\d{1,3}\/(\d|[12]\d|3[0-2])$/, { message: 'expected an IPv4 CIDR such as 203.0.113.7/32', abort: true })
  .refine(
    (c) =>
      c
        .split('.')
        .slice(0, 3)
        .concat(c.split('.')[3]!.split('/')[0]!)
        .every((octet) => Number(octet) <= 255),
    'expected IPv4 octets of 0-255',
  )
  .refine(
    (c) => Number(c.split('/')[1]) >= WIDEST_CONTROLLER_PREFIX,
    `ranges wider than /${WIDEST_CONTROLLER_PREFIX} are refused: they would open the bench's control ports to much of the internet; use the controller's own /32`,
  );

/** What the bench needs beyond gate.yml: the version installed first and the data and licence sources. */
export const benchInputsSchema = z.strictObject({
  version: z.string().min(1),
  controllerCidrs: z.array(controllerCidr).default([]),
  dbSnapshot: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9:-]{0,299}$/, 'expected a cluster snapshot identifier or ARN')
    .optional(),
  dbDumpUrl: httpsUrl.optional(),
  dbName: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9_]{0,62}$/, 'expected a PostgreSQL database name')
    .optional(),
  licenseSecretArn: z
    .string()
    .regex(/^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$/, 'expected a Secrets Manager secret ARN')
    .optional(),
});
export type BenchInputs = z.output<typeof benchInputsSchema>;

/** k6's REST API port; load-test-ng's ltapi listens on 4000. */
const AGENT_API_PORTS = { k6: 6565, 'load-test-ng': 4000 } as const;

/** Margin past the estimated end before the janitor may destroy the bench. */
const EXPIRY_MARGIN_SEC = 3600;

/** The release tarball of a version: target.downloadUrl (or Mattermost's default) with {version} filled in. */
function mattermostDownloadUrl(config: GateConfig, version: string): string {
  let pattern: RegExp;
  try {
    pattern = new RegExp(config.target.versionPattern);
  } catch {
    throw new InputError('target.versionPattern: not a valid regular expression');
  }
  if (!pattern.test(version)) {
    throw new InputError(`--version: "${version}" does not match target.versionPattern ${config.target.versionPattern}`);
  }
  const bare = version.replace(/^v/, '');
  if (!shellSafe.test(bare)) throw new InputError(`--version: "${version}" holds characters a URL cannot carry`);
  return (config.target.downloadUrl ?? MATTERMOST_DOWNLOAD_URL).replaceAll('{version}', bare);
}

function toRfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function buildTfvars(config: GateConfig, bench: ResolvedBench, run: RunInfo, inputs: BenchInputs, duration: DurationEstimate, now: Date): Tfvars {
  if (config.target.system !== 'mattermost') {
    throw new InputError(`target.system: the AWS bench runs Mattermost; "${config.target.system}" runs on the local bench`);
  }
  if (inputs.dbSnapshot && inputs.dbDumpUrl) throw new InputError('give at most one of --db-snapshot and --db-dump-url');
  const engine = config.engine.kind;
  const engineVersion = config.engine.version;
  if (engine === 'k6' && !/^v\d+\.\d+\.\d+$/.test(engineVersion))
    throw new InputError(`engine.version: "${engineVersion}" is not a k6 release tag such as v1.4.2`);
  // The download URL is built from the tag: only releases that exist and whose rules are known.
  if (engine === 'load-test-ng' && !isSupportedLoadTestNgVersion(engineVersion)) {
    throw new InputError(
      `engine.version: "${engineVersion}" is not a load-test-ng release loadgate supports; use one of ${SUPPORTED_LOADTEST_NG_VERSIONS.join(', ')}`,
    );
  }
  if (config.mode === 'duet' && bench.agentCount % 2 !== 0) {
    throw new InputError(
      `bench.aws.agentCount: a duet splits the agents into two equal groups, one per side; the bench has ${bench.agentCount}: set bench.aws.agentCount to ${bench.agentCount + 1}`,
    );
  }
  const expiresAt = new Date(now.getTime() + (duration.totalSec + EXPIRY_MARGIN_SEC) * 1000);
  const tfvars: Tfvars = {
    region: bench.region,
    bench_name: benchName(run),
    repository: run.repository,
    run_id: run.runId,
    run_attempt: run.runAttempt,
    commit_sha: run.commitSha,
    state_key: stateKey(run),
    expires_at: toRfc3339(expiresAt),
    bench: {
      controller_cidr_blocks: inputs.controllerCidrs,
      app_instance_type: bench.appInstanceType,
      app_count: bench.appCount,
      agent_instance_type: bench.agentInstanceType,
      agent_count: bench.agentCount,
      proxy_instance_type: bench.proxyInstanceType,
      metrics_instance_type: bench.metricsInstanceType,
      db_instance_class: bench.dbInstanceType,
      db_count: bench.dbCount,
      opensearch_count: bench.openSearchCount,
      mattermost_download_url: mattermostDownloadUrl(config, inputs.version),
      // The nodes start from the release's defaults: the bench's own defaults (prepackaged
      // plugins off among them), then target.settings over them.
      mattermost_config_patch: JSON.stringify(
        deepMerge(benchNodeDefaults(usersNeeded(config.tests)), checkedOverrides(config.target.settings, 'target.settings')),
      ),
      load_engine: engine,
      agent_api_port: AGENT_API_PORTS[engine],
      duet: config.mode === 'duet',
      ...(inputs.dbName ? { db_name: inputs.dbName } : {}),
      ...(inputs.dbSnapshot ? { db_snapshot_identifier: inputs.dbSnapshot } : {}),
      ...(inputs.dbDumpUrl ? { db_dump_url: inputs.dbDumpUrl } : {}),
      ...(inputs.licenseSecretArn ? { mattermost_license_secret_arn: inputs.licenseSecretArn } : {}),
      ...(engine === 'k6'
        ? { k6_version: engineVersion }
        : {
            loadtest_download_url: `https://github.com/mattermost/mattermost-load-test-ng/releases/download/${engineVersion}/mattermost-load-test-ng-${engineVersion}-linux-amd64.tar.gz`,
          }),
    },
  };
  // Our own output, checked so a bad value fails here rather than in terraform apply.
  return tfvarsSchema.parse(tfvars);
}
