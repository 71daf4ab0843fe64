import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GrafanaClient, GrafanaError } from '../../src/grafana/client.ts';
import { loadDashboardFile, publishSnapshot, snapshotStoreFromEnv } from '../../src/grafana/snapshot.ts';
import { toSnapshotFrames, applyLegend } from '../../src/grafana/frames.ts';
import { dashboardVariables, interpolate, parseVariableFlags } from '../../src/grafana/variables.ts';
import { captureIO } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { runResultSchema } from '../../src/results/schema.ts';
import { GrafanaStandIn } from './stand-in.ts';

const DASHBOARD_FILE = fileURLToPath(new URL('../../grafana/dashboards/loadgate-comparison.json', import.meta.url));
const TOKEN = 'glsa_snapshot_test_token_0003';
const grafana = new GrafanaStandIn({ editor: TOKEN });
let baseUrl = '';
before(async () => {
  baseUrl = await grafana.start();
});
after(async () => {
  await grafana.stop();
});

test('the comparison dashboard has the ten graphs with Mattermost metric names', async () => {
  const dashboard = await loadDashboardFile(DASHBOARD_FILE);
  assert.equal(dashboard.panels.length, 10);
  const exprs = dashboard.panels.map((p) => p.targets[0]?.expr ?? '');
  for (const metric of [
    'mattermost_api_time_bucket',
    'mattermost_api_time_sum',
    'mattermost_db_store_time_bucket',
    'mattermost_db_store_time_sum',
    'mattermost_process_cpu_seconds_total',
    'go_goroutines',
    'go_memstats_heap_inuse_bytes',
    'mattermost_http_websockets_total',
    'mattermost_http_requests_total',
    'go_memstats_stack_inuse_bytes',
  ]) {
    assert.ok(
      exprs.some((e) => e.includes(metric)),
      `no panel queries ${metric}`,
    );
  }
  // Panels tile a 2-wide grid without overlapping.
  const cells = new Set(dashboard.panels.map((p) => JSON.stringify([(p.gridPos as { x: number }).x, (p.gridPos as { y: number }).y])));
  assert.equal(cells.size, 10);
});

test('publishes a snapshot with every panel data embedded and the window as its time', async () => {
  const dashboard = await loadDashboardFile(DASHBOARD_FILE);
  const client = new GrafanaClient({ baseUrl, token: TOKEN });
  const from = new Date('2025-09-30T14:05:00Z');
  const to = new Date('2025-09-30T15:35:00Z');
  const outcome = await publishSnapshot(client, {
    dashboard,
    name: 'v11.0.1-rc2 bounded',
    from,
    to,
    datasourceUid: 'prometheus',
    variables: { app_instance: 'app.*:8067' },
  });

  assert.deepEqual(outcome.warnings, []);
  assert.equal(outcome.dashboardUrl, `${baseUrl}/d/loadgate-comparison/loadgate-mattermost-release-comparison`);
  assert.match(outcome.url, new RegExp(`^${baseUrl}/dashboard/snapshot/`));
  // It is a valid run-result link.
  assert.doesNotThrow(() => runResultSchema.shape.links.parse([{ title: outcome.title, url: outcome.url }]));

  // The live dashboard was uploaded with overwrite.
  assert.ok(grafana.dashboards.has('loadgate-comparison'));
  const stored = grafana.snapshots.get(outcome.key)!;
  assert.equal(stored.name, 'v11.0.1-rc2 bounded');
  assert.equal(stored.external, false);
  const snap = stored.dashboard as {
    time: { from: string; to: string };
    panels: { title: string; snapshotData: { fields: { name: string; values: unknown[]; config: { displayName?: string } }[] }[] }[];
  };
  assert.deepEqual(snap.time, { from: '2025-09-30T14:05:00.000Z', to: '2025-09-30T15:35:00.000Z' });
  assert.equal(snap.panels.length, 10);
  for (const panel of snap.panels) {
    assert.ok(panel.snapshotData.length >= 1, `${panel.title} has no data`);
    const [time, value] = panel.snapshotData[0]!.fields;
    assert.equal(time!.name, 'Time');
    assert.equal(time!.values.length, value!.values.length);
    // 90 minutes at most 1000 points: the 15 s floor wins, so 361 points.
    assert.equal(time!.values.length, 361);
  }
  // Per-instance panels carry their legend.
  const cpu = snap.panels.find((p) => p.title === 'CPU utilization')!;
  assert.deepEqual(
    cpu.snapshotData.map((f) => f.fields[1]!.config.displayName),
    ['app0:8067', 'app1:8067'],
  );

  // Variables were filled in before querying: no "$" left in what reached Grafana.
  const queries = grafana.requests.filter((r) => r.path === '/api/ds/query');
  assert.equal(queries.length, 10);
  const exprs = grafana.queriedExprs.slice(-10);
  assert.ok(
    exprs.every((e) => e.includes('instance=~"app.*:8067"') && !e.includes('$')),
    exprs.join('\n'),
  );
});

