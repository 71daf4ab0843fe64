import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NoDataError, PrometheusClient, PrometheusError } from '../../src/metrics/prometheus.ts';

function fakeFetch(body: unknown, status = 200) {
  const urls: string[] = [];
  const fetchImpl = async (url: string) => {
    urls.push(url);
    return new Response(typeof body === 'string' ? body : JSON.stringify(body), { status });
  };
  return { fetchImpl, urls };
}

const vector = (...values: string[]) => ({
  status: 'success',
  data: { resultType: 'vector', result: values.map((v, i) => ({ metric: { i: String(i) }, value: [1700000000, v] })) },
});

test('instant query: values parsed, NaN is null, one series required for a number', async () => {
  const ok = fakeFetch(vector('0.042'));
  const client = new PrometheusClient('http://127.0.0.1:9090', ok.fetchImpl);
  assert.equal(await client.queryNumber('sum(rate(x[1m]))'), 0.042);
  const url = new URL(ok.urls[0]!);
  assert.equal(url.pathname, '/api/v1/query');
  assert.equal(url.searchParams.get('query'), 'sum(rate(x[1m]))');
  assert.equal(await new PrometheusClient('http://p', fakeFetch(vector('NaN')).fetchImpl).queryNumber('a/b'), null);
  await assert.rejects(new PrometheusClient('http://p', fakeFetch(vector('1', '2')).fetchImpl).queryNumber('x'), /expected a single number, got 2 series/);
  const scalar = fakeFetch({ status: 'success', data: { resultType: 'scalar', result: [1, '3'] } });
  assert.equal(await new PrometheusClient('http://p', scalar.fetchImpl).queryNumber('vector(3)'), 3);
});

test('"Prometheus has no data" is its own error, naming the query', async () => {
  const client = new PrometheusClient('http://p', fakeFetch(vector()).fetchImpl);
  await assert.rejects(client.queryNumber('up{job="k6"}'), (e: unknown) => {
    assert.ok(e instanceof NoDataError);
    assert.match((e as Error).message, /Prometheus has no data/);
    assert.match((e as Error).message, /query: up\{job="k6"\}/);
    return true;
  });
});

test('Prometheus errors carry its message and the query; malformed answers are rejected', async () => {
  const bad = fakeFetch({ status: 'error', errorType: 'bad_data', error: '1:5: parse error: unexpected end of input' }, 400);
  await assert.rejects(new PrometheusClient('http://p', bad.fetchImpl).query('sum('), (e: unknown) => {
    assert.ok(e instanceof PrometheusError);
    assert.match((e as Error).message, /bad_data: 1:5: parse error/);
    assert.match((e as Error).message, /query: sum\(/);
    return true;
  });
  await assert.rejects(new PrometheusClient('http://p', fakeFetch('<html>proxy</html>', 502).fetchImpl).query('up'), /HTTP 502, not JSON/);
  await assert.rejects(
    new PrometheusClient(
      'http://p',
      fakeFetch({ status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: ['x', 1] }] } }).fetchImpl,
    ).query('up'),
    /unexpected response/,
  );
  const down = new PrometheusClient('http://p', async () => {
    throw new TypeError('fetch failed');
  });
  await assert.rejects(down.query('up'), /cannot reach Prometheus at http:\/\/p: fetch failed/);
});

test('range query: start, end and step sent; matrix parsed into t/v arrays', async () => {
  const body = {
    status: 'success',
    data: {
      resultType: 'matrix',
      result: [
        {
          metric: { job: 'node' },
          values: [
            [100, '1'],
            [105, '2.5'],
            [110, 'NaN'],
          ],
        },
      ],
    },
  };
  const f = fakeFetch(body);
  const [series] = await new PrometheusClient('http://p', f.fetchImpl).queryRange('rate(x[30s])', 100, 110, 5);
  assert.deepEqual(series!.t, [100, 105, 110]);
  assert.deepEqual(series!.v.slice(0, 2), [1, 2.5]);
  assert.ok(Number.isNaN(series!.v[2]));
  const url = new URL(f.urls[0]!);
  assert.equal(url.pathname, '/api/v1/query_range');
  assert.deepEqual([url.searchParams.get('start'), url.searchParams.get('end'), url.searchParams.get('step')], ['100', '110', '5']);
  await assert.rejects(new PrometheusClient('http://p', fakeFetch(vector('1')).fetchImpl).queryRange('x', 0, 1, 1), /expected a range vector/);
});
