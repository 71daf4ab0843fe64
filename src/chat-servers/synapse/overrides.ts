import { parse as parseYaml } from 'yaml';
import { InputError } from '../../util/errors.ts';
import type { Override, Scalar } from '../chat-server.ts';

/**
 * `--candidate-set key=value` / `--baseline-set key=value`: patch the generated
 * homeserver.yaml for one side. Keys are dotted paths (`caches.global_factor`), values are
 * YAML scalars (`0.05`, `true`, `14`, `"text"`). Keys the bench itself owns (listeners,
 * database, signing key…) or that would let Synapse talk to the outside world are refused:
 * the bench must stay on loopback with no outbound traffic.
 */

const KEY = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$/;

/** Top-level keys loadgate generates and a user may not change, with the reason. */
const RESERVED_KEYS: Readonly<Record<string, string>> = {
  server_name: 'the dataset is built for a fixed server name',
  public_baseurl: 'set by the bench (nginx URL)',
  listeners: 'the bench binds the listeners to loopback ports it allocates',
  database: 'the bench provides the PostgreSQL database',
  pid_file: 'set by the bench',
  log_config: 'set by the bench (logs go to the run dir)',
  media_store_path: 'set by the bench',
  signing_key_path: 'the signing key belongs to the dataset',
  registration_shared_secret: 'set by the bench',
  enable_metrics: 'the gate reads the target metrics',
  trusted_key_servers: 'no outbound traffic: must stay empty',
  federation_domain_whitelist: 'no outbound traffic: federation stays off',
  report_stats: 'no outbound traffic: stats reporting stays off',
  report_stats_endpoint: 'no outbound traffic',
  url_preview_enabled: 'no outbound traffic: URL previews stay off',
  send_federation: 'no outbound traffic',
  federation_sender_instances: 'no outbound traffic',
  email: 'no outbound traffic',
  sentry: 'no outbound traffic',
  opentracing: 'no outbound traffic',
  redis: 'the local bench runs a single process',
  instance_map: 'the local bench runs a single process',
  worker_app: 'the local bench runs a single process',
  turn_uris: 'no outbound traffic',
  default_identity_server: 'no outbound traffic',
  account_threepid_delegates: 'no outbound traffic',
  modules: 'arbitrary Python modules are not allowed on the bench',
};

/** Parses one `key=value` flag; `flag` names it in messages (e.g. "--candidate-set"). */
export function parseOverride(text: string, flag: string): Override {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new InputError(`${flag} "${text}": expected key=value, e.g. ${flag} caches.global_factor=0.05`);
  const key = text.slice(0, eq).trim();
  const raw = text.slice(eq + 1);
  if (!KEY.test(key))
    throw new InputError(`${flag} "${text}": the key "${key}" must be a dotted path of letters, digits and underscores, e.g. rc_message.per_second`);
  const path = key.split('.');
  checkReserved(path[0] as string, `${flag} ${key}`);
  if (raw.trim() === '') throw new InputError(`${flag} "${text}": the value is empty; write a YAML scalar such as 14, 0.05, true or "text"`);
  let value: unknown;
  try {
    value = parseYaml(raw);
  } catch (error) {
    throw new InputError(`${flag} "${text}": the value is not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (value !== null && !['string', 'number', 'boolean'].includes(typeof value)) {
    throw new InputError(
      `${flag} "${text}": the value must be a single scalar (number, true/false, text), not a list or map; set nested keys one by one with dotted paths`,
    );
  }
  if (typeof value === 'number' && !Number.isFinite(value)) throw new InputError(`${flag} "${text}": the value must be a finite number`);
  return { path, value: value as Scalar, text: `${key}=${raw}` };
}

function checkReserved(top: string, where: string): void {
  const reason = RESERVED_KEYS[top];
  if (reason) throw new InputError(`${where}: "${top}" cannot be overridden (${reason})`);
}

/** Flattens `target.settings` from the gate config (maps and dotted keys) into overrides. */
export function settingsToOverrides(settings: Record<string, unknown>): Override[] {
  const out: Override[] = [];
  const walk = (prefix: string[], value: unknown) => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) walk([...prefix, ...k.split('.')], v);
      return;
    }
    const key = prefix.join('.');
    if (!KEY.test(key)) throw new InputError(`target.settings.${key}: keys must be letters, digits and underscores`);
    checkReserved(prefix[0] as string, `target.settings.${key}`);
    if (value !== null && !['string', 'number', 'boolean'].includes(typeof value)) {
      throw new InputError(`target.settings.${key}: lists are not supported; use scalars or nested maps`);
    }
    out.push({ path: prefix, value: value as Scalar, text: `${key}=${JSON.stringify(value)}` });
  };
  walk([], settings);
  return out;
}

/** Returns a copy of `config` with the overrides applied in order. */
export function applyOverrides(config: Record<string, unknown>, overrides: readonly Override[]): Record<string, unknown> {
  const copy = structuredClone(config);
  for (const o of overrides) {
    let node: Record<string, unknown> = copy;
    o.path.forEach((part, i) => {
      if (i === o.path.length - 1) {
        node[part] = o.value;
        return;
      }
      const next = node[part];
      if (next === undefined || next === null) {
        node[part] = {};
      } else if (typeof next !== 'object' || Array.isArray(next)) {
        throw new InputError(`${o.text}: "${o.path.slice(0, i + 1).join('.')}" is not a map in the homeserver config, so it has no key "${o.path[i + 1]}"`);
      }
      node = node[part] as Record<string, unknown>;
    });
  }
  return copy;
}
