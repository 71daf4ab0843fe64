import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateVersionLabel, stripLeadingV } from '../../../src/chat-servers/mattermost/version.ts';
import { resolveReleaseUrl } from '../../../src/chat-servers/mattermost/release.ts';
import { benchNodeDefaults, checkedOverrides, deepMerge } from '../../../src/chat-servers/mattermost/config-patch.ts';
import { targetSchema } from '../../../src/config/schema.ts';
import { InputError } from '../../../src/util/errors.ts';

const defaultTarget = targetSchema.parse({ system: 'mattermost' });
const strictTarget = targetSchema.parse({ system: 'mattermost', versionPattern: '^v[0-9]+\\.[0-9]+\\.[0-9]+(-rc[0-9]+)?$' });

test('release URLs use the version without its leading v', () => {
  assert.equal(resolveReleaseUrl(defaultTarget, 'v10.12.0'), 'https://releases.mattermost.com/10.12.0/mattermost-10.12.0-linux-amd64.tar.gz');
  assert.equal(resolveReleaseUrl(strictTarget, 'v11.0.1-rc2'), 'https://releases.mattermost.com/11.0.1-rc2/mattermost-11.0.1-rc2-linux-amd64.tar.gz');
  assert.equal(resolveReleaseUrl(defaultTarget, '9.5.7'), 'https://releases.mattermost.com/9.5.7/mattermost-9.5.7-linux-amd64.tar.gz');
  const custom = targetSchema.parse({ system: 'mattermost', downloadUrl: 'https://mirror.example/mm/{version}/mm.tgz?v={version}' });
  assert.equal(resolveReleaseUrl(custom, 'v10.0.0'), 'https://mirror.example/mm/10.0.0/mm.tgz?v=10.0.0');
  assert.equal(stripLeadingV('v1.2.3'), '1.2.3');
  assert.equal(stripLeadingV('1.2.3'), '1.2.3');
});

test('unsafe or non-matching version labels are refused before use', () => {
  const bad = ['v1.2.3/../../etc', '../v1.2.3', 'v1.2.3 ', 'v1.2.3;rm -rf /', 'v1.2.3$(id)', '`id`', 'v1.2.3|cat', 'v1.2.3&&x', "v1'2", 'v1.2\n3', 'a..b', ''];
  for (const label of bad) {
    assert.throws(() => resolveReleaseUrl(defaultTarget, label), InputError, JSON.stringify(label));
  }
  // Safe characters but not what the gate allows.
  assert.throws(
    () => validateVersionLabel('10.12.0', strictTarget.versionPattern, 'candidate'),
    /candidate: "10\.12\.0" does not match target\.versionPattern/,
  );
  assert.throws(() => validateVersionLabel('v10.12.0-beta', strictTarget.versionPattern), /does not match/);
  // Even a pattern that allows anything cannot let a slash through.
  assert.throws(() => validateVersionLabel('v1/2', '.*'), /not a safe version label/);
  assert.throws(() => validateVersionLabel('v1', '('), /not a valid regular expression/);
});

test('a download template must keep the host fixed and carry the placeholder', () => {
  assert.throws(
    () => resolveReleaseUrl(targetSchema.parse({ system: 'mattermost', downloadUrl: 'https://example.com/mm.tgz' }), 'v1.0.0'),
    /no \{version\} placeholder/,
  );
  assert.throws(
    () => resolveReleaseUrl(targetSchema.parse({ system: 'mattermost', downloadUrl: 'https://{version}.example.com/mm.tgz' }), 'v1.0.0'),
    /host name/,
  );
});

test('the node-independent bench settings do not cap the test or call out', () => {
  const config = benchNodeDefaults(250_000);
  // Users per team must not cap the test.
  assert.equal(config.TeamSettings?.MaxUsersPerTeam, 250_000);
  assert.equal(config.LogSettings?.EnableDiagnostics, false);
  // The topology is the user data's: none of the keys the bench owns is set here.
  for (const [section, values] of Object.entries(config))
    for (const key of Object.keys(values as object))
      assert.ok(!(`${section}.${key}` === 'SqlSettings.DataSource' || `${section}.${key}` === 'MetricsSettings.ListenAddress'), `${section}.${key}`);
});

test('gate settings then side overrides are layered on top of the bench settings', () => {
  const settings = checkedOverrides({ ServiceSettings: { EnableLinkPreviews: false, ReadTimeout: 120 }, FeatureFlags: { NewThing: true } }, 'target.settings');
  const side = checkedOverrides({ ServiceSettings: { ReadTimeout: 30 }, SqlSettings: { MaxOpenConns: 300 } }, 'candidate overrides');
  const config = deepMerge(deepMerge(benchNodeDefaults(1000), settings), side);
  const service = config.ServiceSettings as Record<string, unknown>;
  assert.deepEqual([service.EnableLinkPreviews, service.ReadTimeout, service.WriteTimeout], [false, 30, 60]);
  assert.equal((config.SqlSettings as Record<string, unknown>).MaxOpenConns, 300);
  assert.deepEqual(config.FeatureFlags, { NewThing: true });
});

test('overrides cannot rewire the bench or use malformed sections', () => {
  assert.throws(
    () => checkedOverrides({ SqlSettings: { DataSource: 'postgres://other' } }, 'target.settings'),
    (e: unknown) => e instanceof InputError && /target\.settings\.SqlSettings\.DataSource: set by the bench/.test(e.message),
  );
  assert.throws(
    () => checkedOverrides({ MetricsSettings: { ListenAddress: ':9999' } }, 'baseline overrides'),
    /baseline overrides\.MetricsSettings\.ListenAddress/,
  );
  assert.throws(() => checkedOverrides({ serviceSettings: {} }, 'target.settings'), /not a Mattermost config section/);
  assert.throws(() => checkedOverrides({ ServiceSettings: true }, 'target.settings'), /expected an object of settings/);
});

test('deepMerge does not alias inputs', () => {
  const base = { A: { x: 1, list: [1, 2] } };
  const patch = { A: { list: [3] }, B: { y: { z: 1 } } };
  const merged = deepMerge(base, patch);
  assert.deepEqual(merged, { A: { x: 1, list: [3] }, B: { y: { z: 1 } } });
  (merged.B as { y: { z: number } }).y.z = 2;
  assert.equal(patch.B.y.z, 1);
  assert.deepEqual(base, { A: { x: 1, list: [1, 2] } });
});
