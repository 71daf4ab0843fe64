import type { TopLevelSpec } from 'vega-lite';
import type { TestComparison } from '../results/comparison.ts';
import type { RunResult, Series, SeriesKey } from '../results/schema.ts';

/**
 * The capacity curve: how throughput, latencies and errors grow with the active
 * users, read from the run's series (connected users, requests/s, API avg/p50/p95/p99,
 * client error %, store avg/p99). Results recorded before the p50/p95/error series existed
 * show n/a in those columns.
 *   - a table at user levels, baseline and candidate side by side, in the shape of the
 *     Locust seed (forum-api-locust-load-results.txt: clients, req/s, response times);
 *   - store times (avg, p99) at a few load levels, the shape of the YugabyteDB talk seed;
 *   - graphs of requests/s and API times against users, the knee (supported users) marked.
 * An unbounded run sweeps the users, so each level is the mean of the points within ±5 %
 * of it; a bounded run has one level, its hold.
 */

export interface LevelPoint {
  users: number;
  /** Metric -> mean over the points at this level; absent when not measured there. */
  values: Partial<Record<SeriesKey, number>>;
  points: number;
}

const CURVE_KEYS = ['rps', 'apiAvgMs', 'apiP50Ms', 'apiP95Ms', 'apiP99Ms', 'errorPercent', 'storeAvgMs', 'storeP99Ms'] as const satisfies readonly SeriesKey[];
/** Levels as fractions of the larger side's supported users (1 is the knee). */
const UNBOUNDED_LEVELS = [0.25, 0.5, 0.75, 0.9, 1] as const;
const STORE_LEVELS = [0.5, 0.9, 1] as const;
const BAND = 0.05;
/**
 * An unbounded run's first minute is left out: its rate windows hold the start-up (the
 * committed local runs started 40 users at once: a 2.4 s average request time at 40 users
 * that says nothing about 40 users in steady state).
 */
const STARTUP_SEC = 60;

/** The value of `series` at time t: the point nearest in time (series share one scrape grid). */
function valueAt(series: Series, t: number): number | undefined {
  let lo = 0;
  let hi = series.t.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((series.t[mid] as number) < t) lo = mid + 1;
    else hi = mid;
  }
  const best = lo > 0 && Math.abs((series.t[lo - 1] as number) - t) < Math.abs((series.t[lo] as number) - t) ? lo - 1 : lo;
  return series.v[best];
}

/** (users, metric values) at every connected-users point, from `fromSec` on. */
function usersAndMetrics(run: RunResult, fromSec = 0): Array<{ users: number; values: Partial<Record<SeriesKey, number>> }> {
  const users = run.series.connectedUsers;
  if (!users) return [];
  const out: Array<{ users: number; values: Partial<Record<SeriesKey, number>> }> = [];
  for (let i = 0; i < users.t.length; i++) {
    const t = users.t[i] as number;
    if (t < fromSec) continue;
    const values: Partial<Record<SeriesKey, number>> = {};
    for (const key of CURVE_KEYS) {
      const s = run.series[key];
      const v = s ? valueAt(s, t) : undefined;
      if (v !== undefined && Number.isFinite(v)) values[key] = v;
    }
    out.push({ users: users.v[i] as number, values });
  }
  return out;
}

/** Mean of each metric over the points within ±BAND of `level` users; undefined when none. */
export function atLevel(runs: readonly RunResult[], level: number, fromSec: (run: RunResult) => number = () => 0): LevelPoint | undefined {
  const sums: Partial<Record<SeriesKey, { sum: number; n: number }>> = {};
  let points = 0;
  for (const run of runs) {
    for (const p of usersAndMetrics(run, fromSec(run))) {
      if (Math.abs(p.users - level) > BAND * level) continue;
      points++;
      for (const [key, v] of Object.entries(p.values) as Array<[SeriesKey, number]>) {
        const s = (sums[key] ??= { sum: 0, n: 0 });
        s.sum += v;
        s.n++;
      }
    }
  }
  if (!points) return undefined;
  const values: Partial<Record<SeriesKey, number>> = {};
  for (const [key, s] of Object.entries(sums) as Array<[SeriesKey, { sum: number; n: number }]>) values[key] = s.sum / s.n;
  return { users: level, values, points };
}

function meanSupported(runs: readonly RunResult[]): number | undefined {
  const users = runs.map((r) => r.supportedUsers).filter((u): u is number => u !== undefined && u > 0);
  return users.length ? users.reduce((a, b) => a + b, 0) / users.length : undefined;
}

