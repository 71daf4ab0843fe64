import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { counterTotal, k6MetricsSchema, type K6Metrics } from '../../../src/engine/k6/api.ts';
import { parseBucketName, readClientMetrics, totalErrors } from '../../../src/engine/k6/client-metrics.ts';

function realSnapshot(): K6Metrics {
  const parsed = k6MetricsSchema.parse(JSON.parse(readFileSync(new URL('../../fixtures/k6/k6-v1.4.2-metrics.json', import.meta.url), 'utf8')));
  return new Map(parsed.data.map((m) => [m.id, { type: m.attributes.type, sample: m.attributes.sample }]));
}

test('bucket names encode their bound with p for the decimal point', () => {
  assert.equal(parseBucketName('loadgate_req_le_0p025'), 0.025);
  assert.equal(parseBucketName('loadgate_req_le_2'), 2);
  assert.equal(parseBucketName('loadgate_req_le_1p5'), 1.5);
  assert.equal(parseBucketName('loadgate_req_le_inf'), Infinity);
  assert.equal(parseBucketName('loadgate_req_seconds'), undefined);
  assert.equal(parseBucketName('loadgate_req_le_'), undefined);
});

test('reads the counters of a real k6 run into histogram, totals and actions', () => {
  const snapshot = realSnapshot();
  const client = readClientMetrics(snapshot);
  assert.equal(client.buckets.length, 19, '18 bounds and +Inf');
  assert.deepEqual(client.buckets.slice(0, 4), [
    { le: 0.005, count: 59 },
    { le: 0.01, count: 814 },
    { le: 0.025, count: 12 },
    { le: 0.05, count: 0 },
  ]);
  assert.equal(client.buckets.at(-1)!.le, Infinity);
  assert.equal(client.requests, 885, 'every request lands in exactly one bucket');
  assert.equal(client.requests, counterTotal(snapshot, 'http_reqs'), "the same count as k6's own http_reqs");
  assert.ok(Math.abs(client.sumSeconds - 5.31000233) < 1e-9);
  assert.equal(client.timeouts, 0);
  assert.equal(totalErrors(client), 0);
  assert.equal(client.actions.get('SwitchChannel'), 264);
  assert.equal(client.actions.get('Login'), 15);
  assert.equal(client.iterations, 537);
});

test('error counters become status codes, including transport errors and undeclared codes', () => {
  const counter = (count: number) => ({ type: 'counter' as const, sample: { count, rate: 0 } });
  const client = readClientMetrics(
    new Map([
      ['loadgate_req_err_503', counter(4)],
      ['loadgate_req_err_0', counter(2)],
      ['loadgate_req_err_5xx', counter(1)],
      ['loadgate_req_err_429', counter(3)],
      ['loadgate_req_timeouts', counter(5)],
    ]),
  );
  assert.deepEqual(Object.fromEntries(client.errors), { '503': 4, '0': 2, '5xx': 1, '429': 3 });
  assert.equal(totalErrors(client), 10);
  assert.equal(client.timeouts, 5);
  assert.equal(client.requests, 0);
});
