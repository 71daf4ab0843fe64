/**
 * The PromQL behind a Mattermost run result on the AWS bench. The metrics node's
 * Prometheus (infra/aws/modules/bench/templates/metrics.sh.tftpl) scrapes:
 *  - job "mattermost": each app node's metrics listener (app0:8067, ...):
 *    mattermost_api_time{handler,method,status_code} and
 *    mattermost_db_store_time{method} histograms (seconds),
 *    mattermost_http_requests_total, mattermost_http_websockets_total,
 *    mattermost_process_cpu_seconds_total, and Go's go_goroutines and
 *    go_memstats_{heap,stack}_inuse_bytes (names from Mattermost's
 *    performance-monitoring documentation);
 *  - job "loadtest": the agents (loadgate's k6 exporter, or load-test-ng's agent API),
 *    with load-test-ng's client metric names;
 *  - job "node": node_exporter on every node (agent0:9100, ...).
 * Heap and stack are summed over the app nodes, as the seed reports' queries do
 * (`sum(go_memstats_heap_inuse_bytes{instance=~"app.*:8067"})`), and averaged over the
 * stable phase by compare.
 */
export type MattermostSeriesName =
  | 'apiAvgMs'
  | 'apiP50Ms'
  | 'apiP95Ms'
  | 'apiP99Ms'
  | 'storeAvgMs'
  | 'storeP99Ms'
  | 'cpuPercent'
  | 'threads'
  | 'heapInUseBytes'
  | 'stackInUseBytes'
  | 'connectedUsers'
  | 'rps'
  | 'errorPercent';

/** Scraped components, as named in "no data" messages. */
export const COMPONENTS = {
  mattermost: 'the app nodes\' Mattermost metrics (job "mattermost", app*:8067)',
  loadtest: 'the load agents\' metrics (job "loadtest")',
  agentNodes: 'node_exporter on the load agents (job "node", agent*:9100)',
} as const;

export const SERIES_SOURCES: Record<MattermostSeriesName, keyof typeof COMPONENTS> = {
  apiAvgMs: 'mattermost',
  apiP50Ms: 'mattermost',
  apiP95Ms: 'mattermost',
  apiP99Ms: 'mattermost',
  storeAvgMs: 'mattermost',
  storeP99Ms: 'mattermost',
  cpuPercent: 'mattermost',
  threads: 'mattermost',
  heapInUseBytes: 'mattermost',
  stackInUseBytes: 'mattermost',
  connectedUsers: 'mattermost',
  rps: 'mattermost',
  errorPercent: 'loadtest',
};

const MM = 'job="mattermost"';

/** The graph series over the whole run; `rateWindow` like "1m". */
export function mattermostSeriesQueries(rateWindow: string): Record<MattermostSeriesName, string> {
  const w = rateWindow;
  return {
    apiAvgMs: `1000 * sum(rate(mattermost_api_time_sum{${MM}}[${w}])) / sum(rate(mattermost_api_time_count{${MM}}[${w}]))`,
    apiP50Ms: `1000 * histogram_quantile(0.5, sum by (le) (rate(mattermost_api_time_bucket{${MM}}[${w}])))`,
    apiP95Ms: `1000 * histogram_quantile(0.95, sum by (le) (rate(mattermost_api_time_bucket{${MM}}[${w}])))`,
    apiP99Ms: `1000 * histogram_quantile(0.99, sum by (le) (rate(mattermost_api_time_bucket{${MM}}[${w}])))`,
    storeAvgMs: `1000 * sum(rate(mattermost_db_store_time_sum{${MM}}[${w}])) / sum(rate(mattermost_db_store_time_count{${MM}}[${w}]))`,
    storeP99Ms: `1000 * histogram_quantile(0.99, sum by (le) (rate(mattermost_db_store_time_bucket{${MM}}[${w}])))`,
    // Mattermost's own process, in % of one core, averaged over the app nodes.
    cpuPercent: `100 * avg(rate(mattermost_process_cpu_seconds_total{${MM}}[${w}]))`,
    threads: `sum(go_goroutines{${MM}})`,
    heapInUseBytes: `sum(go_memstats_heap_inuse_bytes{${MM}})`,
    stackInUseBytes: `sum(go_memstats_stack_inuse_bytes{${MM}})`,
    connectedUsers: `sum(mattermost_http_websockets_total{${MM}})`,
    rps: `sum(rate(mattermost_http_requests_total{${MM}}[${w}]))`,
    // The agents' view, with load-test-ng's client metric names: no error series is 0 %.
    errorPercent: `100 * (sum(rate(loadtest_http_errors_total{job="loadtest"}[${w}])) or vector(0)) / sum(rate(loadtest_http_request_time_count{job="loadtest"}[${w}]))`,
  };
}

export type MattermostWindowQuery =
  'apiCount' | 'apiSum' | 'apiP99' | 'storeCount' | 'storeSum' | 'storeP99' | 'requests' | 'errors' | 'timeouts' | 'agentCpuMax' | 'droppedIterations';

/**
 * Per-handler and per-store-method numbers, client totals and the agents' health over a
 * window of `sec` seconds ending at the evaluation time. Agent CPU is each agent's whole
 * node (agents run nothing else), the most loaded agent at its busiest moment, among the
 * agents this Prometheus's `loadtest` job scrapes: in a duet each slot's Prometheus scrapes
 * every node's node_exporter but only its own slot's agents' client metrics, so one side's
 * saturated agents do not invalidate the other side's run.
 */
export function mattermostWindowQueries(sec: number, rateWindow: string, stepSec: number): Record<MattermostWindowQuery, string> {
  const r = `${Math.max(Math.round(sec), 10)}s`;
  return {
    apiCount: `sum by (handler) (increase(mattermost_api_time_count{${MM}}[${r}]))`,
    apiSum: `sum by (handler) (increase(mattermost_api_time_sum{${MM}}[${r}]))`,
    apiP99: `histogram_quantile(0.99, sum by (handler, le) (increase(mattermost_api_time_bucket{${MM}}[${r}])))`,
    storeCount: `sum by (method) (increase(mattermost_db_store_time_count{${MM}}[${r}]))`,
    storeSum: `sum by (method) (increase(mattermost_db_store_time_sum{${MM}}[${r}]))`,
    storeP99: `histogram_quantile(0.99, sum by (method, le) (increase(mattermost_db_store_time_bucket{${MM}}[${r}])))`,
    requests: `sum(increase(loadtest_http_request_time_count{job="loadtest"}[${r}]))`,
    errors: `sum(increase(loadtest_http_errors_total{job="loadtest"}[${r}]))`,
    timeouts: `sum(increase(loadtest_http_timeouts_total{job="loadtest"}[${r}]))`,
    agentCpuMax: `max_over_time((max(100 * (1 - avg by (host) (${agentHost(`rate(node_cpu_seconds_total{job="node",instance=~"agent.*",mode="idle"}[${rateWindow}])`)})) and on (host) group by (host) (${agentHost('up{job="loadtest"}')})))[${r}:${stepSec}s])`,
    droppedIterations: `sum(increase(loadgate_engine_dropped_iterations_total{job="loadtest"}[${r}]))`,
  };
}

/** `expr` with a `host` label: its instance without the port (agent3:9100 and agent3:6566 are one node). */
function agentHost(expr: string): string {
  return `label_replace(${expr}, "host", "$1", "instance", "([^:]+):.*")`;
}
