import type { RunResult, Series, SeriesKey, TestType, Timing } from './schema.ts';

/**
 * The metrics the gate judges, and how each is read from one run. A metric a run does
 * not carry returns undefined ("not measured"), which the comparison tells apart from
 * a value of zero.
 */
export type RelativeMetricKey = 'supportedUsers' | 'apiAvg' | 'apiP99' | 'storeAvg' | 'storeP99' | 'cpu' | 'cpuPerUser' | 'heap' | 'stack';
export type RateMetricKey = 'errorRate' | 'timeoutRate';

export interface RelativeMetric {
  key: RelativeMetricKey;
  label: string;
  unit: string;
  worse: 'lower' | 'higher';
  appliesTo: readonly TestType[];
  /**
   * Where the metric can gate. In unbounded tests the load differs between sides by
   * design (that is the result), so latencies and resources there are context only.
   */
  gatesIn: readonly TestType[];
  extract(run: RunResult): number | undefined;
}

/** Mean of a series over [startSec, endSec]; undefined when no point falls inside. */
function windowMean(series: Series | undefined, startSec: number, endSec: number): number | undefined {
  if (!series) return undefined;
  let sum = 0;
  let n = 0;
  for (let i = 0; i < series.t.length; i++) {
    const t = series.t[i] as number;
    if (t >= startSec && t <= endSec) {
      sum += series.v[i] as number;
      n++;
    }
  }
  return n ? sum / n : undefined;
}

function stableMean(run: RunResult, key: SeriesKey): number | undefined {
  return windowMean(run.series[key], run.stableWindow.startSec, run.stableWindow.endSec);
}

/** Overall average of per-handler timings, weighted by request count. */
function weightedAvg(timings: readonly Timing[], field: 'avgMs' | 'p99Ms'): number | undefined {
  let weight = 0;
  let sum = 0;
  for (const t of timings) {
    weight += t.count;
    sum += t.count * t[field];
  }
  return weight > 0 ? sum / weight : undefined;
}

export const RELATIVE_METRICS: readonly RelativeMetric[] = [
  {
    key: 'supportedUsers',
    label: 'Supported users',
    unit: 'users',
    worse: 'lower',
    appliesTo: ['unbounded'],
    gatesIn: ['unbounded'],
    extract: (run) => run.supportedUsers,
  },
  {
    key: 'apiAvg',
    label: 'API time, average',
    unit: 'ms',
    worse: 'higher',
    appliesTo: ['bounded', 'unbounded'],
    gatesIn: ['bounded'],
    extract: (run) => weightedAvg(run.api, 'avgMs') ?? stableMean(run, 'apiAvgMs'),
  },
  {
    key: 'apiP99',
    label: 'API time, p99',
    unit: 'ms',
    worse: 'higher',
    appliesTo: ['bounded', 'unbounded'],
    gatesIn: ['bounded'],
    // The graphed p99 over the stable phase; per-handler p99s cannot be merged exactly.
    extract: (run) => stableMean(run, 'apiP99Ms') ?? weightedAvg(run.api, 'p99Ms'),
  },
  {
    key: 'storeAvg',
    label: 'Store time, average',
    unit: 'ms',
    worse: 'higher',
    appliesTo: ['bounded', 'unbounded'],
    gatesIn: ['bounded'],
    extract: (run) => weightedAvg(run.store, 'avgMs') ?? stableMean(run, 'storeAvgMs'),
  },
  {
    key: 'storeP99',
    label: 'Store time, p99',
    unit: 'ms',
    worse: 'higher',
    appliesTo: ['bounded', 'unbounded'],
    gatesIn: ['bounded'],
    extract: (run) => stableMean(run, 'storeP99Ms') ?? weightedAvg(run.store, 'p99Ms'),
  },
  {
    key: 'cpu',
    label: 'CPU utilization (stable phase)',
    unit: '%',
    worse: 'higher',
    appliesTo: ['bounded', 'unbounded'],
    gatesIn: ['bounded'],
    extract: (run) => stableMean(run, 'cpuPercent'),
  },
  {
    key: 'cpuPerUser',
    label: 'CPU per user (stable phase)',
    unit: '% per user',
    worse: 'higher',
    appliesTo: ['bounded', 'unbounded'],
    // Per user, it compares in unbounded tests too, where each side holds its own ceiling;
    // at a CPU-bound ceiling the users supported move inversely to it. In a duet both sides
    // are measured over the same minutes, so the machine's speed cancels in its ratio while
    // the ceiling search's own scatter (where each side happened to hold) does not enter it.
    gatesIn: ['bounded', 'unbounded'],
    extract: (run) => {
      const cpu = stableMean(run, 'cpuPercent');
      const users = stableMean(run, 'connectedUsers');
      return cpu !== undefined && users !== undefined && users > 0 ? cpu / users : undefined;
    },
  },
  {
    key: 'heap',
    label: 'Heap in use (stable phase)',
    unit: 'bytes',
    worse: 'higher',
    appliesTo: ['bounded', 'unbounded'],
    gatesIn: ['bounded'],
    extract: (run) => stableMean(run, 'heapInUseBytes'),
  },
  {
    key: 'stack',
    label: 'Stack in use (stable phase)',
    unit: 'bytes',
    worse: 'higher',
    appliesTo: ['bounded', 'unbounded'],
    gatesIn: ['bounded'],
    extract: (run) => stableMean(run, 'stackInUseBytes'),
  },
];

export interface RateMetric {
  key: RateMetricKey;
  label: string;
  events(run: RunResult): number;
}

export const RATE_METRICS: readonly RateMetric[] = [
  { key: 'errorRate', label: 'Error rate', events: (run) => run.totals.errors },
  { key: 'timeoutRate', label: 'Timeout rate', events: (run) => run.totals.timeouts },
];
