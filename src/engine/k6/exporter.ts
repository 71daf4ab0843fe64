import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { K6Api, type FetchLike, type K6Status } from './api.ts';
import { readClientMetrics, type ClientMetrics } from './client-metrics.ts';
import { processCpuSeconds } from './process-cpu.ts';

/**
 * The k6 -> Prometheus bridge: an HTTP server on 127.0.0.1 that Prometheus scrapes (job
 * "k6"). Each scrape reads k6's REST API and answers in the Prometheus text format with
 * load-test-ng's metric names, so the seed reports' client health queries work verbatim:
 *
 *   loadtest_http_request_time_bucket{le} / _sum / _count   (seconds, cumulative)
 *   loadtest_http_errors_total{status_code}
 *   loadtest_http_timeouts_total
 *   loadgate_engine_active_users, loadgate_engine_max_users
 *   loadgate_engine_cpu_seconds_total          (k6 process, from /proc; needs k6Pid)
 *   loadgate_engine_dropped_iterations_total, loadgate_engine_iterations_total
 *   loadgate_engine_actions_total{action}, loadgate_engine_script_errors_total
 *
 * Series never disappear once seen (buckets, status codes, actions are remembered), so
 * rate() stays continuous; status_code="500" is always present (0 until one happens) so
 * an error-ratio query has a series to divide even before the first error.
 */
export interface ExporterOptions {
  k6ApiPort: number;
  /** k6's pid, for loadgate_engine_cpu_seconds_total. */
  k6Pid?: number;
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
  /** For tests: answers k6 REST calls instead of the network. */
  fetch?: FetchLike;
}

export interface Exporter {
  port: number;
  url: string;
  close(): Promise<void>;
}

export async function startExporter(options: ExporterOptions): Promise<Exporter> {
  const api = new K6Api({ port: options.k6ApiPort, ...(options.fetch ? { fetch: options.fetch } : {}), timeoutMs: 4000 });
  const memory: SeriesMemory = { bounds: new Set(), codes: new Set(['500']), actions: new Set() };

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('loadgate k6 exporter: scrape /metrics\n');
      return;
    }
    scrape(api, options.k6Pid, memory)
      .then((text) => {
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
        res.end(text);
      })
      .catch((error: Error) => {
        // 503 makes Prometheus record up{job="k6"} == 0 instead of stale numbers.
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end(`k6 is not answering: ${error.message}\n`);
      });
  });
  server.keepAliveTimeout = 15_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

interface SeriesMemory {
  bounds: Set<number>;
  codes: Set<string>;
  actions: Set<string>;
}

async function scrape(api: K6Api, k6Pid: number | undefined, memory: SeriesMemory): Promise<string> {
  const [status, metrics, cpuSeconds] = await Promise.all([
    api.status(),
    api.metrics(),
    k6Pid === undefined ? Promise.resolve(undefined) : processCpuSeconds(k6Pid),
  ]);
  return formatPrometheus(readClientMetrics(metrics), status, cpuSeconds, memory);
}

/** Renders one scrape. Exported for tests; `memory` carries the series seen before. */
export function formatPrometheus(
  client: ClientMetrics,
  status: Pick<K6Status, 'vus' | 'vusMax'>,
  cpuSeconds: number | undefined,
  memory: SeriesMemory = { bounds: new Set(), codes: new Set(['500']), actions: new Set() },
): string {
  for (const b of client.buckets) memory.bounds.add(b.le);
  for (const code of client.errors.keys()) memory.codes.add(code);
  for (const action of client.actions.keys()) memory.actions.add(action);

  const lines: string[] = [];
  const family = (name: string, type: string, help: string): void => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  };

  family('loadtest_http_request_time', 'histogram', 'Client-side HTTP request duration in seconds, every request of the scenario.');
  const perBound = new Map(client.buckets.map((b) => [b.le, b.count]));
  const bounds = [...memory.bounds].sort((a, b) => a - b);
  let cumulative = 0;
  for (const le of bounds) {
    if (le === Number.POSITIVE_INFINITY) continue;
    cumulative += perBound.get(le) ?? 0;
    lines.push(`loadtest_http_request_time_bucket{le="${le}"} ${cumulative}`);
  }
  cumulative += perBound.get(Number.POSITIVE_INFINITY) ?? 0;
  lines.push(`loadtest_http_request_time_bucket{le="+Inf"} ${cumulative}`);
  lines.push(`loadtest_http_request_time_sum ${client.sumSeconds}`);
  lines.push(`loadtest_http_request_time_count ${cumulative}`);

  family('loadtest_http_errors_total', 'counter', 'Client-side HTTP errors by status code (0: transport error).');
  for (const code of [...memory.codes].sort()) {
    lines.push(`loadtest_http_errors_total{status_code="${code}"} ${client.errors.get(code) ?? 0}`);
  }

  family('loadtest_http_timeouts_total', 'counter', 'Client-side requests that hit the per-request timeout.');
  lines.push(`loadtest_http_timeouts_total ${client.timeouts}`);

  family('loadgate_engine_active_users', 'gauge', 'Simulated users (k6 VUs) currently active.');
  lines.push(`loadgate_engine_active_users ${status.vus}`);
  family('loadgate_engine_max_users', 'gauge', 'Simulated users (k6 VUs) initialised.');
  lines.push(`loadgate_engine_max_users ${status.vusMax}`);

  if (cpuSeconds !== undefined) {
    family('loadgate_engine_cpu_seconds_total', 'counter', 'CPU time used by the k6 process (user + system).');
    lines.push(`loadgate_engine_cpu_seconds_total ${cpuSeconds}`);
  }

  family('loadgate_engine_dropped_iterations_total', 'counter', 'Iterations k6 could not start in time.');
  lines.push(`loadgate_engine_dropped_iterations_total ${client.droppedIterations}`);
  family('loadgate_engine_iterations_total', 'counter', 'Scenario iterations (one action and its idle time each).');
  lines.push(`loadgate_engine_iterations_total ${client.iterations}`);
  family('loadgate_engine_script_errors_total', 'counter', 'Exceptions inside the scenario script.');
  lines.push(`loadgate_engine_script_errors_total ${client.scriptErrors}`);

  if (memory.actions.size) {
    family('loadgate_engine_actions_total', 'counter', 'Simulated user actions started, by action.');
    for (const action of [...memory.actions].sort()) {
      lines.push(`loadgate_engine_actions_total{action="${action}"} ${client.actions.get(action) ?? 0}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
