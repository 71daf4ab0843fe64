import type { HealthSource } from '../coordinator/index.ts';
import type { PrometheusClient } from './prometheus.ts';
import { expandQuery } from './target-cpus.ts';

/**
 * The coordinator's view of the gate's health queries: one number per query from the
 * bench's Prometheus, with `$TARGET_CPUS` replaced by the target cores and
 * `$TARGET_CPU_COUNT` by the CPUs it may use (its cores times a CPU quota's `share`). NaN (a rate
 * divided by a zero rate: no traffic yet) is null; "no series at all" throws NoDataError,
 * which the coordinator counts and, if it persists, turns into a "no data" stop that
 * names the query.
 */
export function createHealthSource(client: PrometheusClient, targetCpus: string, share = 1): HealthSource {
  return { query: (promql) => client.queryNumber(expandQuery(promql, targetCpus, share)) };
}
