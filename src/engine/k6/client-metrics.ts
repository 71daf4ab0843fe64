import { counterTotal, type K6Metrics } from './api.ts';

/**
 * Reads loadgate's client-side counters out of a k6 metrics snapshot. The naming scheme
 * is written by the scenarios' shared library (scenarios/lib/metrics.js, documented
 * there and in src/engine/k6/README.md, "Metric scheme"); this is its only reader.
 */
export interface ClientMetrics {
  /** Histogram buckets, NOT cumulative, ascending by upper bound; the last is +Inf when seen. */
  buckets: Array<{ le: number; count: number }>;
  /** Sum of request durations, seconds. */
  sumSeconds: number;
  requests: number;
  timeouts: number;
  /** status_code label ("503", "0" for transport errors, "5xx" for undeclared codes) -> count. */
  errors: Map<string, number>;
  /** action name -> times started. */
  actions: Map<string, number>;
  droppedIterations: number;
  iterations: number;
  scriptErrors: number;
}

const BUCKET = /^loadgate_req_le_(?:(\d+)(?:p(\d+))?|(inf))$/;
const ERROR = /^loadgate_req_err_(\d{1,3}|[45]xx)$/;
const ACTION = /^loadgate_action_([A-Za-z][A-Za-z0-9]*)$/;

/** The bucket bound a counter name encodes: "loadgate_req_le_0p025" -> 0.025, "..._inf" -> Infinity. */
export function parseBucketName(name: string): number | undefined {
  const m = BUCKET.exec(name);
  if (!m) return undefined;
  if (m[3]) return Number.POSITIVE_INFINITY;
  return Number(`${m[1]}${m[2] ? `.${m[2]}` : ''}`);
}

export function readClientMetrics(metrics: K6Metrics): ClientMetrics {
  const buckets: Array<{ le: number; count: number }> = [];
  const errors = new Map<string, number>();
  const actions = new Map<string, number>();
  for (const [name, metric] of metrics) {
    if (metric.type !== 'counter') continue;
    const count = metric.sample.count ?? 0;
    const le = parseBucketName(name);
    if (le !== undefined) {
      buckets.push({ le, count });
      continue;
    }
    const error = ERROR.exec(name);
    if (error?.[1]) {
      errors.set(error[1], count);
      continue;
    }
    const action = ACTION.exec(name);
    if (action?.[1]) actions.set(action[1], count);
  }
  buckets.sort((a, b) => a.le - b.le);
  return {
    buckets,
    sumSeconds: counterTotal(metrics, 'loadgate_req_seconds'),
    requests: buckets.reduce((n, b) => n + b.count, 0),
    timeouts: counterTotal(metrics, 'loadgate_req_timeouts'),
    errors,
    actions,
    droppedIterations: counterTotal(metrics, 'dropped_iterations'),
    iterations: counterTotal(metrics, 'iterations'),
    scriptErrors: counterTotal(metrics, 'loadgate_script_errors'),
  };
}

export function totalErrors(metrics: ClientMetrics): number {
  let n = 0;
  for (const count of metrics.errors.values()) n += count;
  return n;
}
