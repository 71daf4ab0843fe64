import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { judgeGenerator } from '../../src/bench/generator.ts';
import { awsGeneratorRule } from '../../src/bench/aws/run-attempt.ts';
import { collectMattermostRun } from '../../src/chat-servers/mattermost/collect.ts';
import { mattermostSeriesQueries } from '../../src/chat-servers/mattermost/queries.ts';
import { PrometheusClient, type FetchLike } from '../../src/metrics/prometheus.ts';

/**
 * Mattermost collection against answers recorded from a real Prometheus (see the
 * fixture's note): the queries asked must be the recorded ones, over the same window.
 */
interface Recorded {
  path: string;
  params: Record<string, string>;
  body: { data: { result: unknown[] } };
}
const fixture = JSON.parse(readFileSync(new URL('./fixtures/prometheus-mattermost-run.json', import.meta.url), 'utf8')) as { responses: Recorded[] };
// The run the answers were recorded for: 15 s bounded, measured over its last 12 s.
const WINDOW = { runStart: 1795443445.707, runEnd: 1795443460.9, stableStart: 1795443448.707, stableEnd: 1795443460.707 };
const OPTIONS = { rateWindowSec: 5, stepSec: 1 };
/**
 * The capacity curve's series (API p50/p95, client error %) came after the recording: they
 * answer "no series", as Prometheus does for a query over nothing recorded, and must be
 * reported without making the run unjudgeable.
 */
const NEWER = (({ apiP50Ms, apiP95Ms, errorPercent }) => [apiP50Ms, apiP95Ms, errorPercent])(mattermostSeriesQueries(`${OPTIONS.rateWindowSec}s`));

function replay(edit: (r: Recorded) => Recorded = (r) => r): { fetch: FetchLike; asked: string[] } {
  const asked: string[] = [];
  const fetch: FetchLike = async (url) => {
    const u = new URL(url);
    const query = u.searchParams.get('query') ?? '';
    asked.push(query);
    const hit = fixture.responses.find((r) => r.path === u.pathname && r.params.query === query);
    if (!hit && NEWER.includes(query)) return new Response(JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [] } }), { status: 200 });
    if (!hit) return new Response(JSON.stringify({ status: 'error', errorType: 'bad_data', error: `not recorded: ${query}` }), { status: 400 });
    for (const key of ['start', 'end', 'step', 'time']) assert.equal(u.searchParams.get(key) ?? undefined, hit.params[key], `${key} of ${query}`);
    return new Response(JSON.stringify(edit(structuredClone(hit)).body), { status: 200 });
  };
  return { fetch, asked };
}

test("a run is read back per handler and per store method, with series, client totals and the agents' CPU", async () => {
  const { fetch, asked } = replay();
  const c = await collectMattermostRun(new PrometheusClient('http://metrics:9090', fetch), WINDOW, OPTIONS);
  assert.deepEqual(c.problems, [
    'Prometheus has no data for apiP50Ms from the app nodes\' Mattermost metrics (job "mattermost", app*:8067) during the run',
    'Prometheus has no data for apiP95Ms from the app nodes\' Mattermost metrics (job "mattermost", app*:8067) during the run',
    'Prometheus has no data for errorPercent from the load agents\' metrics (job "loadtest") during the run',
  ]);
  assert.equal(c.missingEssential, false);
  assert.equal(asked.length, fixture.responses.length + NEWER.length, 'every recorded query was asked, and the newer ones, nothing else');
  const createPost = c.api.find((t) => t.name === 'createPost');
  assert.ok(createPost && createPost.count > 0 && createPost.avgMs > 0 && createPost.p99Ms >= createPost.avgMs, JSON.stringify(createPost));
  assert.ok(
    c.api.every((t) => t.count >= 1),
    'handlers with no request in the window are left out',
  );
  assert.deepEqual(
    [...c.api].sort((a, b) => b.count - a.count || a.name.localeCompare(b.name)),
    c.api,
    'busiest first',
  );
  assert.ok(c.store.some((t) => t.name === 'PostStore.Save' && t.count > 0));
  assert.ok(c.store.some((t) => t.name === 'ChannelStore.UpdateLastViewedAt'));
  for (const key of [
    'apiAvgMs',
    'apiP99Ms',
    'storeAvgMs',
    'storeP99Ms',
    'cpuPercent',
    'threads',
    'heapInUseBytes',
    'stackInUseBytes',
    'connectedUsers',
    'rps',
  ] as const) {
    const s = c.series[key];
    assert.ok(s && s.t.length > 5, key);
    assert.ok(s.t[0]! >= 0 && s.t.at(-1)! <= WINDOW.runEnd - WINDOW.runStart, `${key}: seconds since the run started`);
  }
  assert.equal(c.series.heapInUseBytes?.unit, 'bytes');
  assert.equal(c.series.connectedUsers?.unit, 'users');
  assert.equal(Math.max(...(c.series.connectedUsers?.v ?? [])), 6, 'the 6 users of the test held their websockets');
  assert.ok(c.totals.requests > 50 && c.totals.errors === 0 && c.totals.timeouts === 0, JSON.stringify(c.totals));
  assert.equal(typeof c.agentCpuPercentMax, 'number');
  assert.equal(c.droppedIterations, 0);
});

