import type { RunResult, Series, Timing } from '../../results/schema.ts';
import { PrometheusError, type InstantSample, type PrometheusClient } from '../../metrics/prometheus.ts';
import { percentile, toSeries, type Collected, type CollectWindow } from '../../metrics/collected.ts';
import type { CollectContext } from '../chat-server.ts';
import { STORE_INTERVAL_SEC, seriesQueries, storeIntervalMeans, windowQueries } from './queries.ts';
import { cpuCount } from '../../metrics/target-cpus.ts';

/**
 * Reads one run's numbers from Prometheus after the run: the graph series over the whole
 * run (5 s step, `t` in seconds since the run started) and, over the measurement window
 * only (ramp-up or the unbounded climb excluded), per-handler and per-store-method
 * timings and the client totals. Missing data is reported per component, never papered
 * over with zeros.
 */

type SeriesName = keyof ReturnType<typeof seriesQueries>;
const UNITS: Record<SeriesName, Series['unit']> = {
  apiAvgMs: 'ms',
  apiP50Ms: 'ms',
  apiP95Ms: 'ms',
  apiP99Ms: 'ms',
  storeAvgMs: 'ms',
  storeP99Ms: 'ms',
  cpuPercent: 'percent',
  threads: 'count',
  heapInUseBytes: 'bytes',
  connectedUsers: 'users',
  rps: 'rps',
  errorPercent: 'percent',
};
/** Which scraped component each series comes from, for "no data" messages. */
const SOURCES: Record<SeriesName, string> = {
  apiAvgMs: 'synapse metrics listener (job "synapse")',
  apiP99Ms: 'synapse metrics listener (job "synapse")',
  apiP50Ms: 'synapse metrics listener (job "synapse")',
  apiP95Ms: 'synapse metrics listener (job "synapse")',
  errorPercent: 'k6 exporter (job "k6")',
  storeAvgMs: 'synapse metrics listener (job "synapse")',
  storeP99Ms: 'synapse metrics listener (job "synapse")',
  rps: 'synapse metrics listener (job "synapse")',
  cpuPercent: 'process exporter (job "process")',
  threads: 'process exporter (job "process")',
  heapInUseBytes: 'process exporter (job "process")',
  connectedUsers: 'k6 exporter (job "k6")',
};
/** Without these the run cannot be judged. */
const ESSENTIAL: readonly SeriesName[] = ['apiAvgMs', 'cpuPercent', 'connectedUsers', 'rps'];

const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

/** What a reading found, and what it could not: one line per missing or failed measurement. */
interface Findings {
  problems: string[];
  missingEssential: boolean;
}

/**
 * `context.cpus` says where the target and k6 ran and the share of the target cores this
 * side may use (a CPU quota, or half in a duet): CPU % is of that share.
 */
export async function collectRun(client: PrometheusClient, w: CollectWindow, context: CollectContext): Promise<Collected> {
  const { cpus } = context;
  if (!cpus) throw new Error('collecting a Synapse run needs the CPU lists of the local bench (context.cpus)');
  const rateWindow = `${context.rateWindowSec}s`;
  const found: Findings = { problems: [], missingEssential: false };
  const series = await collectSeries(client, w, seriesQueries(cpus.target, cpus.targetShare, rateWindow), context.stepSec, found);

  const q = windowQueries(w.stableEnd - w.stableStart, cpuCount(cpus.engine), rateWindow, context.stepSec);
  const instant = async (query: string) => {
    try {
      return await client.query(query, w.stableEnd);
    } catch (error) {
      found.problems.push((error as PrometheusError).message);
      return [];
    }
  };
  const [apiCount, apiSum, apiP99, storeCount, storeSum, requests, errors, timeouts, engineCpu] = await Promise.all([
    instant(q.apiCount),
    instant(q.apiSum),
    instant(q.apiP99),
    instant(q.storeCount),
    instant(q.storeSum),
    instant(q.requests),
    instant(q.errors),
    instant(q.timeouts),
    instant(q.engineCpuMax),
  ]);

  const api = apiTimings(apiCount, apiSum, apiP99);
  if (!api.length) {
    found.problems.push('Prometheus has no per-handler API timings from the synapse metrics listener (job "synapse") in the measurement window');
    found.missingEssential = true;
  }
  const store = storeTimings(storeCount, storeSum, await storeIntervalMeansOf(client, w, found));
  if (!store.length)
    found.problems.push('Prometheus has no store transaction timings from the synapse metrics listener (job "synapse") in the measurement window');

  const total = (samples: { value: number }[]) => samples.reduce((n, s) => n + (Number.isFinite(s.value) ? s.value : 0), 0);
  if (!requests.length) {
    found.problems.push('Prometheus has no client request counts from the k6 exporter (job "k6") in the measurement window');
    found.missingEssential = true;
  }
  const cpuMax = engineCpu[0]?.value;
  return {
    series,
    api,
    store,
    totals: { requests: Math.round(total(requests)), errors: Math.round(total(errors)), timeouts: Math.round(total(timeouts)) },
    engineCpuPercentMax: cpuMax !== undefined && Number.isFinite(cpuMax) ? round(cpuMax, 1) : undefined,
    problems: found.problems,
    missingEssential: found.missingEssential,
  };
}