test('a failing panel becomes a warning; only all panels failing is an error', async () => {
  const client = new GrafanaClient({ baseUrl, token: TOKEN });
  const dashboard = {
    uid: 'partial',
    title: 'Partial',
    panels: [
      { id: 1, type: 'timeseries', title: 'ok', targets: [{ refId: 'A', expr: 'sum(rate(x[1m]))' }] },
      { id: 2, type: 'timeseries', title: 'broken', targets: [{ refId: 'A', expr: 'fail_query(' }] },
      { id: 3, type: 'text', title: 'notes', targets: [] },
    ],
  };
  const window = { from: new Date('2025-09-30T14:00:00Z'), to: new Date('2025-09-30T14:10:00Z'), datasourceUid: 'prometheus' };
  const outcome = await publishSnapshot(client, { dashboard, name: 'partial', ...window });
  assert.equal(outcome.warnings.length, 1);
  assert.match(outcome.warnings[0]!, /panel "broken" query A: bad_data: parse error/);

  await assert.rejects(
    publishSnapshot(client, { dashboard: { ...dashboard, uid: 'allbad', panels: [dashboard.panels[1]!] }, name: 'x', ...window }),
    (e: unknown) => e instanceof GrafanaError && /no panel returned data/.test(e.message),
  );
  await assert.rejects(
    publishSnapshot(client, { dashboard, name: 'x', ...window, datasourceUid: 'nope' }),
    /no panel returned data[\s\S]*Data source not found/,
  );
  await assert.rejects(publishSnapshot(client, { dashboard, name: 'x', from: window.to, to: window.from, datasourceUid: 'prometheus' }), /--to: must be later/);
  // An auth failure is not a panel problem: it stops the whole publish.
  const badToken = new GrafanaClient({ baseUrl, token: 'nope' });
  await assert.rejects(publishSnapshot(badToken, { dashboard, name: 'x', ...window }), (e: unknown) => e instanceof GrafanaError && e.httpStatus === 401);
});

