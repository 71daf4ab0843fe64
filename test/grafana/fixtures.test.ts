import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { GrafanaClient, GrafanaError } from '../../src/grafana/client.ts';
import { toSnapshotFrames } from '../../src/grafana/frames.ts';

/** The client against Grafana's documented example answers, served by a swapped-in fetch. */
function fixture(name: string): string {
  return readFileSync(new URL(`../fixtures/grafana/${name}`, import.meta.url), 'utf8');
}

function clientAnswering(status: number, name: string): GrafanaClient {
  return new GrafanaClient({ baseUrl: 'http://grafana.invalid', token: 't', fetch: async () => new Response(fixture(name), { status }) });
}

test('documented answers parse with the client schemas', async () => {
  const saved = await clientAnswering(200, 'dashboards-db-200.json').upsertDashboard({ uid: 'x', title: 'x' });
  assert.deepEqual([saved.status, saved.version], ['success', 2]);
  const got = await clientAnswering(200, 'dashboards-uid-200.json').getDashboard('cIBgcSjkk');
  assert.equal(got.meta.url, '/d/cIBgcSjkk/production-overview');
  const created = await clientAnswering(200, 'snapshots-create-200.json').createSnapshot({ dashboard: {} });
  assert.deepEqual([created.key, created.deleteKey, created.id], ['YYYYYYY', 'XXXXXXX', 1]);
  const snapshot = await clientAnswering(200, 'snapshots-get-200.json').getSnapshot('YYYYYYY');
  assert.equal(snapshot.meta.isSnapshot, true);
  const deleted = await clientAnswering(200, 'snapshots-delete-200.json').deleteSnapshot('YYYYYYY');
  assert.equal(deleted.id, 1);
  const query = await clientAnswering(200, 'ds-query-200.json').queryDataSource([{ refId: 'A', datasource: { uid: 'u' }, expr: 'up' }], 0, 1);
  const frames = toSnapshotFrames('A', query.results.A!.frames!);
  assert.deepEqual(
    frames[0]!.fields.map((f) => [f.name, f.values.length]),
    [
      ['time', 6],
      ['A-series', 6],
    ],
  );
  await assert.rejects(
    clientAnswering(412, 'dashboards-db-412.json').upsertDashboard({}),
    (e: unknown) => e instanceof GrafanaError && e.grafanaStatus === 'version-mismatch',
  );
});
