import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { z } from 'zod';
import { InputError, formatIssuePath } from '../util/errors.ts';

/**
 * Parses flags with node's parser (unknown flags are errors), then validates the values
 * with a zod schema, so every command gets a typed settings object or a clear error.
 */
export function parseFlags<S extends z.ZodType>(
  argv: string[],
  options: NonNullable<ParseArgsConfig['options']>,
  schema: S,
  usage: string,
): z.output<S> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new InputError(`${(error as Error).message}\n\n${usage}`);
  }
  const result = schema.safeParse({ ...parsed.values, positionals: parsed.positionals });
  if (!result.success) {
    const lines = result.error.issues.map((i) => `--${formatIssuePath(i.path)}: ${i.message}`);
    throw new InputError(`${lines.join('\n')}\n\n${usage}`, lines);
  }
  return result.data;
}
