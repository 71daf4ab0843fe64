import { parseArgs, type ParseArgsConfig } from 'node:util';
import { z } from 'zod';
import { InputError, formatIssuePath } from './errors.ts';

type FlagOptions = NonNullable<ParseArgsConfig['options']>;

/**
 * One flag, declared once: node's parser, the zod schema and the usage text are all
 * derived from it, so the three cannot drift apart.
 */
export interface Flag<S extends z.ZodType = z.ZodType> {
  /** The value's placeholder in the usage (`<file>`); a flag without one is a switch. */
  value?: string;
  /** May be given more than once; the values arrive as a list. */
  multiple?: boolean;
  /** Listed on the usage line, not only under its section. */
  required?: boolean;
  /** The value used when the flag is not given, as it would be typed. */
  default?: string;
  /** What it does: one paragraph, wrapped to the usage's width. */
  help: string;
  /** The usage section it is listed under (Options when not given). */
  section?: string;
  /** Checks and converts the value as given (a string, a list of them, or a switch's boolean). */
  schema: S;
}

export type FlagTable = Record<string, Flag>;

/** The ways a flag is declared; each wraps the value's schema so an absent flag means what it says. */
export const flag = {
  /** Must be given; the schema's own message (e.g. "required: the gate config file") says so. */
  required: <S extends z.ZodType>(value: string, schema: S, help: string): Flag<S> => ({ value, required: true, help, schema }),
  optional: <S extends z.ZodType>(value: string, schema: S, help: string): Flag<z.ZodOptional<S>> => ({ value, help, schema: schema.optional() }),
  /** `fallback` is parsed by the schema as if typed, so the default obeys the same rules. */
  withDefault: <S extends z.ZodType>(value: string, schema: S, fallback: string, help: string): Flag<z.ZodPrefault<S>> => ({
    value,
    default: fallback,
    help,
    schema: schema.prefault(fallback as z.input<S>),
  }),
  /** Repeatable; not given is an empty list, so `schema` decides whether one is needed. */
  list: <S extends z.ZodType>(value: string, schema: S, help: string, required = false): Flag<S> => ({ value, multiple: true, required, help, schema }),
  toggle: (help: string): Flag<z.ZodDefault<z.ZodBoolean>> => ({ help, schema: z.boolean().default(false) }),
};

/** The same flags, listed under their own heading in the usage. */
export function section<F extends FlagTable>(heading: string, flags: F): F {
  return Object.fromEntries(Object.entries(flags).map(([name, f]) => [name, { ...f, section: heading }])) as F;
}

export interface CommandSpec<F extends FlagTable, P extends z.ZodType> {
  /** The command's name, as typed after `loadgate`. */
  command: string;
  /** What follows the flags on the usage line, such as `[name]`. */
  synopsis?: string;
  /** What the command does: kept as written, between the usage line and the options. */
  about?: string;
  flags: F;
  /** The arguments without a flag; none by default. */
  positionals?: P;
  /** Kept as written, after the options (exit codes, an example). */
  notes?: string;
}

type Shape<F extends FlagTable, P extends z.ZodType> = { [K in keyof F]: F[K]['schema'] } & { positionals: P };

export interface Command<F extends FlagTable, P extends z.ZodType> {
  flags: F;
  usage: string;
  /** node's parseArgs options. */
  options: FlagOptions;
  schema: z.ZodObject<Shape<F, P>, z.core.$strict>;
  parse(argv: string[]): z.output<z.ZodObject<Shape<F, P>, z.core.$strict>>;
}

const NO_POSITIONALS = z.array(z.string()).max(0, 'unexpected argument; every option needs its --name');

/** A command's flags: the parser's options, the schema and the usage text, from one table. */
export function defineCommand<F extends FlagTable, P extends z.ZodType = typeof NO_POSITIONALS>(spec: CommandSpec<F, P>): Command<F, P> {
  const entries = Object.entries(spec.flags);
  const options: FlagOptions = Object.fromEntries(
    entries.map(([name, f]) => [name, f.value === undefined ? { type: 'boolean' } : { type: 'string', ...(f.multiple ? { multiple: true } : {}) }]),
  );
  const shape = { ...Object.fromEntries(entries.map(([name, f]) => [name, f.schema])), positionals: spec.positionals ?? NO_POSITIONALS };
  const schema = z.strictObject(shape) as unknown as z.ZodObject<Shape<F, P>, z.core.$strict>;
  const usage = renderUsage(spec);
  return { flags: spec.flags, usage, options, schema, parse: (argv) => parseFlags(argv, options, schema, usage) };
}

/** The usage's width, and the widest flag column before its help moves to the next line. */
const WIDTH = 92;
const MAX_LABEL = 25;

function label(name: string, f: Flag): string {
  return `--${name}${f.value === undefined ? '' : ` ${f.value}`}${f.multiple ? '...' : ''}`;
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      if (line && line.length + 1 + word.length > width) {
        lines.push(line);
        line = word;
      } else {
        line = line ? `${line} ${word}` : word;
      }
    }
    lines.push(line);
  }
  return lines;
}

function renderUsage<F extends FlagTable, P extends z.ZodType>(spec: CommandSpec<F, P>): string {
  const entries = Object.entries(spec.flags);
  const required = entries.filter(([, f]) => f.required);
  const head = [`Usage: loadgate ${spec.command}`, ...required.map(([name, f]) => label(name, f))];
  if (required.length < entries.length) head.push('[options]');
  if (spec.synopsis) head.push(spec.synopsis);
  const blocks = [head.join(' ')];
  if (spec.about) blocks.push(spec.about);
  const labels = entries.map(([name, f]) => label(name, f));
  const column = Math.min(MAX_LABEL, Math.max(0, ...labels.map((l) => l.length))) + 4;
  const sections = new Map<string, string[]>();
  entries.forEach(([, f], i) => {
    const help = f.default === undefined ? f.help : `${f.help} (default ${f.default})`;
    const text = wrap(help, WIDTH - column);
    const flagLabel = `  ${labels[i] as string}`;
    const lines =
      flagLabel.length + 2 > column
        ? [flagLabel, ...text.map((t) => ' '.repeat(column) + t)]
        : [flagLabel.padEnd(column) + text[0], ...text.slice(1).map((t) => ' '.repeat(column) + t)];
    const heading = f.section ?? 'Options';
    sections.set(heading, [...(sections.get(heading) ?? []), ...lines]);
  });
  for (const [heading, lines] of sections) blocks.push([`${heading}:`, ...lines].join('\n'));
  if (spec.notes) blocks.push(spec.notes);
  return blocks.join('\n\n');
}

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
    // Too few arguments: the schema's message says what to name.
    if (issue.code === 'too_small') return issue.message;
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
