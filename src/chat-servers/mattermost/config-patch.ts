import { z } from 'zod';
import type { AdminConfig } from '@mattermost/types/config';
import { InputError, formatIssuePath } from '../../util/errors.ts';

/**
 * Mattermost `config.json` overrides for a perf bench node. Layers, later wins:
 *
 * 1. bench settings loadgate needs (database, cluster, metrics on :8067, no outbound
 *    telemetry or e-mail, limits high enough not to cap the test), after load-test-ng's
 *    deployer (deployment/terraform: updateAppConfig);
 * 2. the gate's `target.settings` (both sides);
 * 3. the side's own overrides (baseline or candidate only).
 *
 * Layers 2 and 3 may not change what the bench wires up (database, metrics address,
 * cluster identity): a typo there would point a node at the wrong database.
 */

const benchTopologySchema = z.strictObject({
  /** URL users reach (the proxy when there is one). */
  siteUrl: z.url({ protocol: /^https?$/ }),
  database: z.strictObject({
    driver: z.literal('postgres').default('postgres'),
    host: z.string().regex(/^[A-Za-z0-9.-]+$/, 'expected a host name or IPv4 address'),
    port: z.number().int().min(1).max(65535).default(5432),
    name: z.string().regex(/^[A-Za-z0-9_]+$/, 'expected a database name of letters, digits and _'),
    user: z.string().min(1),
    /** A secret: ends up in DataSource, so never log the patch (see redactConfigPatch). */
    password: z.string().min(1),
    /** Reader endpoints, host:port, used as DataSourceReplicas. */
    readers: z.array(z.string().regex(/^[A-Za-z0-9.-]+(:\d{1,5})?$/, 'expected host or host:port')).default([]),
    sslmode: z.enum(['disable', 'require', 'verify-full']).default('disable'),
  }),
  /** Number of app nodes; a cluster is configured when more than one. */
  appNodes: z.number().int().min(1).default(1),
  clusterName: z.string().regex(/^[A-Za-z0-9_-]+$/).default('loadgate'),
  /** Largest number of users a test will log in (users per team must not cap it). */
  maxUsers: z.number().int().positive(),
});
export type BenchTopology = z.input<typeof benchTopologySchema>;

type ConfigObject = { [section: string]: unknown };

export interface ConfigPatchInput {
  topology: BenchTopology;
  /** `target.settings` from the gate config. */
  settings?: Record<string, unknown>;
  /** Overrides for one side only. */
  side?: { name: 'baseline' | 'candidate'; overrides: Record<string, unknown> };
}

/**
 * Keys the bench owns: `Section.Key`. infra/aws refuses the same keys in
 * `mattermost_config_patch` and the app nodes re-apply them after every patch.
 */
export const BENCH_OWNED_SETTINGS: readonly string[] = ['SqlSettings.DriverName', 'SqlSettings.DataSource', 'SqlSettings.DataSourceReplicas', 'MetricsSettings.ListenAddress', 'MetricsSettings.Enable', 'ClusterSettings.ClusterName', 'ClusterSettings.Enable', 'ServiceSettings.ListenAddress'];

const sectionName = /^[A-Z][A-Za-z0-9]*$/;

export function buildMattermostConfigPatch(input: ConfigPatchInput): ConfigObject {
  const parsed = benchTopologySchema.safeParse(input.topology);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `bench topology ${formatIssuePath(i.path)}: ${i.message}`);
    throw new InputError(`cannot build the Mattermost config:\n${lines.join('\n')}`, lines);
  }
  const topology = parsed.data;
  let config: ConfigObject = benchSettings(topology);
  if (input.settings) config = deepMerge(config, checkedOverrides(input.settings, 'target.settings'));
  if (input.side) config = deepMerge(config, checkedOverrides(input.side.overrides, `${input.side.name} overrides`));
  return config;
}

/**
 * Sections and keys as Mattermost's own client types name them (@mattermost/types AdminConfig,
 * mirroring server/public/model/config.go): tsc refuses a key the server no longer has, such as
 * ServiceSettings.EnableOpenTracing (removed from model.ServiceSettings in 2025; patching it
 * did nothing).
 */
type MattermostConfigPatch = { [S in keyof AdminConfig]?: Partial<AdminConfig[S]> } & {
  // In the server's model.Config (server/public/model/config.go) but not in the client types.
  NotificationLogSettings?: Partial<Pick<AdminConfig['LogSettings'], 'EnableConsole' | 'ConsoleLevel' | 'EnableFile' | 'FileLevel'>>;
};

function benchSettings(t: z.output<typeof benchTopologySchema>): MattermostConfigPatch {
  const db = t.database;
  const credentials = `${encodeURIComponent(db.user)}:${encodeURIComponent(db.password)}`;
  const dsn = (hostPort: string) => `postgres://${credentials}@${hostPort}/${db.name}?sslmode=${db.sslmode}&connect_timeout=10`;
  const withPort = (host: string) => (host.includes(':') ? host : `${host}:${db.port}`);
  const topology: MattermostConfigPatch = {
    ServiceSettings: { SiteURL: t.siteUrl.replace(/\/+$/, ''), ListenAddress: ':8065' },
    SqlSettings: { DriverName: db.driver, DataSource: dsn(withPort(db.host)), DataSourceReplicas: db.readers.map((r) => dsn(withPort(r))) },
    ClusterSettings: { Enable: t.appNodes > 1, ClusterName: t.clusterName, GossipPort: 8074 },
    MetricsSettings: { Enable: true, ListenAddress: ':8067' },
  };
  return deepMerge(benchNodeDefaults(t.maxUsers), topology) as MattermostConfigPatch;
}

