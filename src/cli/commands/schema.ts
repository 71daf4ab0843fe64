import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { JSON_SCHEMAS, jsonSchemaFor } from '../json-schemas.ts';
import { defineCommand, flag } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

const names = Object.keys(JSON_SCHEMAS) as (keyof typeof JSON_SCHEMAS)[];

const schemaCommand = defineCommand({
  command: 'schema',
  synopsis: '[name]',
  about: `Prints a JSON Schema (${names.join(', ')}), writes all of them to
a folder (the repo keeps them in schema/), or checks that a folder is up to date (exit 1 if stale).`,
  flags: {
    write: flag.optional('<dir>', z.string(), 'Write every schema to this folder'),
    check: flag.optional('<dir>', z.string(), 'Check that the schemas in this folder are up to date'),
  },
  positionals: z.array(z.enum(names as [string, ...string[]])).max(1),
});

export const usage = schemaCommand.usage;

const render = (name: keyof typeof JSON_SCHEMAS) => `${JSON.stringify(jsonSchemaFor(name), null, 2)}\n`;

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = schemaCommand.parse(argv);
  if (flags.write) {
    await mkdir(flags.write, { recursive: true });
    for (const name of names) await writeFile(join(flags.write, name), render(name));
    io.out(`wrote ${names.length} schemas to ${flags.write}`);
    return 0;
  }
  if (flags.check) {
    const stale: string[] = [];
    for (const name of names) {
      const current = await readFile(join(flags.check, name), 'utf8').catch(() => '');
      if (current !== render(name)) stale.push(name);
    }
    if (stale.length) {
      io.err(`stale JSON Schemas in ${flags.check}: ${stale.join(', ')}; run "npm run schema"`);
      return 1;
    }
    io.out(`schemas in ${flags.check} are up to date`);
    return 0;
  }
  io.out(render((flags.positionals[0] ?? 'gate-config.schema.json') as keyof typeof JSON_SCHEMAS).trimEnd());
  return 0;
}
