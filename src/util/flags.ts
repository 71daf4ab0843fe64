import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { z } from 'zod';
import { InputError, formatIssuePath } from './errors.ts';

type FlagOptions = NonNullable<ParseArgsConfig['options']>;

/**
 * Parses flags with node's parser (unknown flags are errors), then validates the values
 * with a zod schema, so every command gets a typed settings object or a clear error.
 */
export function parseFlags<S extends z.ZodType>(argv: string[], options: FlagOptions, schema: S, usage: string): z.output<S> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new InputError(`${(error as Error).message}\n\n${usage}`);
  }
  const values: Record<string, unknown> = { ...parsed.values, positionals: parsed.positionals };
  // A repeatable flag given zero times is an empty list, so the command's own "give at
  // least one ..." message shows instead of zod's "expected array, received undefined".
  for (const [name, option] of Object.entries(options)) {
    if (option.multiple && values[name] === undefined) values[name] = [];
  }
  const result = schema.safeParse(values);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => describeIssue(issue, values));
    throw new InputError(`${lines.join('\n')}\n\n${usage}`, lines);
  }
  return result.data;
}

function describeIssue(issue: z.core.$ZodIssue, values: Record<string, unknown>): string {
  const [head] = issue.path;
  if (head === 'positionals') {
    const positionals = values.positionals as string[];
    const index = issue.path[1];
    if (typeof index === 'number') return `argument ${JSON.stringify(positionals[index])}: ${issue.message}`;
    const reason = issue.message.replace(/^unexpected argument;?\s*/, '');
    return `unexpected argument ${positionals.map((p) => JSON.stringify(p)).join(' ')}${reason ? `: ${reason}` : ''}`;
  }
  // zod's default for a flag not given is "Invalid input: expected string, received
  // undefined"; a schema's own message (e.g. "required: the baseline version") is kept.
  if (issue.code === 'invalid_type' && issue.path.length === 1 && values[String(head)] === undefined && issue.message.startsWith('Invalid input')) {
    return `--${String(head)}: required`;
  }
  return `--${formatIssuePath(issue.path)}: ${issue.message}`;
}
