import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { BENCH_OWNED_SETTINGS, benchNodeDefaults } from '../../../src/chat-servers/mattermost/config-patch.ts';

/**
 * Finding 6: every key loadgate patches must exist in Mattermost's config, or the patch
 * silently does nothing (ServiceSettings.EnableOpenTracing was removed in 2025). The key
 * lists come from the installed @mattermost/types (lib/config.d.ts), which mirrors
 * server/public/model/config.go; tsc checks the same at build time (MattermostConfigPatch).
 */

const require = createRequire(import.meta.url);
const dts = readFileSync(require.resolve('@mattermost/types/config').replace(/\.js$/, '.d.ts'), 'utf8');

/** The property names of `export type <name> = { ... };` in the declaration file. */
function keysOf(typeName: string): Set<string> | undefined {
  const start = dts.indexOf(`export type ${typeName} = {`);
  if (start < 0) return undefined;
  const body = dts.slice(start, dts.indexOf('\n};', start));
  return new Set([...body.matchAll(/^ {4}([A-Za-z0-9_]+)\??:/gm)].map((m) => m[1] as string));
}

test('every section and key of the bench patch exists in Mattermost config types', () => {
  // The node-independent settings and the keys the user data sets from the topology.
  const patch: Record<string, Record<string, unknown>> = { ...benchNodeDefaults(1000) } as Record<string, Record<string, unknown>>;
  for (const owned of BENCH_OWNED_SETTINGS) {
    const [section, key] = owned.split('.') as [string, string];
    patch[section] = { ...patch[section], [key]: true };
  }
  const sections = keysOf('AdminConfig')!;
  assert.ok(sections.has('ServiceSettings') && sections.size > 30, 'AdminConfig was found and parsed');
  // NotificationLogSettings is in the server's model.Config but not in the client types.
  const serverOnly = new Set(['NotificationLogSettings']);
  const unknown: string[] = [];
  for (const [section, values] of Object.entries(patch)) {
    if (serverOnly.has(section)) continue;
    if (!sections.has(section)) {
      unknown.push(section);
      continue;
    }
    const keys = keysOf(section)!;
    for (const key of Object.keys(values as object)) if (!keys.has(key)) unknown.push(`${section}.${key}`);
  }
  assert.deepEqual(unknown, [], 'keys Mattermost does not have');
  assert.ok(!('EnableOpenTracing' in (patch.ServiceSettings as object)));
});
