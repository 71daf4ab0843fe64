// loadgate's client-side metrics for k6 scenarios (runs inside k6, not node).
//
// k6's REST API (/v1/metrics) only reports cumulative summaries (a Counter's total, a
// Trend's avg/percentiles since start), which Prometheus cannot turn into rates or
// quantiles over a window. So every request is recorded into plain Counters whose
// *names* encode what loadgate's exporter (src/engine/k6/exporter.ts) needs to rebuild
// load-test-ng's series:
//
//   loadgate_req_le_<bound>   one Counter per histogram bucket, NOT cumulative: a request
//                             lands only in the smallest bucket whose upper bound (seconds)
//                             is >= its duration; <bound> writes the decimal point as "p"
//                             (0p025 = 0.025 s) and the last bucket is "inf".
//                             -> loadtest_http_request_time_bucket{le}, _count
//   loadgate_req_seconds      sum of request durations in seconds -> _sum
//   loadgate_req_timeouts     requests that hit the per-request timeout
//                             -> loadtest_http_timeouts_total
//   loadgate_req_err_<code>   responses with status >= 400, and transport failures as 0
//                             -> loadtest_http_errors_total{status_code}
//   loadgate_action_<Name>    actions started, per action -> loadgate_engine_actions_total{action}
//
// The exporter discovers buckets from the names, so it never needs this file; setup()
// calls touchMetrics() so every bucket is reported from the first scrape on.

import { Counter } from 'k6/metrics';

// Upper bounds in seconds. Dense around the seed thresholds (0.1 s average, 2 s p99),
// because histogram_quantile interpolates linearly inside a bucket.
const BUCKET_BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30];

// k6 error_code for "request timeout" (lib/netext/httpext/error_codes.go).
const K6_REQUEST_TIMEOUT = 1050;

function boundName(bound) {
  return `loadgate_req_le_${String(bound).replace('.', 'p')}`;
}

const bucketCounters = BUCKET_BOUNDS.map((bound) => new Counter(boundName(bound)));
const overflowCounter = new Counter('loadgate_req_le_inf');
const secondsCounter = new Counter('loadgate_req_seconds');
const timeoutCounter = new Counter('loadgate_req_timeouts');

// Custom metrics must be declared in the init context, so every status code that can
// be told apart is declared up front; anything else lands in its class (4xx/5xx).
const ERROR_CODES = [0];
for (let code = 400; code <= 431; code++) ERROR_CODES.push(code);
ERROR_CODES.push(451);
for (let code = 500; code <= 511; code++) ERROR_CODES.push(code);
const errorCounters = {};
for (const code of ERROR_CODES) errorCounters[code] = new Counter(`loadgate_req_err_${code}`);
errorCounters['4xx'] = new Counter('loadgate_req_err_4xx');
errorCounters['5xx'] = new Counter('loadgate_req_err_5xx');

const actionCounters = {};

/** Declares one action counter; call in the init context for every action a scenario runs. */
export function declareAction(name) {
  if (!/^[A-Za-z][A-Za-z0-9]{0,60}$/.test(name)) throw new Error(`invalid action name "${name}"`);
  if (!actionCounters[name]) actionCounters[name] = new Counter(`loadgate_action_${name}`);
}

export function countAction(name) {
  const counter = actionCounters[name];
  if (counter) counter.add(1);
}

/** Adds 0 to every histogram and timeout counter, so the exporter sees them before any traffic. */
export function touchMetrics() {
  for (const counter of bucketCounters) counter.add(0);
  overflowCounter.add(0);
  secondsCounter.add(0);
  timeoutCounter.add(0);
}

/** True when the VU is being stopped (scaled down, test ending): not the server's fault. */
function wasCancelled(res) {
  return res.status === 0 && typeof res.error === 'string' && res.error.indexOf('context canceled') !== -1;
}

/**
 * Records one finished request. `wallMs` is the caller's own measurement, used when k6
 * has no timings (transport errors and timeouts report a zero duration).
 * Returns 'ok' | 'error' | 'timeout' | 'cancelled'.
 */
export function recordResponse(res, wallMs) {
  if (wasCancelled(res)) return 'cancelled';
  const ms = res.status === 0 || !(res.timings.duration > 0) ? wallMs : res.timings.duration;
  const seconds = Math.max(0, ms) / 1000;
  let index = 0;
  while (index < BUCKET_BOUNDS.length && seconds > BUCKET_BOUNDS[index]) index++;
  (index < bucketCounters.length ? bucketCounters[index] : overflowCounter).add(1);
  secondsCounter.add(seconds);

  if (res.error_code === K6_REQUEST_TIMEOUT) {
    timeoutCounter.add(1);
    return 'timeout';
  }
  if (res.status === 0 || res.status >= 400) {
    const code = res.status;
    const counter = errorCounters[code] || errorCounters[code >= 500 ? '5xx' : '4xx'];
    counter.add(1);
    return 'error';
  }
  return 'ok';
}
