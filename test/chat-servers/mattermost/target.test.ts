import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateVersionLabel, stripLeadingV } from '../../../src/chat-servers/mattermost/version.ts';
import { resolveReleaseUrl } from '../../../src/chat-servers/mattermost/release.ts';
import { buildMattermostConfigPatch, deepMerge, redactConfigPatch, type BenchTopology } from '../../../src/chat-servers/mattermost/config-patch.ts';
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
  assert.throws(() => validateVersionLabel('10.12.0', strictTarget.versionPattern, 'candidate'), /candidate: "10\.12\.0" does not match target\.versionPattern/);
  assert.throws(() => validateVersionLabel('v10.12.0-beta', strictTarget.versionPattern), /does not match/);
  // Even a pattern that allows anything cannot let a slash through.
  assert.throws(() => validateVersionLabel('v1/2', '.*'), /not a safe version label/);
  assert.throws(() => validateVersionLabel('v1', '('), /not a valid regular expression/);
});

test('a download template must keep the host fixed and carry the placeholder', () => {
  assert.throws(() => resolveReleaseUrl(targetSchema.parse({ system: 'mattermost', downloadUrl: 'https://example.com/mm.tgz' }), 'v1.0.0'), /no \{version\} placeholder/);
  assert.throws(() => resolveReleaseUrl(targetSchema.parse({ system: 'mattermost', downloadUrl: 'https://{version}.example.com/mm.tgz' }), 'v1.0.0'), /host name/);
});

const topology: BenchTopology = {
  siteUrl: 'http://10.0.1.10/',
  database: { host: 'db.cluster-x.us-east-1.rds.amazonaws.com', name: 'mattermost', user: 'mmuser', password: 'p@ss:w/rd', readers: ['db-ro.example', 'db-ro2.example:6432'] },
  appNodes: 2,
  maxUsers: 250_000,
};

test('the bench patch wires the database, cluster and metrics', () => {
  const config = buildMattermostConfigPatch({ topology });
  const sql = config.SqlSettings as Record<string, unknown>;
  assert.equal(sql.DriverName, 'postgres');
  assert.equal(sql.DataSource, 'postgres://mmuser:p%40ss%3Aw%2Frd@db.cluster-x.us-east-1.rds.amazonaws.com:5432/mattermost?sslmode=disable&connect_timeout=10');
  assert.deepEqual(sql.DataSourceReplicas, [
    'postgres://mmuser:p%40ss%3Aw%2Frd@db-ro.example:5432/mattermost?sslmode=disable&connect_timeout=10',
    'postgres://mmuser:p%40ss%3Aw%2Frd@db-ro2.example:6432/mattermost?sslmode=disable&connect_timeout=10',
  ]);
  assert.deepEqual(config.MetricsSettings, { Enable: true, ListenAddress: ':8067' });
  assert.equal((config.ClusterSettings as Record<string, unknown>).Enable, true);
  assert.equal((config.ServiceSettings as Record<string, unknown>).SiteURL, 'http://10.0.1.10');
  // Users per team must not cap the test.
  assert.equal((config.TeamSettings as Record<string, unknown>).MaxUsersPerTeam, 250_000);
  assert.equal((config.LogSettings as Record<string, unknown>).EnableDiagnostics, false);
  const single = buildMattermostConfigPatch({ topology: { ...topology, appNodes: 1 } });
  assert.equal((single.ClusterSettings as Record<string, unknown>).Enable, false);
});

test('gate settings then side overrides are layered on top', () => {
  const config = buildMattermostConfigPatch({
    topology,
    settings: { ServiceSettings: { EnableLinkPreviews: false, ReadTimeout: 120 }, FeatureFlags: { NewThing: true } },
    side: { name: 'candidate', overrides: { ServiceSettings: { ReadTimeout: 30 }, SqlSettings: { MaxOpenConns: 300 } } },
  });
  const service = config.ServiceSettings as Record<string, unknown>;
  assert.deepEqual([service.EnableLinkPreviews, service.ReadTimeout, service.WriteTimeout], [false, 30, 60]);
  assert.equal((config.SqlSettings as Record<string, unknown>).MaxOpenConns, 300);
  assert.deepEqual(config.FeatureFlags, { NewThing: true });
});

test('overrides cannot rewire the bench or use malformed sections', () => {
  assert.throws(
    () => buildMattermostConfigPatch({ topology, settings: { SqlSettings: { DataSource: 'postgres://other' } } }),
    (e: unknown) => e instanceof InputError && /target\.settings\.SqlSettings\.DataSource: set by the bench/.test(e.message),
  );
  assert.throws(
    () => buildMattermostConfigPatch({ topology, side: { name: 'baseline', overrides: { MetricsSettings: { ListenAddress: ':9999' } } } }),
    /baseline overrides\.MetricsSettings\.ListenAddress/,
  );
  assert.throws(() => buildMattermostConfigPatch({ topology, settings: { serviceSettings: {} } }), /not a Mattermost config section/);
  assert.throws(() => buildMattermostConfigPatch({ topology, settings: { ServiceSettings: true } }), /expected an object of settings/);
  assert.throws(
    () => buildMattermostConfigPatch({ topology: { ...topology, database: { ...topology.database, host: 'db;drop' } } }),
    /database\.host: expected a host name/,
  );
});

test('deepMerge does not alias inputs; redaction hides DSN passwords', () => {
  const base = { A: { x: 1, list: [1, 2] } };
  const patch = { A: { list: [3] }, B: { y: { z: 1 } } };
  const merged = deepMerge(base, patch);
  assert.deepEqual(merged, { A: { x: 1, list: [3] }, B: { y: { z: 1 } } });
  (merged.B as { y: { z: number } }).y.z = 2;
  assert.equal(patch.B.y.z, 1);
  assert.deepEqual(base, { A: { x: 1, list: [1, 2] } });

  const redacted = redactConfigPatch(buildMattermostConfigPatch({ topology }));
  const text = JSON.stringify(redacted);
  assert.ok(!text.includes('p%40ss'), 'password must not appear');
  assert.match(text, /postgres:\/\/mmuser:\*\*\*@db\.cluster-x/);
});