/**
 * The bench settings that do not depend on where the node is (layer 1 without the
 * topology): the AWS bench sends them with `target.settings` merged over them as its base
 * patch (tfvars `mattermost_config_patch`), since a node's config there starts from the
 * release's defaults, where Mattermost installs and enables its prepackaged plugins
 * (server/public/model/config.go PluginSettings.SetDefaults: AutomaticPrepackagedPlugins
 * true, Calls and Playbooks enabled). No bench-owned key is among them.
 */
export function benchNodeDefaults(maxUsers: number): MattermostConfigPatch {
  return {
    ServiceSettings: {
      ReadTimeout: 60,
      WriteTimeout: 60,
      IdleTimeout: 90,
      EnableLocalMode: true,
      ThreadAutoFollow: true,
      // The enum's value (CollapsedThreads.DEFAULT_ON); the types package declares it as a TS enum.
      CollapsedThreads: 'default_on' as AdminConfig['ServiceSettings']['CollapsedThreads'],
      EnableLinkPreviews: true,
      EnablePermalinkPreviews: true,
      PostPriority: true,
      AllowSyncedDrafts: true,
      EnableTutorial: false,
      EnableOnboardingFlow: false,
      // The bench makes no outbound calls: no security bulletins, no marketplace.
      EnableSecurityFixAlert: false,
    },
    SqlSettings: { MaxIdleConns: 100, MaxOpenConns: 100, Trace: false },
    ClusterSettings: { UseIPAddress: true, ReadOnlyConfig: false, EnableGossipCompression: false },
    TeamSettings: {
      MaxUsersPerTeam: Math.max(200_000, maxUsers),
      MaxChannelsPerTeam: 200_000,
      EnableOpenServer: true,
      MaxNotificationsPerChannel: 1000,
    },
    LogSettings: { EnableConsole: true, ConsoleLevel: 'ERROR', EnableFile: true, FileLevel: 'WARN', EnableSentry: false, EnableDiagnostics: false },
    NotificationLogSettings: { EnableConsole: true, ConsoleLevel: 'ERROR', EnableFile: true, FileLevel: 'WARN' },
    EmailSettings: { SendEmailNotifications: false, EnableSignUpWithEmail: true, EnableSignInWithEmail: true, EnableSignInWithUsername: true },
    RateLimitSettings: { Enable: false },
    // Prepackaged plugins stay uninstalled: they are not what the gate measures, and in a
    // duet both slots' Calls plugins would bind the same port (8443). Mattermost installs
    // them only with AutomaticPrepackagedPlugins (server/channels/app/plugin.go).
    PluginSettings: { Enable: true, EnableUploads: true, EnableMarketplace: false, EnableRemoteMarketplace: false, AutomaticPrepackagedPlugins: false },
  };
}

/**
 * Checks overrides before they reach a node: sections must look like Mattermost's,
 * hold objects, and leave the bench-owned keys alone. `source` names them in errors
 * (`target.settings`, `--candidate-set`). Returns them unchanged.
 */
export function checkedOverrides(overrides: Record<string, unknown>, source: string): ConfigObject {
  const problems: string[] = [];
  for (const [section, value] of Object.entries(overrides)) {
    if (!sectionName.test(section)) {
      problems.push(`${source}.${section}: not a Mattermost config section; sections look like ServiceSettings or TeamSettings`);
      continue;
    }
    if (!isPlainObject(value)) {
      problems.push(`${source}.${section}: expected an object of settings, such as { EnableLinkPreviews: false }`);
      continue;
    }
    for (const key of Object.keys(value)) {
      if (BENCH_OWNED_SETTINGS.includes(`${section}.${key}`)) problems.push(`${source}.${section}.${key}: set by the bench from its topology; remove it`);
    }
  }
  if (problems.length) throw new InputError(`cannot apply ${source} to the Mattermost config:\n${problems.join('\n')}`, problems);
  return overrides;
}

/** Objects merge key by key; anything else (arrays included) replaces. Inputs are not changed. */
export function deepMerge(base: ConfigObject, patch: ConfigObject): ConfigObject {
  const out: ConfigObject = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    const current = out[key];
    out[key] = isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : structuredClone(value);
  }
  return out;
}

/** A copy fit for logs: database passwords in DSNs replaced by "***". */
export function redactConfigPatch(config: ConfigObject): ConfigObject {
  return JSON.parse(JSON.stringify(config), (_key, value: unknown) =>
    typeof value === 'string' ? value.replace(/^(postgres(?:ql)?:\/\/[^:/@]*:)[^@]*@/, '$1***@') : value,
  ) as ConfigObject;
}

function isPlainObject(value: unknown): value is ConfigObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
