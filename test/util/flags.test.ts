import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { defineCommand, flag, section } from '../../src/util/flags.ts';
import { InputError } from '../../src/util/errors.ts';

const example = defineCommand({
  command: 'example',
  about: 'Does an example.',
  flags: {
    config: flag.required('<file>', z.string({ error: 'required: the config' }).min(1), 'Config file'),
    count: flag.withDefault('<n>', z.string().regex(/^\d+$/, 'expected a whole number').transform(Number), '3', 'How many'),
    label: flag.optional('<text>', z.string(), 'A label that is long enough to be wrapped onto a second line of the usage text at its width'),
    tag: flag.list('<t>', z.array(z.string()), 'A tag'),
    ...section('More', { verbose: flag.toggle('Say more') }),
  },
  notes: 'Exit codes: 0 done.',
});

test('the parser, the schema and the usage all come from the one table', () => {
  assert.deepEqual(example.options, {
    config: { type: 'string' },
    count: { type: 'string' },
    label: { type: 'string' },
    tag: { type: 'string', multiple: true },
    verbose: { type: 'boolean' },
  });
  assert.deepEqual(Object.keys(example.schema.shape), ['config', 'count', 'label', 'tag', 'verbose', 'positionals']);
  const lines = example.usage.split('\n');
  assert.equal(lines[0], 'Usage: loadgate example --config <file> [options]', 'required flags on the usage line');
  assert.ok(lines.includes('More:') && lines.includes('  --verbose        Say more'), 'a section of its own');
  assert.ok(lines.includes('  --count <n>      How many (default 3)'), 'the default is shown as typed');
  assert.ok(lines.includes('  --tag <t>...     A tag'), 'a repeatable flag is marked');
  assert.ok(
    lines.every((l) => l.length <= 92),
    'wrapped to the width',
  );
  assert.ok(
    lines.some((l) => /^ {19}\S/.test(l)),
    'a long help continues under its column',
  );
  assert.equal(lines.at(-1), 'Exit codes: 0 done.');
});

test('values are parsed with defaults, and an error names the flag and shows the usage', () => {
  assert.deepEqual(example.parse(['--config', 'a.yml', '--tag', 'x', '--tag', 'y']), {
    config: 'a.yml',
    count: 3,
    tag: ['x', 'y'],
    verbose: false,
    positionals: [],
  });
  assert.deepEqual(example.parse(['--config', 'a.yml', '--count', '5', '--verbose', '--label', 'l']), {
    config: 'a.yml',
    count: 5,
    label: 'l',
    tag: [],
    verbose: true,
    positionals: [],
  });
  const refused = (argv: string[], message: RegExp) =>
    assert.throws(
      () => example.parse(argv),
      (e: unknown) => e instanceof InputError && message.test(e.message) && e.message.includes(example.usage),
      argv.join(' '),
    );
  refused([], /^--config: required: the config/);
  refused(['--config', 'a.yml', '--count', 'many'], /^--count: expected a whole number/);
  refused(['--config', 'a.yml', 'stray'], /^unexpected argument "stray": every option needs its --name/);
  refused(['--config', 'a.yml', '--bogus'], /Unknown option '--bogus'/);
});

test('a command of arguments alone says what to name when they are missing, and which are too many', () => {
  const one = defineCommand({ command: 'one', synopsis: '<file>', flags: {}, positionals: z.array(z.string()).length(1, 'name one file') });
  assert.equal(one.usage, 'Usage: loadgate one <file>');
  assert.deepEqual(one.parse(['a']).positionals, ['a']);
  assert.throws(
    () => one.parse([]),
    (e: unknown) => e instanceof InputError && e.message.startsWith('name one file\n'),
  );
  assert.throws(
    () => one.parse(['a', 'b']),
    (e: unknown) => e instanceof InputError && e.message.startsWith('unexpected argument "a" "b": name one file\n'),
  );
});
