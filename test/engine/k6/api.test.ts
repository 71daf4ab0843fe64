import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { K6Api, K6ApiError, counterTotal, type FetchLike } from '../../../src/engine/k6/api.ts';

const fixture = (name: string): string => readFileSync(new URL(`../../fixtures/k6/${name}`, import.meta.url), 'utf8');

/** A fetch that answers from a table and records what it was asked. */
function fakeFetch(answers: Record<string, { status: number; body: string }>): FetchLike & { calls: Array<{ url: string; method: string; body?: string }> } {
  const calls: Array<{ url: string; method: string; body?: string }> = [];
  const fn = (async (url, init) => {
    const method = init?.method ?? 'GET';
    calls.push({ url, method, ...(init?.body ? { body: init.body } : {}) });
    const answer = answers[`${method} ${new URL(url).pathname}`];
    if (!answer) throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
    return { status: answer.status, text: async () => answer.body };
  }) as FetchLike & { calls: typeof calls };
  fn.calls = calls;
  return fn;
}

test('reads the status document k6 v1.4.2 serves', async () => {
  const fetch = fakeFetch({ 'GET /v1/status': { status: 200, body: fixture('k6-v1.4.2-status.json') } });
  const api = new K6Api({ port: 16565, fetch });
  const status = await api.status();
  assert.deepEqual(status, { phase: 'running', running: true, stopped: false, paused: false, vus: 3, vusMax: 20 });
  assert.equal(fetch.calls[0]!.url, 'http://127.0.0.1:16565/v1/status');
});

test('scales VUs with a JSON:API PATCH of /v1/status', async () => {
  const patched = fixture('k6-v1.4.2-status.json').replace('"vus": 3', '"vus": 12');
  const fetch = fakeFetch({ 'PATCH /v1/status': { status: 200, body: patched } });
  const status = await new K6Api({ port: 16565, fetch }).setVUs(12);
  assert.equal(status.vus, 12);
  assert.deepEqual(JSON.parse(fetch.calls[0]!.body!), { data: { type: 'status', id: 'default', attributes: { vus: 12 } } });
});

test("turns k6's error document into a message with its title and detail", async () => {
  const fetch = fakeFetch({ 'PATCH /v1/status': { status: 400, body: fixture('k6-v1.4.2-patch-error.json') } });
  await assert.rejects(
    new K6Api({ port: 16565, fetch }).setVUs(50),
    (error: Error) =>
      error instanceof K6ApiError &&
      /HTTP 400: Config update error: .*active VUs \(50\) must be less than or equal to the number of maxVUs \(20\)/.test(error.message),
  );
});

test('parses the metrics snapshot of a real run', async () => {
  const fetch = fakeFetch({ 'GET /v1/metrics': { status: 200, body: fixture('k6-v1.4.2-metrics.json') } });
  const metrics = await new K6Api({ port: 16565, fetch }).metrics();
  assert.equal(metrics.get('vus')?.type, 'gauge');
  assert.equal(metrics.get('http_req_duration')?.type, 'trend');
  assert.equal(counterTotal(metrics, 'loadgate_action_Login'), 15);
  assert.equal(counterTotal(metrics, 'no_such_metric'), 0);
  assert.equal(counterTotal(metrics, 'vus'), 0, 'a gauge is not a counter');
});

test('rejects answers that are not what k6 v1 sends, and says where', async () => {
  const fetch = fakeFetch({
    'GET /v1/status': { status: 200, body: '{"data":{"type":"status","attributes":{"status":"running"}}}' },
    'GET /v1/metrics': { status: 200, body: '<html>proxy</html>' },
  });
  const api = new K6Api({ port: 16565, fetch });
  await assert.rejects(api.status(), /unexpected response \(data\.attributes\.status: .*\); is this k6 v1\?/);
  await assert.rejects(api.metrics(), /answered HTTP 200 with non-JSON: <html>proxy/);
});

test('names the URL and the cause when k6 does not answer', async () => {
  const api = new K6Api({ port: 16599, fetch: fakeFetch({}) });
  await assert.rejects(api.status(), /GET http:\/\/127\.0\.0\.1:16599\/v1\/status failed: ECONNREFUSED/);
  assert.throws(() => new K6Api({ port: 70000 }), RangeError);
});
