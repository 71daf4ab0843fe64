import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { FetchLike } from '../../../src/engine/k6/api.ts';
import type { ClientMetrics } from '../../../src/engine/k6/client-metrics.ts';
import { formatPrometheus, startExporter } from '../../../src/engine/k6/exporter.ts';
import { histogram, parseExposition, quantile, valueOf } from './prom-text.ts';

const fixture = (name: string): string => readFileSync(new URL(`../../fixtures/k6/${name}`, import.meta.url), 'utf8');

function client(overrides: Partial<ClientMetrics> = {}): ClientMetrics {
  return {
    buckets: [],
    sumSeconds: 0,
    requests: 0,
    timeouts: 0,
    errors: new Map(),
    actions: new Map(),
    droppedIterations: 0,
    iterations: 0,
    scriptErrors: 0,
    ...overrides,
  };
}

test('turns per-bucket counts into a cumulative histogram with load-test-ng names', () => {
  const text = formatPrometheus(
    client({
      buckets: [
        { le: 0.05, count: 10 },
        { le: 0.1, count: 80 },
        { le: 2, count: 9 },
        { le: Infinity, count: 1 },
      ],
      sumSeconds: 12.5,
      requests: 100,
      timeouts: 1,
      errors: new Map([['503', 2]]),
    }),
    { vus: 7, vusMax: 40 },
    3.25,
  );
  const exp = parseExposition(text);
  const h = histogram(exp, 'loadtest_http_request_time');
  assert.deepEqual(h.buckets, [
    [0.05, 10],
    [0.1, 90],
    [2, 99],
    [Infinity, 100],
  ]);
  assert.equal(h.sum, 12.5);
  assert.equal(h.count, 100);
  assert.ok(quantile(0.5, h.buckets) > 0.05 && quantile(0.5, h.buckets) <= 0.1);
  assert.equal(valueOf(exp, 'loadtest_http_errors_total', { status_code: '503' }), 2);
  assert.equal(valueOf(exp, 'loadtest_http_errors_total', { status_code: '500' }), 0, 'always there for 5.. ratios');
  assert.equal(valueOf(exp, 'loadtest_http_timeouts_total'), 1);
  assert.equal(valueOf(exp, 'loadgate_engine_active_users'), 7);
  assert.equal(valueOf(exp, 'loadgate_engine_max_users'), 40);
  assert.equal(valueOf(exp, 'loadgate_engine_cpu_seconds_total'), 3.25);
  assert.equal(exp.types.get('loadtest_http_errors_total'), 'counter');
  assert.equal(exp.types.get('loadgate_engine_active_users'), 'gauge');
});

test('keeps every series it has shown, so rate() never sees one vanish', () => {
  const memory = { bounds: new Set<number>(), codes: new Set(['500']), actions: new Set<string>() };
  formatPrometheus(
    client({
      buckets: [
        { le: 0.1, count: 1 },
        { le: Infinity, count: 0 },
      ],
      errors: new Map([['429', 1]]),
      actions: new Map([['CreatePost', 1]]),
    }),
    { vus: 1, vusMax: 1 },
    undefined,
    memory,
  );
  // A new k6 process (counter reset) that has not reported anything yet:
  const exp = parseExposition(formatPrometheus(client(), { vus: 0, vusMax: 1 }, undefined, memory));
  assert.deepEqual(histogram(exp, 'loadtest_http_request_time').buckets, [
    [0.1, 0],
    [Infinity, 0],
  ]);
  assert.equal(valueOf(exp, 'loadtest_http_errors_total', { status_code: '429' }), 0);
  assert.equal(valueOf(exp, 'loadgate_engine_actions_total', { action: 'CreatePost' }), 0);
  assert.equal(valueOf(exp, 'loadgate_engine_cpu_seconds_total'), undefined, 'no pid, no CPU series');
});

test('serves /metrics on 127.0.0.1 from the k6 REST API, and 503 when k6 is gone', async () => {
  let k6Up = true;
  const fetch: FetchLike = async (url) => {
    if (!k6Up) throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
    const path = new URL(url).pathname;
    const body = path === '/v1/status' ? fixture('k6-v1.4.2-status.json') : fixture('k6-v1.4.2-metrics.json');
    return { status: 200, text: async () => body };
  };
  const exporter = await startExporter({ k6ApiPort: 16565, k6Pid: process.pid, fetch });
  try {
    assert.match(exporter.url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const res = await globalThis.fetch(exporter.url);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const exp = parseExposition(await res.text());
    const h = histogram(exp, 'loadtest_http_request_time');
    assert.equal(h.count, 885);
    assert.equal(h.buckets.length, 19);
    assert.equal(valueOf(exp, 'loadgate_engine_active_users'), 3);
    assert.equal(valueOf(exp, 'loadgate_engine_actions_total', { action: 'Login' }), 15);
    assert.ok((valueOf(exp, 'loadgate_engine_cpu_seconds_total') ?? 0) > 0, 'CPU of the given pid');

    assert.equal((await globalThis.fetch(exporter.url.replace('/metrics', '/'))).status, 404);
    k6Up = false;
    const down = await globalThis.fetch(exporter.url);
    assert.equal(down.status, 503);
    assert.match(await down.text(), /k6 is not answering: .*ECONNREFUSED/);
  } finally {
    await exporter.close();
  }
  await assert.rejects(globalThis.fetch(exporter.url), 'closed');
});