test('missing Mattermost or agent data makes the run unjudgeable, naming the component', async () => {
  const empty =
    (match: RegExp) =>
    (r: Recorded): Recorded =>
      match.test(r.params.query ?? '') ? { ...r, body: { ...r.body, data: { ...r.body.data, result: [] } } } : r;
  const noMattermost = replay(empty(/mattermost|go_/));
  const c = await collectMattermostRun(new PrometheusClient('http://metrics:9090', noMattermost.fetch), WINDOW, OPTIONS);
  assert.equal(c.missingEssential, true);
  assert.ok(
    c.problems.includes('Prometheus has no data for heapInUseBytes from the app nodes\' Mattermost metrics (job "mattermost", app*:8067) during the run'),
    c.problems.join('\n'),
  );
  assert.ok(c.problems.some((p) => p.startsWith("Prometheus has no per-handler API timings (mattermost_api_time) from the app nodes' Mattermost metrics")));

  const noClients = replay(empty(/loadtest_http_request_time_count/));
  const d = await collectMattermostRun(new PrometheusClient('http://metrics:9090', noClients.fetch), WINDOW, OPTIONS);
  assert.equal(d.missingEssential, true);
  assert.ok(d.problems.includes('Prometheus has no client request counts from the load agents\' metrics (job "loadtest") in the measurement window'));

  const noAgentCpu = replay(empty(/node_cpu_seconds_total/));
  const e = await collectMattermostRun(new PrometheusClient('http://metrics:9090', noAgentCpu.fetch), WINDOW, OPTIONS);
  assert.equal(e.agentCpuPercentMax, undefined);
  assert.ok(e.problems.some((p) => p.includes('node_exporter on the load agents (job "node", agent*:9100)')));
  assert.match(judgeGenerator({ cpuPercentMax: undefined, droppedIterations: 0, scriptErrors: 0 }, awsGeneratorRule(85)).problem ?? '', /CPU was not measured/);

  const down: FetchLike = async () => {
    throw new Error('connect ECONNREFUSED 203.0.113.10:9090');
  };
  const f = await collectMattermostRun(new PrometheusClient('http://203.0.113.10:9090', down), WINDOW, OPTIONS);
  assert.equal(f.missingEssential, true);
  assert.ok(f.problems.some((p) => p.includes('cannot reach Prometheus at http://203.0.113.10:9090')));
});

test('a saturated load agent or dropped iterations make a run invalid', () => {
  assert.deepEqual(judgeGenerator({ cpuPercentMax: 60, droppedIterations: 0, scriptErrors: 0 }, awsGeneratorRule(85)), { saturated: false });
  const hot = judgeGenerator({ cpuPercentMax: 93.4, droppedIterations: 0, scriptErrors: 0 }, awsGeneratorRule(85));
  assert.equal(hot.saturated, true);
  assert.match(hot.problem ?? '', /a load agent used up to 93% CPU \(limit bench\.aws\.maxEngineCpuPercent = 85%\)/);
  const dropping = judgeGenerator({ cpuPercentMax: 40, droppedIterations: 12, scriptErrors: 0 }, awsGeneratorRule(85));
  assert.equal(dropping.saturated, true);
  assert.match(dropping.problem ?? '', /dropped 12 iterations/);
  assert.match(judgeGenerator({ cpuPercentMax: 40, droppedIterations: 0, scriptErrors: 3 }, awsGeneratorRule(85)).problem ?? '', /threw 3 errors/);
});
