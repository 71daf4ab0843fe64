/**
 * Every query loadgate itself sends to Prometheus parses with Prometheus's grammar, so
 * the grammar that checks a config's queries and the adapters' own queries agree; and
 * each kind of typo gets its column and a fix.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { promqlProblem } from '../../src/config/promql.ts';
import { MATTERMOST_HEALTH_QUERIES } from '../../src/chat-servers/mattermost/defaults.ts';
import { mattermostSeriesQueries, mattermostWindowQueries } from '../../src/chat-servers/mattermost/queries.ts';
import { loadGateConfig } from '../../src/config/load.ts';
import { seriesQueries, storeIntervalMeans, windowQueries } from '../../src/chat-servers/synapse/queries.ts';

test("the adapters' built-in queries and the shipped local example's are valid PromQL", async () => {
  const example = await loadGateConfig(fileURLToPath(new URL('../../examples/local-synapse.yml', import.meta.url)));
  const aws: [string, string][] = [
    ...MATTERMOST_HEALTH_QUERIES.map((q): [string, string] => [`mattermost health "${q.name}"`, q.query]),
    ...Object.entries(mattermostSeriesQueries('1m')).map(([k, q]): [string, string] => [`mattermost series ${k}`, q]),
    ...Object.entries(mattermostWindowQueries(300, '1m', 5)).map(([k, q]): [string, string] => [`mattermost window ${k}`, q]),
  ];
  const local: [string, string][] = [
    ...example.tests.flatMap((t) => (t.type === 'unbounded' ? t.health : [])).map((q): [string, string] => [`example health "${q.name}"`, q.query]),
    ...Object.entries(seriesQueries('0-1', 0.88)).map(([k, q]): [string, string] => [`synapse series ${k}`, q]),
    ...Object.entries(windowQueries(300, 1)).map(([k, q]): [string, string] => [`synapse window ${k}`, q]),
    ['synapse store interval means', storeIntervalMeans],
  ];
  assert.ok(aws.length > 30 && local.length > 25);
  for (const [what, query] of aws) assert.equal(promqlProblem(query, { localBench: false }), undefined, `${what}: ${query}`);
  for (const [what, query] of local) assert.equal(promqlProblem(query, { localBench: true }), undefined, `${what}: ${query}`);
});

test('a typo gets its column and the fix', () => {
  const cases: [string, number, RegExp][] = [
    [
      'sum(rate(loadtest_http_request_time_sum[1m])/sum(rate(loadtest_http_request_time_count[1m]))',
      4,
      /the "\(" opened at column 4 is never closed: add "\)"/,
    ],
    ['sum(rate(x[1m])))', 17, /"\)" closes nothing/],
    ['sum(rate(x[1m)))', 14, /"\)" cannot close the "\[" opened at column 11/],
    ['up{instance=~"app.*}', 21, /a string opened with " is never closed/],
    ['ratee(x[1m])', 1, /"ratee" is not a PromQL function/],
    ['100 * / sum(x)', 7, /unexpected "\/"/],
    ['sum(x) by le', 11, /unexpected "le"/],
    ['sum(x) >', 9, /the query ends early/],
    ['x / $CPUS', 5, /"\$CPUS" is not PromQL; the placeholders are \$TARGET_CPU_COUNT and \$TARGET_CPUS/],
    ['   ', 1, /the query is empty/],
  ];
  for (const [query, column, message] of cases) {
    const problem = promqlProblem(query, { localBench: false });
    assert.ok(problem, query);
    assert.equal(problem.column, column, `${query}: ${problem.message}`);
    assert.match(problem.message, message, query);
  }
});

test("the local bench's placeholders parse where the bench fills them in, and are named elsewhere", () => {
  const count = '100 * sum(rate(loadgate_target_group_cpu_seconds_total[1m])) / $TARGET_CPU_COUNT';
  assert.equal(promqlProblem(count, { localBench: true }), undefined);
  assert.deepEqual(promqlProblem(count, { localBench: false }), {
    column: count.indexOf('$') + 1,
    message: '$TARGET_CPU_COUNT is a placeholder only the local bench fills in; on this bench write the value itself',
  });
  // The regex of CPU numbers ("0|1") is only PromQL inside a matcher's quotes.
  assert.match(
    promqlProblem('avg(node_cpu_seconds_total{cpu=~$TARGET_CPUS})', { localBench: true })?.message ?? '',
    /\$TARGET_CPUS becomes a regular expression .* write it inside a label matcher's quotes/,
  );
});

test("a range vector where Prometheus's type check wants an instant vector, or the reverse, is refused", () => {
  const cases: [string, number, RegExp][] = [
    [
      'sum(rate(loadtest_http_request_time_sum))',
      10,
      /^rate\(\) takes a range vector, not "loadtest_http_request_time_sum": give the selector a range such as \[1m\]/,
    ],
    ['quantile_over_time(0.99, x)', 26, /^quantile_over_time\(\) takes a range vector, not "x"/],
    ['sum(x[1m])', 5, /^"x\[1m\]" is a range vector, which only a function over time takes: pass it to one, e.g. rate\(x\[1m\]\)/],
    ['histogram_quantile(0.99, x_bucket[1m])', 26, /^"x_bucket\[1m\]" is a range vector, which only a function over time takes/],
    ['x[5m]', 1, /^"x\[5m\]" is a range vector, which the query would return instead of a number/],
  ];
  for (const [query, column, message] of cases) {
    const problem = promqlProblem(query, { localBench: false });
    assert.ok(problem, query);
    assert.equal(problem.column, column, `${query}: ${problem.message}`);
    assert.match(problem.message, message, query);
  }
  for (const query of [
    'rate((x[1m]))',
    'rate(x[1m] offset 5m)',
    'rate(x[1m] @ 100)',
    'quantile_over_time(0.9, x[1m])',
    'max_over_time(rate(x[1m])[5m:30s])',
    'label_replace(rate(x[1m]), "a", "$1", "b", "(.*)")',
  ]) {
    assert.equal(promqlProblem(query, { localBench: false }), undefined, query);
  }
});
