import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { seriesQueries } from '../../../src/chat-servers/synapse/queries.ts';
import { availableCpus, cpuListRegex, expandQuery } from '../../../src/metrics/target-cpus.ts';
import { longestRangeSec } from '../../../src/metrics/promql.ts';
import { createHealthSource } from '../../../src/metrics/health.ts';
import { PrometheusClient } from '../../../src/metrics/prometheus.ts';
import { loadGateConfig } from '../../../src/config/load.ts';

test('CPU lists become label regexes and $TARGET_CPUS is replaced', async () => {
  assert.equal(cpuListRegex('0'), '0');
  assert.equal(cpuListRegex('0-2,5'), '0|1|2|5');
  assert.match(expandQuery('100 - 100 * avg(irate(node_cpu_seconds_total{mode="idle",cpu=~"$TARGET_CPUS"}[1m]))', '0-1'), /cpu=~"0\|1"/);
  const example = await loadGateConfig(fileURLToPath(new URL('../../../examples/local-synapse.yml', import.meta.url)));
  const cpu = example.tests.flatMap((t) => (t.type === 'unbounded' ? t.health : [])).find((h) => h.name.startsWith('CPU'))!.query;
  assert.match(expandQuery(cpu, '0-1'), /\/ 2$/);
  assert.match(seriesQueries('0-1').cpuPercent, /loadgate_target_group_cpu_seconds_total.*\/ 2$/);
  assert.equal(expandQuery('100 * x / $TARGET_CPU_COUNT', '0,2-3'), '100 * x / 3');
});

test('a CPU quota shrinks the CPU that utilisation is measured against, not the cores matched', () => {
  // --candidate-cpu-quota 0.88 on one core: the target may use 0.88 CPU, so the same CPU
  // seconds read 1/0.88 = 13.6 % higher and a CPU-bound ceiling comes 12 % sooner.
  assert.equal(availableCpus('0', 0.88), 0.88);
  assert.equal(availableCpus('0-1', 0.88), 1.76);
  assert.equal(availableCpus('0-2', 0.1), 0.3); // not 0.30000000000000004 in the query text
  assert.equal(expandQuery('100 * x{cpu=~"$TARGET_CPUS"} / $TARGET_CPU_COUNT', '0-1', 0.5), '100 * x{cpu=~"0|1"} / 1');
  assert.match(seriesQueries('0', 0.88).cpuPercent, /\/ 0\.88$/);
  assert.equal(expandQuery('$TARGET_CPU_COUNT', '0'), '1');
  assert.throws(() => availableCpus('0', 0), /CPU share must be in \(0, 1\], got 0/);
  assert.throws(() => availableCpus('0', 1.2), /got 1.2/);
});

test('the longest range selector decides how long the bench settles between runs', () => {
  assert.equal(longestRangeSec(['sum(rate(a[1m]))/sum(rate(b[30s]))']), 60);
  assert.equal(longestRangeSec(['max_over_time(x[5m:10s])', 'y']), 300);
  assert.equal(longestRangeSec(['up']), 0);
  assert.equal(longestRangeSec(['irate(y[5m])', 'max_over_time(x[1h:30s])']), 3600);
});

test('the health source expands the query and returns null for NaN', async () => {
  const seen: string[] = [];
  const client = new PrometheusClient('http://p', async (url) => {
    seen.push(new URL(url).searchParams.get('query')!);
    return new Response(JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [1, 'NaN'] }] } }));
  });
  const health = createHealthSource(client, '0');
  assert.equal(await health.query('avg(x{cpu=~"$TARGET_CPUS"})'), null);
  assert.deepEqual(seen, ['avg(x{cpu=~"0"})']);
  await createHealthSource(client, '0', 0.88).query('100 * y / $TARGET_CPU_COUNT');
  assert.equal(seen[1], '100 * y / 0.88');
});
