import { z } from 'zod';
import { gateConfigSchema } from '../config/schema.ts';
import { runResultSchema } from '../results/schema.ts';
import { verdictFileSchema } from '../results/verdict-schema.ts';

/**
 * JSON Schemas generated from the zod schemas, so editors can complete gate.yml and other
 * tools can read run results. `io: 'input'` describes what a file may contain (defaults
 * optional, durations as "90m" or seconds), not the parsed form.
 */
export const JSON_SCHEMAS = {
  'gate-config.schema.json': { schema: gateConfigSchema, title: 'loadgate gate config (gate.yml)' },
  'run-result.schema.json': { schema: runResultSchema, title: 'loadgate run result' },
  'verdict.schema.json': { schema: verdictFileSchema, title: 'loadgate verdict.json' },
} as const;

export function jsonSchemaFor(name: keyof typeof JSON_SCHEMAS): Record<string, unknown> {
  const entry = JSON_SCHEMAS[name];
  const generated = z.toJSONSchema(entry.schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  return { ...generated, $id: `https://loadgate.dev/schema/${name}`, title: entry.title };
}