/** The graph series over the whole run; a missing essential one makes the run unjudgeable. */
async function collectSeries(
  client: PrometheusClient,
  w: CollectWindow,
  queries: Record<SeriesName, string>,
  stepSec: number,
  found: Findings,
): Promise<RunResult['series']> {
  const series: RunResult['series'] = {};
  const start = Math.ceil(w.runStart);
  const end = Math.max(start, Math.floor(w.runEnd));
  await Promise.all(
    (Object.entries(queries) as [SeriesName, string][]).map(async ([name, query]) => {
      try {
        const ranges = await client.queryRange(query, start, end, stepSec);
        const s = ranges[0] ? toSeries(ranges[0], w.runStart, UNITS[name]) : undefined;
        if (s) series[name] = s;
        else {
          found.problems.push(`Prometheus has no data for ${name} from the ${SOURCES[name]} during the run`);
          if (ESSENTIAL.includes(name)) found.missingEssential = true;
        }
      } catch (error) {
        found.problems.push(`${name}: ${(error as Error).message}`);
        if (ESSENTIAL.includes(name)) found.missingEssential = true;
      }
    }),
  );
  return series;
}

/** Per-handler timings over the window, busiest first; handlers with no finite average are left out. */
function apiTimings(counts: readonly InstantSample[], sums: readonly InstantSample[], p99s: readonly InstantSample[]): Timing[] {
  const key = (l: Record<string, string>) => `${l.method ?? '?'} ${l.servlet ?? '?'}`;
  const sumOf = new Map(sums.map((s) => [key(s.labels), s.value]));
  const p99Of = new Map(p99s.map((s) => [key(s.labels), s.value]));
  return counts
    .filter((s) => s.value >= 0.5)
    .map((s) => {
      const name = key(s.labels);
      const avgMs = (1000 * (sumOf.get(name) ?? NaN)) / s.value;
      const p99 = 1000 * (p99Of.get(name) ?? NaN);
      return { name, count: Math.round(s.value), avgMs: round(avgMs), p99Ms: round(Number.isFinite(p99) ? p99 : avgMs) };
    })
    .filter((t) => Number.isFinite(t.avgMs) && t.avgMs >= 0)
    .sort((a, b) => b.count - a.count);
}

/**
 * Each store method's 15 s means over the window. Synapse exports only sums and counts per
 * transaction, so the 99th percentile of these means stands in for the method's p99
 * (documented in the report).
 */
async function storeIntervalMeansOf(client: PrometheusClient, w: CollectWindow, found: Findings): Promise<Map<string, number[]>> {
  const means = new Map<string, number[]>();
  try {
    for (const r of await client.queryRange(storeIntervalMeans, Math.ceil(w.stableStart), Math.floor(w.stableEnd), STORE_INTERVAL_SEC)) {
      means.set(r.labels.desc ?? '?', r.v);
    }
  } catch (error) {
    found.problems.push((error as Error).message);
  }
  return means;
}

/** Per-store-method timings over the window, busiest first. */
function storeTimings(counts: readonly InstantSample[], sums: readonly InstantSample[], intervalMeans: ReadonlyMap<string, number[]>): Timing[] {
  const sumOf = new Map(sums.map((s) => [s.labels.desc ?? '?', s.value]));
  return counts
    .filter((s) => s.value >= 0.5)
    .map((s) => {
      const name = s.labels.desc ?? '?';
      const avgMs = (1000 * (sumOf.get(name) ?? NaN)) / s.value;
      const p99 = percentile(intervalMeans.get(name) ?? [], 99) ?? avgMs;
      return { name, count: Math.round(s.value), avgMs: round(avgMs), p99Ms: round(Math.max(p99, 0)) };
    })
    .filter((t) => Number.isFinite(t.avgMs) && t.avgMs >= 0)
    .sort((a, b) => b.count - a.count);
}
