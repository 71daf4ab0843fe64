import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadGateConfig } from '../../src/config/load.ts';
import { chatServerOf } from '../../src/chat-servers/registry.ts';

test('Synapse: a side runs its PyPI version with target.settings and then its own overrides; the older side builds the dataset', async () => {
  const config = await loadGateConfig('examples/local-synapse-duet.yml');
  const synapse = chatServerOf('synapse');
  assert.equal(synapse.bench, 'local');
  const base = synapse.baseOverrides({ ...config.target, settings: { caches: { global_factor: 0.5 } } });
  assert.deepEqual(
    base.map((o) => o.text),
    ['caches.global_factor=0.5'],
  );
  const side = synapse.side('candidate', '1.163.2', ['event_cache_size=20K'], config.target, base);
  assert.equal(side.version, '1.163.2');
  assert.equal(
    synapse.side('candidate', 'v1.164.0-rc1', [], { ...config.target, versionPattern: '.' }, []).version,
    '1.164.0rc1',
    'a release candidate as pip spells it',
  );
  assert.throws(() => synapse.side('candidate', 'v1.163.0rc1', [], config.target, base), /--candidate: "v1\.163\.0rc1" does not match target\.versionPattern/);
  assert.deepEqual(
    side.overrides.map((o) => o.text),
    ['caches.global_factor=0.5', 'event_cache_size=20K'],
  );
  assert.deepEqual(
    side.sideOverrides.map((o) => o.text),
    ['event_cache_size=20K'],
  );
  assert.throws(() => synapse.side('baseline', '1.162.0', ['listeners=[]'], config.target, base), /--baseline-set/);
  assert.equal(synapse.datasetVersion('1.163.2', '1.162.0'), '1.162.0');
  assert.equal(synapse.datasetVersion('1.162.0', '1.163.2'), '1.162.0');
});

test('Mattermost: a side carries only its own flags, as a config.json patch, and its release tarball; target.settings is checked but applied by the bench', async () => {
  const config = await loadGateConfig('examples/aws-mattermost-sequential.yml');
  const mattermost = chatServerOf('mattermost');
  assert.equal(mattermost.bench, 'aws');
  assert.deepEqual(mattermost.baseOverrides(config.target), []);
  assert.throws(() => mattermost.baseOverrides({ ...config.target, settings: { notASection: {} } }), /target\.settings\.notASection/);
  const side = mattermost.side('candidate', 'v11.0.1', ['ServiceSettings.EnableLinkPreviews=false'], config.target, []);
  assert.equal(side.version, 'v11.0.1');
  assert.deepEqual(side.configPatch, { ServiceSettings: { EnableLinkPreviews: false } });
  assert.match(side.releaseUrl ?? '', /^https:\/\/releases\.mattermost\.com\/11\.0\.1\/mattermost-11\.0\.1-linux-amd64\.tar\.gz$/);
  assert.equal(mattermost.datasetVersion('v11.0.1', 'v10.12.0'), 'v11.0.1', "the bench's dataset, whatever the versions");
});