test('frames, legends and variables', async () => {
  const frames = toSnapshotFrames(
    'A',
    [
      {
        schema: {
          fields: [
            { name: 'Time', type: 'time' },
            { name: 'Value', type: 'number', labels: { instance: 'app0', handler: 'login' } },
          ],
        },
        data: {
          values: [
            [1, 2],
            [0.5, null],
          ],
        },
      },
    ],
    '{{handler}} on {{ instance }}',
  );
  assert.deepEqual(frames[0]!.fields[1], {
    name: 'Value',
    type: 'number',
    config: { displayName: 'login on app0' },
    labels: { instance: 'app0', handler: 'login' },
    values: [0.5, null],
  });
  assert.throws(() => toSnapshotFrames('A', [{ schema: { fields: [{ name: 't' }, { name: 'v' }] }, data: { values: [[1, 2], [1]] } }]), /different lengths/);
  assert.equal(applyLegend('{{missing}}-x', {}), '-x');

  const dashboard = await loadDashboardFile(DASHBOARD_FILE);
  const vars = dashboardVariables(dashboard, 'prom-uid', { extra: '1' });
  assert.deepEqual(vars, { datasource: 'prom-uid', app_instance: '.*:8067', extra: '1' });
  assert.equal(interpolate('rate(x{i=~"$app_instance"}[$__rate_interval]) ${extra} [[extra]]', vars, 'q'), 'rate(x{i=~".*:8067"}[$__rate_interval]) 1 1');
  assert.throws(() => interpolate('x{job="$job"}', vars, 'panel "RPS" query A'), /panel "RPS" query A uses the dashboard variable\(s\) job.*--var job=VALUE/);
  assert.deepEqual(parseVariableFlags(['a=b=c', 'empty=']), { a: 'b=c', empty: '' });
  assert.throws(() => parseVariableFlags(['novalue']), /expected name=value/);
});

test('loadgate grafana-snapshot prints the snapshot as JSON; the token comes from the environment', async () => {
  const io = captureIO();
  process.env.LOADGATE_TEST_GRAFANA_TOKEN = TOKEN;
  try {
    const args = [
      '--url',
      baseUrl,
      '--token-env',
      'LOADGATE_TEST_GRAFANA_TOKEN',
      '--dashboard',
      DASHBOARD_FILE,
      '--from',
      '2025-09-30T14:05:00Z',
      '--to',
      '2025-09-30T14:35:00+00:00',
      '--name',
      'cli run',
      '--expires',
      '720h',
    ];
    const code = await main(['grafana-snapshot', ...args], io);
    assert.equal(code, 0, io.stderr.join('\n'));
    const printed = JSON.parse(io.stdout.join('\n')) as { title: string; url: string; key: string; dashboardUrl: string };
    assert.equal(printed.title, 'cli run');
    assert.equal(grafana.snapshots.get(printed.key)?.expires, 720 * 3600);
    assert.ok(!io.stdout.join('').includes(TOKEN) && !io.stderr.join('').includes(TOKEN));

    // Passing the token itself instead of a variable name is refused without echoing it.
    const leak = captureIO();
    assert.equal(await main(['grafana-snapshot', ...args.slice(0, 2), '--token-env', 'glsa-abc.def', ...args.slice(4)], leak), 3);
    assert.match(leak.stderr.join('\n'), /NAME of an environment variable/);
    assert.ok(!leak.stderr.join('').includes('glsa-abc.def'));

    const unset = captureIO();
    assert.equal(await main(['grafana-snapshot', ...args.slice(0, 2), '--token-env', 'LOADGATE_TEST_UNSET_VAR', ...args.slice(4)], unset), 3);
    assert.match(unset.stderr.join('\n'), /LOADGATE_TEST_UNSET_VAR is not set/);

    const badTime = captureIO();
    assert.equal(await main(['grafana-snapshot', ...args.slice(0, 6), '--from', 'yesterday', ...args.slice(8)], badTime), 3);
    assert.match(badTime.stderr.join('\n'), /--from: expected an ISO 8601 time/);

    // A refused token is user-fixable input (exit 3); Grafana being down is a failure (exit 1).
    process.env.LOADGATE_TEST_GRAFANA_TOKEN = 'not-the-token';
    const refused = captureIO();
    assert.equal(await main(['grafana-snapshot', ...args], refused), 3);
    assert.match(refused.stderr.join('\n'), /HTTP 401.*token from LOADGATE_TEST_GRAFANA_TOKEN/);
    const down = captureIO();
    assert.equal(await main(['grafana-snapshot', '--url', 'http://127.0.0.1:9', ...args.slice(2)], down), 1);
  } finally {
    delete process.env.LOADGATE_TEST_GRAFANA_TOKEN;
  }
});

