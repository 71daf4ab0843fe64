import { availableCpus } from '../../metrics/target-cpus.ts';

/**
 * The PromQL behind a Synapse run result. Synapse (prometheus_client) exports:
 *  - synapse_http_server_response_time_seconds{method,servlet,tag,code}: a histogram per
 *    servlet → API avg/p99 and per-handler timings ("GET RoomMessageListRestServlet");
 *  - synapse_storage_transaction_time_{count,sum}_total{desc}: counters per store
 *    transaction → store avg and per-method count/avg (no per-transaction histogram);
 *  - synapse_storage_query_time{verb}: a histogram of single SQL statements → store p99;
 *  - synapse_http_server_responses_total{method,code} → RPS and 5xx ratio.
 * CPU of the system under test, threads and resident memory come from loadgate's process
 * exporter (job "process"), connected users and client totals from the
 * k6 exporter (job "k6").
 */
/** The rate window of the collected series. */
export const RATE_WINDOW = '30s';

export function seriesQueries(
  targetCpus: string,
  share = 1,
  rateWindow = RATE_WINDOW,
): Record<
  | 'apiAvgMs'
  | 'apiP50Ms'
  | 'apiP95Ms'
  | 'apiP99Ms'
  | 'storeAvgMs'
  | 'storeP99Ms'
  | 'cpuPercent'
  | 'threads'
  | 'heapInUseBytes'
  | 'connectedUsers'
  | 'rps'
  | 'errorPercent',
  string
> {
  const w = rateWindow;
  return {
    apiAvgMs: `1000 * sum(rate(synapse_http_server_response_time_seconds_sum[${w}])) / sum(rate(synapse_http_server_response_time_seconds_count[${w}]))`,
    apiP50Ms: `1000 * histogram_quantile(0.5, sum by (le) (rate(synapse_http_server_response_time_seconds_bucket[${w}])))`,
    apiP95Ms: `1000 * histogram_quantile(0.95, sum by (le) (rate(synapse_http_server_response_time_seconds_bucket[${w}])))`,
    apiP99Ms: `1000 * histogram_quantile(0.99, sum by (le) (rate(synapse_http_server_response_time_seconds_bucket[${w}])))`,
    storeAvgMs: `1000 * sum(rate(synapse_storage_transaction_time_sum_total[${w}])) / sum(rate(synapse_storage_transaction_time_count_total[${w}]))`,
    storeP99Ms: `1000 * histogram_quantile(0.99, sum by (le) (rate(synapse_storage_query_time_bucket[${w}])))`,
    // CPU of the system under test's processes (Synapse, PostgreSQL, nginx) as % of the
    // CPU the target may use: unlike node CPU, not inflated by other work on a shared machine.
    cpuPercent: `100 * sum(rate(loadgate_target_group_cpu_seconds_total{job="process"}[${w}])) / ${availableCpus(targetCpus, share)}`,
    threads: 'max(loadgate_target_threads{job="process"})',
    heapInUseBytes: 'max(loadgate_target_resident_memory_bytes{job="process"})',
    connectedUsers: 'max(loadgate_engine_active_users{job="k6"})',
    rps: `sum(rate(synapse_http_server_responses_total[${w}]))`,
    // The client's view (k6), as the health queries count errors: no error series is 0 %.
    errorPercent: `100 * (sum(rate(loadtest_http_errors_total{job="k6"}[${w}])) or vector(0)) / sum(rate(loadtest_http_request_time_count{job="k6"}[${w}]))`,
  };
}

/**
 * Per-handler and per-store-method queries over a window of `sec` seconds ending at the
 * evaluation time; `engineCpus` scales k6's CPU to a share of the cores it may use.
 */
export function windowQueries(
  sec: number,
  engineCpus = 1,
  rateWindow = RATE_WINDOW,
  stepSec = 5,
): Record<'apiCount' | 'apiSum' | 'apiP99' | 'storeCount' | 'storeSum' | 'requests' | 'errors' | 'timeouts' | 'engineCpuMax', string> {
  const r = `${Math.max(Math.round(sec), 10)}s`;
  const by = 'method, servlet';
  return {
    apiCount: `sum by (${by}) (increase(synapse_http_server_response_time_seconds_count[${r}]))`,
    apiSum: `sum by (${by}) (increase(synapse_http_server_response_time_seconds_sum[${r}]))`,
    apiP99: `histogram_quantile(0.99, sum by (${by}, le) (increase(synapse_http_server_response_time_seconds_bucket[${r}])))`,
    storeCount: `sum by (desc) (increase(synapse_storage_transaction_time_count_total[${r}]))`,
    storeSum: `sum by (desc) (increase(synapse_storage_transaction_time_sum_total[${r}]))`,
    requests: `sum(increase(loadtest_http_request_time_count{job="k6"}[${r}]))`,
    errors: `sum(increase(loadtest_http_errors_total{job="k6"}[${r}]))`,
    timeouts: `sum(increase(loadtest_http_timeouts_total{job="k6"}[${r}]))`,
    engineCpuMax: `max_over_time((100 * rate(loadgate_engine_cpu_seconds_total{job="k6"}[${rateWindow}]) / ${engineCpus})[${r}:${stepSec}s])`,
  };
}

/** Per-store-method mean over short intervals; the 99th percentile of these stands in for the p99 Synapse does not export. */
export const STORE_INTERVAL_SEC = 15;
export const storeIntervalMeans = `1000 * sum by (desc) (rate(synapse_storage_transaction_time_sum_total[${STORE_INTERVAL_SEC}s])) / sum by (desc) (rate(synapse_storage_transaction_time_count_total[${STORE_INTERVAL_SEC}s]))`;
