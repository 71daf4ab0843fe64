import type { HealthQuery } from '../../config/schema.ts';

/**
 * Health queries for the local Synapse bench: the ceiling tests' coordinator metrics,
 * mapped onto what the local bench exposes (examples/local-synapse.yml uses these on
 * 30 s windows). Client-side series use the load-test-ng metric names
 * (`loadtest_http_*`), which loadgate's k6 exporter publishes, so those queries are the
 * seed ones verbatim. Server 5xx comes from Synapse's own counter. CPU is the system
 * under test's processes (Synapse, PostgreSQL, nginx; loadgate's process exporter) as a
 * share of the target cores (`$TARGET_CPU_COUNT` is replaced at run time): on a shared
 * machine node_exporter's per-core CPU also counts neighbours. Memory and TCP
 * retransmissions are the host's (job "node"); the proxy runs on the same host, so the
 * seeds' two retransmission queries (app nodes, proxy) are one here: eight queries.
 */
export const SYNAPSE_HEALTH_QUERIES: readonly HealthQuery[] = [
  {
    name: 'HTTP 5xx server errors (%)',
    query:
      '(sum(rate(synapse_http_server_responses_total{code=~"5.."}[1m])) or vector(0)) / sum(rate(synapse_http_server_responses_total[1m])) * 100',
    threshold: 0.025,
  },
  {
    name: 'Average client request duration (s)',
    query: 'sum(rate(loadtest_http_request_time_sum[1m]))/sum(rate(loadtest_http_request_time_count[1m]))',
    threshold: 0.1,
  },
  {
    name: '99th percentile of client request duration (s)',
    query: 'histogram_quantile(0.99, sum(rate(loadtest_http_request_time_bucket[1m])) by (le))',
    threshold: 2,
  },
  {
    name: 'HTTP 5xx client errors (%)',
    query:
      '((sum(rate(loadtest_http_errors_total{status_code=~"5.."}[1m])) or vector(0))/sum(rate(loadtest_http_request_time_count[1m])))*100',
    threshold: 0.025,
  },
  {
    name: 'Client timeouts (%)',
    query: '((sum(rate(loadtest_http_timeouts_total[1m])) or vector(0))/sum(rate(loadtest_http_request_time_count[1m]))) * 100',
    threshold: 0.025,
  },
  {
    name: 'CPU utilization - target (%)',
    query: '100 * sum(rate(loadgate_target_group_cpu_seconds_total{job="process"}[1m])) / $TARGET_CPU_COUNT',
    threshold: 85,
  },
  {
    name: 'Memory utilization (%)',
    query: '100 - 100 * avg(node_memory_MemAvailable_bytes{job="node"} / node_memory_MemTotal_bytes{job="node"})',
    threshold: 85,
  },
  {
    name: 'TCP retransmissions (%)',
    query:
      '((avg(rate(node_netstat_Tcp_RetransSegs{job="node"}[1m])) or vector(0)) / avg(rate(node_netstat_Tcp_OutSegs{job="node"}[1m]))) * 100',
    threshold: 1,
  },
].map((q) => ({ ...q, minInterval: 0, enabled: true }));

/**
 * The seeds' per-core CPU query, for a dedicated machine: node_exporter's busy time of
 * the target cores (`$TARGET_CPUS` becomes their regex, e.g. "0|1").
 */
export const SYNAPSE_NODE_CPU_QUERY =
  '100 - 100 * (avg(irate(node_cpu_seconds_total{job="node",mode="idle",cpu=~"$TARGET_CPUS"}[1m])))';

export const SYNAPSE_PACKAGE = 'matrix-synapse';