/** The user levels of a test's table: fractions of the knee (unbounded) or the hold's users (bounded). */
export function levelsOf(test: TestComparison): number[] {
  const runs = [...test.baseline, ...test.candidate];
  const first = runs[0];
  if (!first) return [];
  if (first.test.type === 'bounded') return [first.test.users];
  const knee = Math.max(meanSupported(test.baseline) ?? 0, meanSupported(test.candidate) ?? 0);
  return knee > 0 ? UNBOUNDED_LEVELS.map((f) => Math.round(f * knee)) : [];
}

const fmt = (v: number | undefined, digits = 1): string => (v === undefined ? 'n/a' : v.toFixed(digits));
const pair = (b: LevelPoint | undefined, c: LevelPoint | undefined, key: SeriesKey, digits = 1): string =>
  `${fmt(b?.values[key], digits)} / ${fmt(c?.values[key], digits)}`;

function mdTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return [header, header.map(() => '---'), ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

/** The markdown of a test's capacity curve and store-times tables; undefined without series. */
export function capacitySection(test: TestComparison): string | undefined {
  const levels = levelsOf(test);
  if (!levels.length) return undefined;
  const bounded = test.type === 'bounded';
  // A bounded run's hold only: its ramp passes through lower levels on the way.
  const from = (run: RunResult): number => (bounded ? run.stableWindow.startSec : STARTUP_SEC);
  const knee = levels[levels.length - 1] as number;
  const rows = levels
    .map((level) => ({ level, b: atLevel(test.baseline, level, from), c: atLevel(test.candidate, level, from) }))
    .filter((r) => r.b || r.c)
    .map((r) => [
      `${r.level}${!bounded && r.level === knee ? ' (knee)' : ''}`,
      pair(r.b, r.c, 'rps'),
      pair(r.b, r.c, 'apiAvgMs'),
      pair(r.b, r.c, 'apiP50Ms'),
      pair(r.b, r.c, 'apiP95Ms'),
      pair(r.b, r.c, 'apiP99Ms'),
      pair(r.b, r.c, 'errorPercent', 2),
    ]);
  if (!rows.length) return undefined;
  const parts = [
    `### Capacity curve - ${bounded ? 'Bounded' : 'Unbounded'} (${test.name})`,
    bounded
      ? "At the bounded test's one level, over its hold. Each cell: baseline / candidate."
      : "From the unbounded ramp: the mean of the points within ±5 % of each level of active users; the knee is the larger side's supported users. Each cell: baseline / candidate.",
    mdTable(['Users', 'Requests/s', 'API avg (ms)', 'API p50 (ms)', 'API p95 (ms)', 'API p99 (ms)', 'Errors (%)'], rows),
  ];
  const runNotes = [...test.baseline.map((r) => ['baseline', r] as const), ...test.candidate.map((r) => ['candidate', r] as const)]
    .map(([side, r]) => runNote(side, r))
    .filter((n): n is string => n !== undefined);
  if (runNotes.length) parts.push(runNotes.map((n) => `- ${n}`).join('\n'));
  const storeLevels = bounded ? levels : STORE_LEVELS.map((f) => Math.round(f * knee));
  const storeRows = storeLevels
    .map((level) => ({ level, b: atLevel(test.baseline, level, from), c: atLevel(test.candidate, level, from) }))
    .filter((r) => r.b?.values.storeAvgMs !== undefined || r.c?.values.storeAvgMs !== undefined)
    .map((r) => [String(r.level), pair(r.b, r.c, 'storeAvgMs', 2), pair(r.b, r.c, 'storeP99Ms', 2)]);
  if (storeRows.length) parts.push(`Store times by load (baseline / candidate):\n\n${mdTable(['Users', 'Store avg (ms)', 'Store p99 (ms)'], storeRows)}`);
  return parts.join('\n\n');
}

/** How long a run actually ran and how sure its estimate is (warm start, adaptive hold, early stop). */
function runNote(side: string, r: RunResult): string | undefined {
  const who = `${r.target.version} (${side}) #${r.repeat}`;
  const minutes = (s: number): string => `${(s / 60).toFixed(1)} min`;
  if (r.test.type === 'bounded') {
    if (r.earlyStop)
      return `${who}: stopped early at ${minutes(r.earlyStop.atSec)} of ${minutes(r.test.durationSec)}${r.earlyStop.halfWidthPct !== undefined ? ` (the watched metric within ±${r.earlyStop.halfWidthPct}%)` : ''}`;
    return r.stableWindow.endSec < r.test.durationSec ? `${who}: ran ${minutes(r.stableWindow.endSec)} of ${minutes(r.test.durationSec)}` : undefined;
  }
  const c = r.capacity;
  if (!c) return undefined;
  const sure = c.halfWidthPct !== undefined ? ` ±${c.halfWidthPct}%` : '';
  const start = c.startSource === 'cold' ? 'cold start' : `started at ${c.startUsers} users (${c.startSource})`;
  const window = `measured ${Math.round(r.stableWindow.startSec)}-${Math.round(r.stableWindow.endSec)} s into its test${r.duet ? ` (slot ${r.duet.slot})` : ''}`;
  return `${who}: ${c.supportedUsers}${sure} supported users (${c.estimator}; load-test-ng's window mean ${c.windowMeanUsers}), ${start}, ${window}`;
}

/** The capacity graphs of an unbounded test: requests/s and API times against active users. */
export function capacityChartSpecs(
  testName: string,
  baseline: readonly RunResult[],
  candidate: readonly RunResult[],
): Array<{ slug: string; title: string; spec: TopLevelSpec }> {
  const first = baseline[0] ?? candidate[0];
  if (!first || first.test.type !== 'unbounded') return [];
  const charts: Array<{ slug: string; title: string; metric: SeriesKey; axis: string }> = [
    { slug: 'capacity-rps', title: 'Requests per second vs active users', metric: 'rps', axis: 'req/s' },
    { slug: 'capacity-api-avg', title: 'Avg API time vs active users', metric: 'apiAvgMs', axis: 'ms' },
    { slug: 'capacity-api-p99', title: 'P99 API time vs active users', metric: 'apiP99Ms', axis: 'ms' },
  ];
  const out: Array<{ slug: string; title: string; spec: TopLevelSpec }> = [];
  for (const chart of charts) {
    const data: Array<{ users: number; value: number; side: string }> = [];
    const knees: Array<{ users: number; side: string }> = [];
    for (const [side, runs] of [
      ['baseline', baseline],
      ['candidate', candidate],
    ] as const) {
      const label = `${runs[0]?.target.version ?? side} (${side})`;
      // Bucket by users (20 buckets up to the peak): a ramp visits each level many times.
      const points = runs.flatMap((r) => usersAndMetrics(r, STARTUP_SEC)).filter((p) => p.values[chart.metric] !== undefined);
      const peak = Math.max(0, ...points.map((p) => p.users));
      if (!peak) continue;
      const width = peak / 20;
      const buckets = new Map<number, { users: number; value: number; n: number }>();
      for (const p of points) {
        const b = Math.min(19, Math.floor(p.users / width));
        const e = buckets.get(b) ?? { users: 0, value: 0, n: 0 };
        e.users += p.users;
        e.value += p.values[chart.metric] as number;
        e.n++;
        buckets.set(b, e);
      }
      for (const [, e] of [...buckets].sort(([a], [b]) => a - b)) {
        data.push({ users: Math.round((e.users / e.n) * 10) / 10, value: Math.round((e.value / e.n) * 1000) / 1000, side: label });
      }
      const knee = meanSupported(runs);
      if (knee) knees.push({ users: Math.round(knee * 10) / 10, side: label });
    }
    if (!data.length) continue;
    const sides = [...new Set(data.map((d) => d.side))];
    const color = {
      field: 'side',
      type: 'nominal' as const,
      title: null,
      scale: { domain: sides, range: ['#1f77b4', '#e4572e'].slice(0, sides.length) },
      legend: { orient: 'top' as const, labelLimit: 400 },
    };
    out.push({
      slug: chart.slug,
      title: `${testName} ${chart.title}`,
      spec: {
        $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
        title: { text: `${chart.title} (${chart.axis})`, subtitle: `${testName}; dashed: supported users (knee)` },
        width: 520,
        height: 240,
        background: 'white',
        padding: 8,
        layer: [
          {
            data: { values: data },
            mark: { type: 'line', point: true, strokeWidth: 1.5 },
            encoding: {
              x: { field: 'users', type: 'quantitative', title: 'Active users' },
              y: { field: 'value', type: 'quantitative', title: chart.axis },
              color,
            },
          },
          { data: { values: knees }, mark: { type: 'rule', strokeDash: [4, 4] }, encoding: { x: { field: 'users', type: 'quantitative' }, color } },
        ],
        config: { font: 'DejaVu Sans', view: { stroke: '#ddd' } },
      },
    });
  }
  return out;
}
