import type { AdminConfig } from '@mattermost/types/config';
import { InputError } from '../../util/errors.ts';

/**
 * Mattermost `config.json` overrides for a perf bench node. Layers, later wins:
 *
 * 1. bench settings loadgate needs, after load-test-ng's deployer (deployment/terraform:
 *    updateAppConfig): the node-independent ones here (no outbound telemetry or e-mail,
 *    limits high enough not to cap the test), the topology (database, cluster, metrics on
 *    :8067) from the app node's user data (infra/aws), which knows the addresses;
 * 2. the gate's `target.settings` (both sides);
 * 3. the side's own overrides (baseline or candidate only).
 *
 * Layers 2 and 3 may not change what the bench wires up (database, metrics address,
 * cluster identity): a typo there would point a node at the wrong database.
 */

type ConfigObject = { [section: string]: unknown };

/**
 * Keys the bench owns: `Section.Key`. infra/aws refuses the same keys in
 * `mattermost_config_patch` and the app nodes re-apply them after every patch.
 */
export const BENCH_OWNED_SETTINGS: readonly string[] = [
  'SqlSettings.DriverName',
  'SqlSettings.DataSource',
  'SqlSettings.DataSourceReplicas',
  'MetricsSettings.ListenAddress',
  'MetricsSettings.Enable',
  'ClusterSettings.ClusterName',
  'ClusterSettings.Enable',
  'ServiceSettings.ListenAddress',
];

const sectionName = /^[A-Z][A-Za-z0-9]*$/;

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

function isPlainObject(value: unknown): value is ConfigObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
