import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pickBaseline } from '../../src/inputs/pick-baseline.ts';
import { compareSemVer, parseSemVer } from '../../src/inputs/semver.ts';

function order(tags: string[]): string[] {
  return [...tags].sort((a, b) => compareSemVer(parseSemVer(a)!, parseSemVer(b)!));
}

test('semver order: numeric parts, pre-releases before their release, rc10 after rc9', () => {
  assert.deepEqual(order(['v1.10.0', 'v1.2.0', 'v1.2.0-rc10', 'v1.2.0-rc9', 'v1.2.0-rc.2', 'v1.9.9', 'v0.9.0']), [
    'v0.9.0',
    'v1.2.0-rc.2',
    'v1.2.0-rc9',
    'v1.2.0-rc10',
    'v1.2.0',
    'v1.9.9',
    'v1.10.0',
  ]);
  assert.ok(compareSemVer(parseSemVer('1.2.3-alpha')!, parseSemVer('1.2.3-beta')!) < 0);
  assert.ok(compareSemVer(parseSemVer('1.2.3-rc.1')!, parseSemVer('1.2.3-rc.1.1')!) < 0);
  assert.equal(parseSemVer('release-1'), null);
});

test('picks the newest stable tag below the candidate, skipping pre-releases and newer tags', () => {
  const tags = ['v1.9.0', 'v1.10.0', 'v1.10.1', 'v1.11.0-rc1', 'v1.11.0-rc2', 'v1.11.0', 'v1.10.2-rc1', 'nightly', 'latest', 'v2.0.0'];
  const choice = pickBaseline('v1.11.0-rc2', tags);
  assert.equal(choice.baseline, 'v1.10.1');
  assert.match(choice.reason, /^v1\.10\.1 is the newest stable release below v1\.11\.0-rc2 in semver order/);
  assert.deepEqual(choice.skipped, { prerelease: 2, notBelow: 2, notVersion: 2, patternMismatch: 0 });
});

test('the gate version pattern filters baselines', () => {
  const choice = pickBaseline('v1.3.0-rc1', ['1.2.9', 'v1.2.0'], '^v[0-9]+\\.[0-9]+\\.[0-9]+(-rc[0-9]+)?$');
  assert.equal(choice.baseline, 'v1.2.0');
  assert.equal(choice.skipped.patternMismatch, 1);
});

test('hostile tag names are never picked', () => {
  const choice = pickBaseline('v1.3.0', ['v1.2.9;id', 'v1.2.8$(id)', 'v1.2.7\nx', 'v１.２.９', 'v1.0.0']);
  assert.equal(choice.baseline, 'v1.0.0');
  assert.equal(choice.skipped.notVersion, 4);
});

test('no stable tag below: a clear error asking for an explicit baseline', () => {
  assert.throws(
    () => pickBaseline('v1.0.0-rc1', ['v1.0.0', 'v1.0.0-rc1', 'v0.9.0-beta1']),
    /no stable release tag below v1\.0\.0-rc1 among 3 tags .*give the baseline input explicitly/,
  );
});

test('a hostile candidate is refused before tags are looked at', () => {
  assert.throws(() => pickBaseline('v1.3.0$(id)', ['v1.2.0']), { message: /^candidate: / });
});