test('dashboard files: the API wrapper form is accepted, broken files are named', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'loadgate-grafana-'));
  try {
    const wrapped = join(dir, 'wrapped.json');
    writeFileSync(
      wrapped,
      JSON.stringify({ dashboard: { uid: 'w', title: 'W', panels: [{ id: 1, type: 'timeseries', targets: [{ expr: 'up' }] }] }, meta: {} }),
    );
    const loaded = await loadDashboardFile(wrapped);
    assert.deepEqual([loaded.uid, loaded.panels[0]!.targets[0]!.refId], ['w', 'A']);
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, JSON.stringify({ uid: 'has space', title: '', panels: [] }));
    await assert.rejects(loadDashboardFile(broken), /broken\.json is not a Grafana dashboard/);
    const notJson = join(dir, 'x.json');
    writeFileSync(notJson, '{');
    await assert.rejects(loadDashboardFile(notJson), /x\.json is not valid JSON/);
    await assert.rejects(loadDashboardFile(join(dir, 'missing.json')), /cannot read dashboard .*ENOENT/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('finding 9: one failing query in a panel costs its own series only, not the panel', async () => {
  const client = new GrafanaClient({ baseUrl, token: TOKEN });
  const dashboard = {
    uid: 'mixed',
    title: 'Mixed',
    panels: [
      {
        id: 1,
        type: 'timeseries',
        title: 'two queries',
        targets: [
          { refId: 'A', expr: 'sum(rate(good[1m]))' },
          { refId: 'B', expr: 'fail_query(' },
        ],
      },
    ],
  };
  const window = { from: new Date('2025-09-30T14:00:00Z'), to: new Date('2025-09-30T14:10:00Z'), datasourceUid: 'prometheus' };
  const outcome = await publishSnapshot(client, { dashboard, name: 'mixed', ...window });
  assert.deepEqual(outcome.warnings, ['panel "two queries" query B: bad_data: parse error: unexpected identifier "fail_query"']);
  const key = new URL(outcome.url).pathname.split('/').pop()!;
  const saved = (await client.getSnapshot(key)) as unknown as { dashboard: { panels: { snapshotData: { refId: string }[] }[] } };
  const frames = saved.dashboard.panels[0]!.snapshotData;
  assert.ok(frames.length >= 1 && frames.every((f) => f.refId === 'A'), "the good query's series are kept");
  // A 400 without per-query results is still an error.
  await assert.rejects(
    client.queryDataSource([{ refId: 'A', datasource: { uid: 'prometheus' }, expr: '' } as never], 0, 1000),
    /HTTP 400: query A: expr is required/,
  );
});

test("snapshots outlive the bench: kept on the user's Grafana, or not taken at all; never linked to the bench's Grafana", async () => {
  const dashboard = await loadDashboardFile(DASHBOARD_FILE);
  const USER_TOKEN = 'glsa_user_grafana_token_0004';
  // The user's Grafana, with its root_url set as a served Grafana has it.
  const user = new GrafanaStandIn({ editor: USER_TOKEN }, 'https://grafana.example.com/');
  const userUrl = await user.start();
  try {
    const bench = new GrafanaClient({ baseUrl, token: TOKEN });
    const window = { from: new Date('2025-09-30T14:05:00Z'), to: new Date('2025-09-30T15:35:00Z') };
    const before = grafana.snapshots.size;

    const store = snapshotStoreFromEnv({ LOADGATE_SNAPSHOT_GRAFANA: userUrl, LOADGATE_GRAFANA_TOKEN: USER_TOKEN });
    const kept = await publishSnapshot(bench, { dashboard, name: 'v11.0.1-rc2 bounded', ...window, datasourceUid: 'prometheus', store });
    assert.equal(grafana.snapshots.size, before, "nothing stored on the bench's Grafana");
    const [snapshot] = [...user.snapshots.values()];
    assert.ok(snapshot && !snapshot.external, "stored on the user's Grafana with external=false");
    const panels = snapshot.dashboard.panels as Array<{ snapshotData: unknown[] }>;
    assert.ok(
      panels.every((p) => p.snapshotData.length > 0),
      "every panel's data embedded: the user's Grafana needs no data source",
    );
    assert.equal(kept.url, `${userUrl}/dashboard/snapshot/${snapshot.key}`);
    assert.ok(
      user.requests.every((r) => r.authorization === `Bearer ${USER_TOKEN}`),
      "the user's token, only there",
    );

    // No Grafana outlives the bench: refused before anything is uploaded, so nothing is linked.
    const requests = grafana.requests.length;
    await assert.rejects(
      publishSnapshot(bench, {
        dashboard,
        name: 'x',
        ...window,
        datasourceUid: 'prometheus',
        store: snapshotStoreFromEnv({ LOADGATE_SNAPSHOT_GRAFANA: 'none' }),
      }),
      /destroyed with the bench.*LOADGATE_GRAFANA_URL/,
    );
    assert.equal(grafana.requests.length, requests, "the bench's Grafana was not touched");

    // The link is the address Grafana was reached at, not its root_url (http://localhost:3000/ by default).
    const local = await publishSnapshot(bench, { dashboard, name: 'y', ...window, datasourceUid: 'prometheus', store: { kind: 'source' } });
    assert.match(local.url, new RegExp(`^${baseUrl}/dashboard/snapshot/[0-9a-f]+$`));

    assert.deepEqual(snapshotStoreFromEnv({}), { kind: 'source' });
    assert.throws(() => snapshotStoreFromEnv({ LOADGATE_SNAPSHOT_GRAFANA: userUrl }), /LOADGATE_GRAFANA_TOKEN/);
    assert.throws(() => snapshotStoreFromEnv({ LOADGATE_SNAPSHOT_GRAFANA: 'grafana.example.com' }), /expected the URL of a Grafana or none/);
  } finally {
    await user.stop();
  }
});

test("a duet's slot b snapshot selects slot b's Mattermost (:8167); the dashboard's default matches only :8067", async () => {
  const { RunSnapshots } = await import('../../src/bench/aws/snapshots.ts');
  // Slot b's Prometheus holds slot b's Mattermost only, under its instance name (metrics.sh.tftpl).
  grafana.datasources.add('prometheus-b');
  grafana.instances.set('prometheus-b', ['app0:8167', 'app1:8167']);
  const window = { from: new Date('2026-11-27T08:00:00Z'), to: new Date('2026-11-27T08:10:00Z') };
  const dashboard = await loadDashboardFile(DASHBOARD_FILE);
  const client = new GrafanaClient({ baseUrl, token: TOKEN });
  process.env.LOADGATE_SNAPSHOT_GRAFANA = '';
  try {
    // What the dashboard's own app_instance (.*:8067) finds there: nothing.
    await assert.rejects(
      publishSnapshot(client, { dashboard: { ...dashboard, uid: 'slotb-default' }, name: 'b', ...window, datasourceUid: 'prometheus-b' }),
      /no panel returned data/,
    );
    const slotB = new RunSnapshots({ grafanaUrl: baseUrl, token: async () => TOKEN, mode: 'local', datasourceUid: 'prometheus-b', metricsPort: 8167 });
    const shot = await slotB.take('v11.0.1-rc2 bounded #1 (slot b)', window.from, window.to);
    assert.deepEqual(shot.warnings, []);
    assert.ok(shot.link, 'a link to the snapshot');
    const key = decodeURIComponent(shot.link.url.split('/').pop()!);
    const panels = grafana.snapshots.get(key)?.dashboard.panels as { title: string; snapshotData: { fields: { labels?: Record<string, string> }[] }[] }[];
    const cpu = panels.find((p) => p.title === 'CPU utilization');
    assert.deepEqual(
      cpu?.snapshotData.map((f) => f.fields[1]?.labels?.instance),
      ['app0:8167', 'app1:8167'],
      "slot b's own instances",
    );
  } finally {
    delete process.env.LOADGATE_SNAPSHOT_GRAFANA;
  }
});
