import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareVersions, toPipVersion } from '../../../src/chat-servers/synapse/version.ts';
import { InputError } from '../../../src/util/errors.ts';

const DEFAULT_PATTERN = '^v?[0-9]+\\.[0-9]+\\.[0-9]+(-rc[0-9]+)?$';

test('version labels become pip versions only when they match the pattern and pip shape', () => {
  assert.equal(toPipVersion('1.163.2', '^[0-9]+\\.[0-9]+\\.[0-9]+$', '--candidate'), '1.163.2');
  assert.equal(toPipVersion('v1.163.0-rc1', DEFAULT_PATTERN, '--candidate'), '1.163.0rc1');
  assert.throws(
    () => toPipVersion('1.163', '^[0-9]+\\.[0-9]+\\.[0-9]+$', '--baseline'),
    (e: unknown) => e instanceof InputError && /--baseline: "1.163" does not match target.versionPattern/.test((e as Error).message),
  );
  // A permissive pattern does not let shell or pip syntax through.
  for (const bad of ['1.2.3; rm -rf /', '1.2.3 --index-url=http://x', '../1.2.3', '>=1.0', '1.2.3-beta']) {
    assert.throws(() => toPipVersion(bad, '.*', '--candidate'), InputError, bad);
  }
  assert.throws(() => toPipVersion('1.2.3', '(', '--candidate'), /not a valid regular expression/);
});

test('compareVersions orders releases numerically and pre-releases first', () => {
  assert.ok(compareVersions('1.162.0', '1.163.2') < 0);
  assert.ok(compareVersions('1.99.0', '1.100.0') < 0);
  assert.ok(compareVersions('1.163.0rc1', '1.163.0') < 0);
  assert.ok(compareVersions('1.163.0rc2', '1.163.0rc1') > 0);
  assert.equal(compareVersions('1.162.0', '1.162.0'), 0);
});
