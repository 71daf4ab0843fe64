import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { GrafanaClient, GrafanaError } from '../../src/grafana/client.ts';
import { GrafanaStandIn } from './stand-in.ts';

const EDITOR = 'glsa_editor_token_for_tests_0001';
const VIEWER = 'glsa_viewer_token_for_tests_0002';
const grafana = new GrafanaStandIn({ editor: EDITOR, viewer: VIEWER });
let baseUrl = '';
before(async () => {
  baseUrl = await grafana.start();
});
after(async () => {
  await grafana.stop();
});

const dashboard = { uid: 'cmp', title: 'Comparison', panels: [{ id: 1, type: 'timeseries', title: 'RPS', targets: [] }] };

test('dashboards: create, overwrite by uid, read back', async () => {
  const client = new GrafanaClient({ baseUrl, token: EDITOR });
  const first = await client.upsertDashboard(dashboard);
  assert.deepEqual([first.uid, first.status, first.version, first.url], ['cmp', 'success', 1, '/d/cmp/comparison']);
  const second = await client.upsertDashboard({ ...dashboard, title: 'Comparison 2' });
  assert.deepEqual([second.id, second.version], [first.id, 2]);
  const got = await client.getDashboard('cmp');
  assert.equal(got.dashboard.title, 'Comparison 2');
  assert.equal(got.meta.url, '/d/cmp/comparison-2');
  // The token goes in the Authorization header as a Bearer token.
  assert.equal(grafana.requests.at(-1)!.authorization, `Bearer ${EDITOR}`);
});

test('documented error codes come back as GrafanaError with a hint', async () => {
  const client = new GrafanaClient({ baseUrl, token: EDITOR });
  await assert.rejects(
    client.getDashboard('missing'),
    (e: unknown) => e instanceof GrafanaError && e.httpStatus === 404 && /Dashboard not found/.test(e.message),
  );
  await assert.rejects(
    client.upsertDashboard({ uid: 'x', title: '' }),
    (e: unknown) => e instanceof GrafanaError && e.httpStatus === 400 && /title cannot be empty/.test(e.message),
  );

  const bad = new GrafanaClient({ baseUrl, token: 'wrong' });
  await assert.rejects(bad.getDashboard('cmp'), (e: unknown) => {
    assert.ok(e instanceof GrafanaError);
    assert.equal(e.httpStatus, 401);
    assert.match(e.message, /token was refused/);
    assert.ok(!e.message.includes('wrong'), 'the token must not be in the message');
    return true;
  });
  const viewer = new GrafanaClient({ baseUrl, token: VIEWER });
  await assert.rejects(viewer.upsertDashboard(dashboard), (e: unknown) => e instanceof GrafanaError && e.httpStatus === 403 && /Editor role/.test(e.message));
  await assert.doesNotReject(viewer.getDashboard('cmp'));
});

test("a 412 carries Grafana's status field", async () => {
  // loadgate always overwrites; check the stand-in and the client's 412 handling together.
  const client = new GrafanaClient({
    baseUrl,
    token: EDITOR,
    fetch: (url, init) => fetch(url, { ...init, body: init.body ? String(init.body).replace('"overwrite":true', '"overwrite":false') : undefined }),
  });
  await assert.rejects(
    client.upsertDashboard(dashboard),
    (e: unknown) => e instanceof GrafanaError && e.httpStatus === 412 && e.grafanaStatus === 'name-exists',
  );
});

test('snapshots: create, read, delete; 404 afterwards', async () => {
  const client = new GrafanaClient({ baseUrl, token: EDITOR });
  const created = await client.createSnapshot({ dashboard: { title: 'snap', panels: [] }, name: 'v1 vs v2', expires: 3600 });
  assert.match(created.url, /\/dashboard\/snapshot\/[0-9a-f]{32}$/);
  assert.match(created.deleteUrl, /\/api\/snapshots-delete\//);
  const stored = grafana.snapshots.get(created.key)!;
  assert.deepEqual([stored.name, stored.expires, stored.external], ['v1 vs v2', 3600, false]);
  const got = await client.getSnapshot(created.key);
  assert.equal(got.meta.isSnapshot, true);
  assert.equal(got.dashboard.title, 'snap');
  const deleted = await client.deleteSnapshot(created.key);
  assert.match(deleted.message, /Snapshot deleted/);
  assert.equal(deleted.id, stored.id);
  await assert.rejects(client.getSnapshot(created.key), (e: unknown) => e instanceof GrafanaError && e.httpStatus === 404);
  await assert.rejects(client.deleteSnapshot(created.key), (e: unknown) => e instanceof GrafanaError && e.httpStatus === 404);
});

test('external snapshots carry the key and delete key Grafana requires for them', async () => {
  const client = new GrafanaClient({ baseUrl, token: EDITOR });
  const created = await client.createSnapshot({ dashboard: { title: 'snap', panels: [] }, name: 'outlives the bench', external: true });
  const stored = grafana.snapshots.get(created.key)!;
  assert.equal(stored.external, true);
  assert.match(stored.key, /^[0-9a-f]{32}$/);
  assert.match(stored.deleteKey, /^[0-9a-f]{32}$/);
  assert.notEqual(stored.key, stored.deleteKey);
  const local = await client.createSnapshot({ dashboard: { title: 'snap', panels: [] } });
  assert.equal(grafana.snapshots.get(local.key)!.external, false);
});

test('the token never shows in inspect output, and unexpected bodies are named', async () => {
  const client = new GrafanaClient({ baseUrl, token: EDITOR });
  assert.ok(!inspect(client, { depth: 5, showHidden: true }).includes(EDITOR));
  assert.ok(!JSON.stringify(client).includes(EDITOR));
  assert.throws(() => new GrafanaClient({ baseUrl, token: '' }), /token is required/);

  const html = new GrafanaClient({ baseUrl, token: EDITOR, fetch: async () => new Response('<html>login</html>', { status: 200 }) });
  await assert.rejects(html.getSnapshot('k'), /not JSON/);
  const odd = new GrafanaClient({ baseUrl, token: EDITOR, fetch: async () => new Response('{"hello":1}', { status: 200 }) });
  await assert.rejects(odd.createSnapshot({ dashboard: {} }), /unexpected body \(key: /);
  const dead = new GrafanaClient({ baseUrl: 'http://127.0.0.1:9', token: EDITOR, timeoutMs: 2000 });
  await assert.rejects(dead.getDashboard('cmp'), (e: unknown) => e instanceof GrafanaError && e.httpStatus === undefined);
});
