import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { collectRun } from '../../../src/chat-servers/synapse/collect.ts';
import { percentile, toSeries } from '../../../src/metrics/collected.ts';
import { PrometheusClient } from '../../../src/metrics/prometheus.ts';
import { seriesSchema } from '../../../src/results/schema.ts';

/**
 * Prometheus responses recorded from a real local-bench run (Synapse 1.162.0, 20 users,
 * bounded, 30 s ramp-up excluded), replayed through a fake fetch; a query that is not in
 * the recording answers "no series", as Prometheus does for a metric nobody exports.
 */
const fixture = JSON.parse(readFileSync(new URL('./fixtures/bounded-run.json', import.meta.url), 'utf8')) as {
  window: { runStart: number; runEnd: number; stableStart: number; stableEnd: number };
  targetCpus: string;
  responses: Record<string, string>;
};

/** The local bench's timing (a 30 s rate window, 5 s scrapes) with k6 on core 1 and the whole target. */
const localContext = (target: string) => ({ rateWindowSec: 30, stepSec: 5, cpus: { target, engine: '1', targetShare: 1 } });

function replay(drop: (query: string) => boolean = () => false) {
  const asked: string[] = [];
  const fetchImpl = async (url: string) => {
    const u = new URL(url);
    const query = u.searchParams.get('query') ?? '';
    asked.push(query);
    const recorded = fixture.responses[`${u.pathname}?${u.searchParams.toString()}`];
    const empty = JSON.stringify({ status: 'success', data: { resultType: u.pathname.endsWith('query_range') ? 'matrix' : 'vector', result: [] } });
    return new Response(recorded && !drop(query) ? recorded : empty);
  };
  return { client: new PrometheusClient('http://127.0.0.1:9090', fetchImpl), asked };
}

test('per-handler API and per-store-method timings over the measurement window', async () => {
  const { client } = replay();
  const c = await collectRun(client, fixture.window, localContext(fixture.targetCpus));
  assert.deepEqual(c.api[0], { name: 'GET RoomMessageListRestServlet', count: 326, avgMs: 41.546, p99Ms: 240.471 });
  assert.ok(c.api.length >= 6);
  for (let i = 1; i < c.api.length; i++) assert.ok(c.api[i - 1]!.count >= c.api[i]!.count, 'sorted by count');
  for (const t of [...c.api, ...c.store]) assert.ok(t.count >= 1 && t.avgMs >= 0 && t.p99Ms >= 0, JSON.stringify(t));
  assert.deepEqual(c.store[0], { name: 'get_local_current_membership_for_user_in_room', count: 705, avgMs: 0.889, p99Ms: 1.666 });
  assert.equal(c.totals.requests, 718);
  // The recording predates the capacity curve's series (API p50/p95, client error %): they
  // answer "no series", which is reported per component and leaves the run judgeable.
  assert.deepEqual(c.problems, [
    'Prometheus has no data for apiP50Ms from the synapse metrics listener (job "synapse") during the run',
    'Prometheus has no data for apiP95Ms from the synapse metrics listener (job "synapse") during the run',
    'Prometheus has no data for errorPercent from the k6 exporter (job "k6") during the run',
  ]);
  assert.equal(c.missingEssential, false);
  assert.equal(c.totals.errors, 0);
  assert.equal(c.totals.timeouts, 0);
});

test('graph series are relative to the run start, finite and valid run-result series', async () => {
  const { client } = replay();
  const c = await collectRun(client, fixture.window, localContext(fixture.targetCpus));
  for (const key of ['apiAvgMs', 'apiP99Ms', 'storeAvgMs', 'storeP99Ms', 'cpuPercent', 'threads', 'heapInUseBytes', 'connectedUsers', 'rps'] as const) {
    const s = c.series[key];
    assert.ok(s, `${key} present`);
    seriesSchema.parse(s);
    assert.ok(s.t[0]! >= 0 && s.t[s.t.length - 1]! <= fixture.window.runEnd - fixture.window.runStart + 1);
  }
  assert.equal(c.series.connectedUsers!.unit, 'users');
  assert.equal(Math.max(...c.series.connectedUsers!.v), 20);
  assert.ok(
    c.series.heapInUseBytes!.v.every((v) => v > 50e6),
    'Synapse resident memory',
  );
  assert.equal(c.series.cpuPercent!.unit, 'percent');
  assert.ok(c.series.cpuPercent!.v.every((v) => v >= 0 && v <= 100));
});

test('missing data is reported per component and marks the run unjudgeable', async () => {
  const { client } = replay((q) => q.includes('loadgate_target_'));
  const c = await collectRun(client, fixture.window, localContext(fixture.targetCpus));
  assert.equal(c.series.cpuPercent, undefined);
  assert.ok(
    c.problems.some((p) => /no data for cpuPercent from the process exporter \(job "process"\)/.test(p)),
    c.problems.join('\n'),
  );
  assert.equal(c.missingEssential, true);

  const noK6 = await collectRun(
    replay((q) => q.includes('loadtest_') || q.includes('loadgate_engine')).client,
    fixture.window,
    localContext(fixture.targetCpus),
  );
  assert.ok(noK6.problems.some((p) => /no client request counts from the k6 exporter \(job "k6"\)/.test(p)));
  assert.ok(noK6.problems.some((p) => /no data for connectedUsers from the k6 exporter/.test(p)));

  const noSynapse = await collectRun(replay((q) => q.includes('synapse_')).client, fixture.window, localContext(fixture.targetCpus));
  assert.deepEqual(noSynapse.api, []);
  assert.ok(noSynapse.problems.some((p) => /no per-handler API timings from the synapse metrics listener/.test(p)));
});

test('toSeries drops NaN and points before the start; percentile is nearest-rank', () => {
  const s = toSeries({ labels: {}, t: [99, 100, 105, 110, 115], v: [1, 2, Number.NaN, 4, Number.POSITIVE_INFINITY] }, 100, 'ms');
  assert.deepEqual(s, { unit: 'ms', t: [0, 10], v: [2, 4] });
  assert.equal(toSeries({ labels: {}, t: [1], v: [Number.NaN] }, 0, 'ms'), undefined);
  assert.equal(percentile([5, 1, 3, 2, 4], 99), 5);
  assert.equal(percentile([5, 1, 3, 2, 4], 50), 3);
  assert.equal(percentile([], 99), undefined);
});
