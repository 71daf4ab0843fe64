import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { matchesFilterPatterns, parseFilterPattern, parseFilterPatterns } from '../../src/inputs/glob.ts';
import { InputError } from '../../src/util/errors.ts';

/** [pattern, names it matches, names it does not], from GitHub's filter pattern cheat sheet and the syntax it states. */
const CASES: [string, string[], string[]][] = [
  ['v*-rc*', ['v1.2.3-rc1', 'v-rc', 'v10.0.0-rc.2'], ['v1.2.3', 'release/v1.2.3-rc1', 'xv1-rc1']],
  ['v2*', ['v2', 'v2.0', 'v2.9'], ['v1.0', 'v2/x']],
  ['v1.*', ['v1.0', 'v1.9.1'], ['v1', 'v1x0', 'v2.0']],
  ['**', ['v1', 'release/v1/rc'], []],
  ['release/**', ['release/v1', 'release/a/b'], ['release', 'other/v1']],
  // ? and + repeat the preceding character (not "any character").
  ['Octoc?at', ['Octocat', 'Octoat'], ['Octoccat', 'Octocxat']],
  ['v1.2.3-rc1+', ['v1.2.3-rc1', 'v1.2.3-rc11', 'v1.2.3-rc111'], ['v1.2.3-rc', 'v1.2.3-rc12']],
  ['v?1.0.0', ['v1.0.0', '1.0.0'], ['x1.0.0', 'vv1.0.0']],
  // [] ranges, repeated with +: semantic-version candidates only.
  ['v[0-9]+.[0-9]+.[0-9]+-rc[0-9]+', ['v1.2.3-rc1', 'v10.20.30-rc45'], ['v1.2.3', 'v1.2.x-rc1', 'v1.2.3-rc', 'v1.2.3-rc1a']],
  ['[CB]at', ['Cat', 'Bat'], ['cat', 'Rat', 'CBat']],
  ['[1-2]00', ['100', '200'], ['300', '1200']],
  ['v[12].[0-9]+.[0-9]+', ['v1.10.1', 'v2.0.0'], ['v3.0.0', 'v1.x.0']],
  // "." is literal, and a "!" that is not first is literal too.
  ['v1.2.3', ['v1.2.3'], ['v1x2x3']],
  ['v1!', ['v1!'], ['v1']],
  ['v\\*', ['v*'], ['v1']],
];

for (const [pattern, yes, no] of CASES) {
  test(`filter pattern ${pattern}`, () => {
    const re = parseFilterPattern(pattern).regex;
    for (const name of yes) assert.ok(re.test(name), `${pattern} matches ${name}`);
    for (const name of no) assert.ok(!re.test(name), `${pattern} does not match ${name}`);
  });
}

test('a leading ! negates, and in a list the last matching pattern decides', () => {
  assert.equal(parseFilterPattern('!v*-rc0').negated, true);
  const list = parseFilterPatterns('v*-rc*,!v0.*,v0.9.*');
  assert.ok(matchesFilterPatterns('v1.0.0-rc1', list));
  assert.ok(!matchesFilterPatterns('v0.1.0-rc1', list), 'excluded by !v0.*');
  assert.ok(matchesFilterPatterns('v0.9.0-rc1', list), 'included again by a later positive pattern');
  assert.ok(!matchesFilterPatterns('v1.0.0', list));
  assert.throws(() => parseFilterPatterns('!v*'), /starts with a negated pattern/);
});

test('patterns outside the syntax are refused with the reason', () => {
  const refused: [string, RegExp][] = [
    ['?v1', /repeats the preceding character/],
    ['v*+', /repeats the preceding character/],
    ['v1??', /repeats the preceding character/],
    ['v[0-9', /no closing "\]"/],
    ['v0-9]', /no opening "\["/],
    ['v[9-0]', /not a range/],
    ['v[a-Z]', /not a range/],
    ['v[!0-9]', /may only list letters, digits and ranges/],
    ['v[.]', /may only list letters, digits and ranges/],
    ['v*;id', /not an accepted tag pattern/],
    ['v$(id)', /not an accepted tag pattern/],
    ['v* -rc', /not an accepted tag pattern/],
    ['v\n', /not an accepted tag pattern/],
    ['v1\\', /escapes nothing/],
    ['!', /needs a pattern after it/],
    ['v'.repeat(65), /not an accepted tag pattern/],
  ];
  for (const [pattern, why] of refused) {
    assert.throws(
      () => parseFilterPattern(pattern),
      (e: unknown) => e instanceof InputError && /^rc-pattern: /.test(e.message) && why.test(e.message),
      JSON.stringify(pattern),
    );
  }
});

for (const file of ['.github/workflows/release-gate.yml', 'examples/workflows/loadgate.yml']) {
  test(`${file}: on.push.tags and the rc-pattern input are the same patterns, both valid`, () => {
    const wf = parse(readFileSync(file, 'utf8')) as { on: { push: { tags: string[] } }; jobs: { gate: { with: { 'rc-pattern': string } } } };
    const tags = wf.on.push.tags;
    const rcPattern = wf.jobs.gate.with['rc-pattern'];
    assert.ok(Array.isArray(tags) && tags.length > 0, 'on.push.tags lists the release-candidate patterns');
    assert.deepEqual(rcPattern.split(','), tags, 'rc-pattern must list exactly the patterns of on.push.tags, comma-separated, in order');
    parseFilterPatterns(rcPattern);
  });
}
