import type { RunResult, Timing } from '../../results/schema.ts';
import { toSeries, type CollectWindow, type Collected } from '../../metrics/collected.ts';
import type { InstantSample, PrometheusClient } from '../../metrics/prometheus.ts';
import { COMPONENTS, SERIES_SOURCES, mattermostSeriesQueries, mattermostWindowQueries, type MattermostSeriesName } from './queries.ts';

/**
 * Reads a Mattermost run's numbers from the metrics node's Prometheus after the run:
 * the graph series over the whole run, and over the measurement window the per-handler
 * (mattermost_api_time) and per-store-method (mattermost_db_store_time) count, average
 * and p99, the client totals and the agents' health. Every missing measurement is a
 * problem naming the component; a missing essential one makes the run unjudgeable.
 */
export interface MattermostCollectOptions {
  /** Rate window of the graph series and the agent CPU, seconds (the seed queries use 1m). */
  rateWindowSec: number;
  /** Range-query step: the scrape interval, seconds. */
  stepSec: number;
}

export interface MattermostCollected extends Collected {
  /** Highest CPU use of any agent node during the window, % (undefined: not measured). */
  agentCpuPercentMax?: number;
  /** k6's dropped iterations over the window (undefined for load-test-ng, which has none). */
  droppedIterations?: number;
}

const UNITS: Record<MattermostSeriesName, NonNullable<RunResult['series']['apiAvgMs']>['unit']> = {
  apiAvgMs: 'ms',
  apiP50Ms: 'ms',
  apiP95Ms: 'ms',
  apiP99Ms: 'ms',
  storeAvgMs: 'ms',
  storeP99Ms: 'ms',
  cpuPercent: 'percent',
  threads: 'count',
  heapInUseBytes: 'bytes',
  stackInUseBytes: 'bytes',
  connectedUsers: 'users',
  rps: 'rps',
  errorPercent: 'percent',
};
/** Without these the run cannot be judged. */
const ESSENTIAL: readonly MattermostSeriesName[] = ['apiAvgMs', 'cpuPercent', 'heapInUseBytes', 'connectedUsers', 'rps'];

const round = (x: number, digits = 3): number => Math.round(x * 10 ** digits) / 10 ** digits;

export async function collectMattermostRun(client: PrometheusClient, w: CollectWindow, o: MattermostCollectOptions): Promise<MattermostCollected> {
  const problems: string[] = [];
  const rateWindow = `${o.rateWindowSec}s`;
  const { series, missingEssential: seriesMissing } = await collectSeries(client, w, o, rateWindow, problems);
  let missingEssential = seriesMissing;

  const q = mattermostWindowQueries(w.stableEnd - w.stableStart, rateWindow, o.stepSec);
  const instant = async (query: string) => {
    try {
      return await client.query(query, w.stableEnd);
    } catch (error) {
      problems.push((error as Error).message);
      return [];
    }
  };
  const [apiCount, apiSum, apiP99, storeCount, storeSum, storeP99, requests, errors, timeouts, agentCpu, dropped] = await Promise.all([
    instant(q.apiCount),
    instant(q.apiSum),
    instant(q.apiP99),
    instant(q.storeCount),
    instant(q.storeSum),
    instant(q.storeP99),
    instant(q.requests),
    instant(q.errors),
    instant(q.timeouts),
    instant(q.agentCpuMax),
    instant(q.droppedIterations),
  ]);

  const api = timingsOf(apiCount, apiSum, apiP99, 'handler');
  if (!api.length) {
    problems.push(`Prometheus has no per-handler API timings (mattermost_api_time) from ${COMPONENTS.mattermost} in the measurement window`);
    missingEssential = true;
  }
  const store = timingsOf(storeCount, storeSum, storeP99, 'method');
  if (!store.length) problems.push(`Prometheus has no store method timings (mattermost_db_store_time) from ${COMPONENTS.mattermost} in the measurement window`);

  if (!requests.length) {
    problems.push(`Prometheus has no client request counts from ${COMPONENTS.loadtest} in the measurement window`);
    missingEssential = true;
  }
  const cpu = agentCpu[0]?.value;
  const agentCpuPercentMax = cpu !== undefined && Number.isFinite(cpu) ? round(cpu, 1) : undefined;
  if (agentCpuPercentMax === undefined)
    problems.push(`Prometheus has no CPU data from ${COMPONENTS.agentNodes}: whether the load generator saturated cannot be told`);
  const droppedValue = dropped.length ? Math.round(total(dropped)) : undefined;
  return {
    series,
    api,
    store,
    totals: { requests: Math.round(total(requests)), errors: Math.round(total(errors)), timeouts: Math.round(total(timeouts)) },
    ...(agentCpuPercentMax !== undefined ? { agentCpuPercentMax, engineCpuPercentMax: agentCpuPercentMax } : {}),
    ...(droppedValue !== undefined ? { droppedIterations: droppedValue } : {}),
    problems,
    missingEssential,
  };
}

/** The graph series over the whole run; each one missing is a problem, and an essential one missing makes the run unjudgeable. */
async function collectSeries(
  client: PrometheusClient,
  w: CollectWindow,
  o: MattermostCollectOptions,
  rateWindow: string,
  problems: string[],
): Promise<{ series: RunResult['series']; missingEssential: boolean }> {
  let missingEssential = false;
  const series: RunResult['series'] = {};
  const start = Math.ceil(w.runStart);
  const end = Math.max(start, Math.floor(w.runEnd));
  await Promise.all(
    (Object.entries(mattermostSeriesQueries(rateWindow)) as [MattermostSeriesName, string][]).map(async ([name, query]) => {
      try {
        const ranges = await client.queryRange(query, start, end, o.stepSec);
        const s = ranges[0] ? toSeries(ranges[0], w.runStart, UNITS[name]) : undefined;
        if (s) series[name] = s;
        else {
          problems.push(`Prometheus has no data for ${name} from ${COMPONENTS[SERIES_SOURCES[name]]} during the run`);
          if (ESSENTIAL.includes(name)) missingEssential = true;
        }
      } catch (error) {
        problems.push(`${name}: ${(error as Error).message}`);
        if (ESSENTIAL.includes(name)) missingEssential = true;
      }
    }),
  );
  return { series, missingEssential };
}

/** Count, average and p99 per handler or store method, from the window's counts, sums and p99s; busiest first. */
function timingsOf(counts: InstantSample[], sums: InstantSample[], p99s: InstantSample[], label: string): Timing[] {
  const sumOf = new Map(sums.map((s) => [s.labels[label] ?? '?', s.value]));
  const p99Of = new Map(p99s.map((s) => [s.labels[label] ?? '?', s.value]));
  return counts
    .filter((s) => s.value >= 0.5)
    .map((s) => {
      const name = s.labels[label] ?? '?';
      const avgMs = (1000 * (sumOf.get(name) ?? NaN)) / s.value;
      const p99 = 1000 * (p99Of.get(name) ?? NaN);
      return { name, count: Math.round(s.value), avgMs: round(avgMs), p99Ms: round(Number.isFinite(p99) ? p99 : avgMs) };
    })
    .filter((t) => Number.isFinite(t.avgMs) && t.avgMs >= 0)
    .sort((a, b) => b.count - a.count || a.name.localeCompare(b.name));
}

const total = (samples: { value: number }[]): number => samples.reduce((n, s) => n + (Number.isFinite(s.value) ? s.value : 0), 0);
