import { InputError } from '../util/errors.ts';
import type { Dashboard } from './schema.ts';

/**
 * `/api/ds/query` does not fill in dashboard variables, so loadgate does it before sending
 * a query: the data-source variable becomes the chosen uid, custom/constant/textbox
 * variables their current value, and `--var name=value` overrides either. Grafana's own
 * `$__…` macros (`$__rate_interval`, `$__interval`) are left for Grafana.
 */
export function dashboardVariables(dashboard: Dashboard, datasourceUid: string, overrides: Record<string, string> = {}): Record<string, string> {
  const values: Record<string, string> = {};
  for (const variable of dashboard.templating?.list ?? []) {
    if (variable.type === 'datasource') values[variable.name] = datasourceUid;
    else if (['custom', 'constant', 'textbox', 'interval'].includes(variable.type)) {
      const current = variable.current?.value;
      const value = Array.isArray(current) ? current[0] : current;
      if (typeof value === 'string' && value !== '$__all') values[variable.name] = value;
      else if (typeof variable.query === 'string') values[variable.name] = variable.query.split(',')[0]!.trim();
    }
  }
  return { ...values, ...overrides };
}

export function interpolate(text: string, variables: Record<string, string>, where: string): string {
  const unknown = new Set<string>();
  const out = text.replace(/\$\{([A-Za-z0-9_]+)(?::[a-z]+)?\}|\[\[([A-Za-z0-9_]+)\]\]|\$([A-Za-z0-9_]+)/g, (match, a?: string, b?: string, c?: string) => {
    const name = (a ?? b ?? c)!;
    if (name.startsWith('__')) return match;
    const value = variables[name];
    if (value === undefined) {
      unknown.add(name);
      return match;
    }
    return value;
  });
  if (unknown.size) {
    const names = [...unknown].join(', ');
    throw new InputError(`${where} uses the dashboard variable(s) ${names}, which have no value; pass --var ${[...unknown][0]}=VALUE`);
  }
  return out;
}

/** Parses repeated `--var name=value` flags. */
export function parseVariableFlags(flags: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const flag of flags) {
    const match = /^([A-Za-z0-9_]+)=(.*)$/s.exec(flag);
    if (!match) throw new InputError(`--var ${JSON.stringify(flag)}: expected name=value, such as app_instance=app.*:8067`);
    out[match[1]!] = match[2]!;
  }
  return out;
}
