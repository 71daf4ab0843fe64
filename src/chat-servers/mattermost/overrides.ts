import { parse as parseYaml } from 'yaml';
import { InputError } from '../../util/errors.ts';
import type { Override, Scalar } from '../chat-server.ts';
import { checkedOverrides } from './config-patch.ts';

/**
 * `--candidate-set Section.Key=value` / `--baseline-set ...` on the Mattermost bench: one
 * side's config.json overrides, as dotted paths (`ServiceSettings.EnableLinkPreviews`) with
 * YAML scalar values (`false`, `300`, `"text"`). They become a nested patch that
 * config-patch.ts checks like target.settings (a Mattermost section, no bench-owned key).
 */
const KEY = /^[A-Z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)+$/;

export function parseMattermostOverride(text: string, flag: string): Override {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new InputError(`${flag} "${text}": expected Section.Key=value, e.g. ${flag} ServiceSettings.EnableLinkPreviews=false`);
  const key = text.slice(0, eq).trim();
  if (!KEY.test(key)) {
    throw new InputError(`${flag} "${text}": "${key}" must be a config.json path such as ServiceSettings.EnableLinkPreviews (a section, then a key)`);
  }
  let value: unknown;
  try {
    value = parseYaml(text.slice(eq + 1));
  } catch {
    throw new InputError(`${flag} "${text}": the value is not a YAML scalar`);
  }
  if (value !== null && !['string', 'number', 'boolean'].includes(typeof value)) {
    throw new InputError(`${flag} "${text}": the value must be a scalar (text, number, true/false or null)`);
  }
  const override: Override = { path: key.split('.'), value: value as Scalar, text };
  checkedOverrides(overridesToPatch([override]), flag);
  return override;
}

/** Dotted overrides as the nested object merged into config.json; later ones win. */
export function overridesToPatch(overrides: readonly Override[]): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const o of overrides) {
    let node = patch;
    for (const part of o.path.slice(0, -1)) {
      const next = node[part];
      node[part] = typeof next === 'object' && next !== null ? next : {};
      node = node[part] as Record<string, unknown>;
    }
    node[o.path[o.path.length - 1] as string] = o.value;
  }
  return patch;
}
