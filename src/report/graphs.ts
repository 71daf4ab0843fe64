import { existsSync } from 'node:fs';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { RunResult, Series, SeriesKey } from '../results/schema.ts';
import { capacityChartSpecs } from './capacity-curve.ts';
import { svgToPng } from './resvg.ts';

/**
 * The graph grid of the seed reports, drawn by loadgate: one PNG per metric per test,
 * baseline and candidate overlaid (every repeat a line), x axis in minutes since start.
 * Vega-Lite → SVG (vega's headless renderer) → PNG (resvg), with a fixed font file so
 * the same inputs give byte-identical images.
 */

export interface GraphDef {
  key: SeriesKey;
  /** File name part, as in the seed reports: `<test>_<repeat>_<slug>.png`. */
  slug: string;
  title: string;
  axis: string;
  scale?: number;
}

export const GRAPHS: readonly GraphDef[] = [
  { key: 'apiAvgMs', slug: 'avg-api-times', title: 'Avg API times', axis: 'ms' },
  { key: 'apiP99Ms', slug: 'p99-api-times', title: 'P99 API times', axis: 'ms' },
  { key: 'storeAvgMs', slug: 'avg-store-times', title: 'Avg store times', axis: 'ms' },
  { key: 'storeP99Ms', slug: 'p99-store-times', title: 'P99 store times', axis: 'ms' },
  { key: 'cpuPercent', slug: 'cpu-utilization', title: 'CPU utilization', axis: '%' },
  { key: 'threads', slug: 'goroutines-in-use', title: 'Goroutines / threads in use', axis: 'count' },
  { key: 'heapInUseBytes', slug: 'heap-in-use', title: 'Heap in use', axis: 'MiB', scale: 1 / 1048576 },
  { key: 'connectedUsers', slug: 'number-of-connected-devices', title: 'Connected users', axis: 'users' },
  { key: 'rps', slug: 'rps', title: 'Requests per second', axis: 'req/s' },
  { key: 'stackInUseBytes', slug: 'stack-in-use', title: 'Stack in use', axis: 'MiB', scale: 1 / 1048576 },
];

export const FONT_FILE = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';
export const FONT_FAMILY = 'DejaVu Sans';
const MAX_POINTS_PER_LINE = 300;
const COLORS = { baseline: '#1f77b4', candidate: '#e4572e' } as const;

/** Averages consecutive points into at most `max` buckets; charts gain nothing past that. */
function downsample(series: Series, max: number): { t: number[]; v: number[] } {
  const n = series.t.length;
  if (n <= max) return { t: series.t, v: series.v };
  const t: number[] = [];
  const v: number[] = [];
  for (let bucket = 0; bucket < max; bucket++) {
    const from = Math.floor((bucket * n) / max);
    const to = Math.floor(((bucket + 1) * n) / max);
    let st = 0;
    let sv = 0;
    for (let i = from; i < to; i++) {
      st += series.t[i] as number;
      sv += series.v[i] as number;
    }
    t.push(st / (to - from));
    v.push(sv / (to - from));
  }
  return { t, v };
}

interface Row {
  minute: number;
  value: number;
  line: string;
  side: string;
}

function rows(def: GraphDef, runs: readonly RunResult[], side: 'baseline' | 'candidate'): Row[] {
  const out: Row[] = [];
  for (const run of runs) {
    const series = run.series[def.key];
    if (!series) continue;
    const { t, v } = downsample(series, MAX_POINTS_PER_LINE);
    const label = `${run.target.version} (${side})`;
    const line = `${label} #${run.repeat}`;
    for (let i = 0; i < t.length; i++) {
      out.push({
        minute: Math.round(((t[i] as number) / 60) * 1000) / 1000,
        value: Math.round((v[i] as number) * (def.scale ?? 1) * 1000) / 1000,
        line,
        side: label,
      });
    }
  }
  return out;
}

/**
 * Where the ramp-up ends, in minutes: the earliest start of a run's measured (stable) window,
 * so the shaded band is outside every run's measurements. Undefined when none starts later than 0.
 */
export function rampUpEndMinute(runs: readonly RunResult[]): number | undefined {
  const starts = runs.map((r) => r.stableWindow.startSec).filter((s) => s > 0);
  return starts.length ? Math.min(...starts) / 60 : undefined;
}

const X_TITLE = 'Minutes since start';

/** A grey band over the ramp-up, labelled, drawn under the lines. */
function rampUpLayers(endMinute: number): NonNullable<Extract<TopLevelSpec, { layer: unknown }>['layer']> {
  const data = { values: [{ from: 0, to: endMinute, label: 'ramp-up' }] };
  return [
    {
      data,
      mark: { type: 'rect', color: '#ececec' },
      encoding: { x: { field: 'from', type: 'quantitative', title: X_TITLE }, x2: { field: 'to' } },
    },
    {
      data,
      mark: { type: 'text', align: 'left', baseline: 'top', dx: 3, dy: 3, color: '#777', fontSize: 10 },
      encoding: { x: { field: 'from', type: 'quantitative', title: X_TITLE }, y: { value: 0 }, text: { field: 'label' } },
    },
  ];
}

export function chartSpec(def: GraphDef, testName: string, baseline: readonly RunResult[], candidate: readonly RunResult[]): TopLevelSpec | undefined {
  const data = [...rows(def, baseline, 'baseline'), ...rows(def, candidate, 'candidate')];
  if (!data.length) return undefined;
  const bLabel = baseline[0] ? `${baseline[0].target.version} (baseline)` : 'baseline';
  const cLabel = candidate[0] ? `${candidate[0].target.version} (candidate)` : 'candidate';
  const rampUp = rampUpEndMinute([...baseline, ...candidate]);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: `${def.title} (${def.axis})`, subtitle: testName },
    width: 520,
    height: 240,
    background: 'white',
    padding: 8,
    layer: [
      ...(rampUp === undefined ? [] : rampUpLayers(rampUp)),
      {
        data: { values: data },
        mark: { type: 'line', strokeWidth: 1.5, interpolate: 'linear' },
        encoding: {
          x: { field: 'minute', type: 'quantitative', title: X_TITLE },
          y: { field: 'value', type: 'quantitative', title: def.axis },
          color: {
            field: 'side',
            type: 'nominal',
            title: null,
            scale: { domain: [bLabel, cLabel], range: [COLORS.baseline, COLORS.candidate] },
            legend: { orient: 'top', labelLimit: 400 },
          },
          detail: { field: 'line', type: 'nominal' },
        },
      },
    ],
    config: { font: FONT_FAMILY, view: { stroke: '#ddd' } },
  };
}

export async function renderPng(spec: TopLevelSpec): Promise<Buffer> {
  if (!existsSync(FONT_FILE)) {
    throw new Error(`graph font ${FONT_FILE} is missing: install it with "apt-get install fonts-dejavu-core"`);
  }
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await svgToPng(await view.toSVG(), { zoom: 1.5, fontFile: FONT_FILE, fontFamily: FONT_FAMILY });
  } finally {
    view.finalize();
  }
}

export interface RenderedGraph {
  file: string;
  title: string;
  png: Buffer;
}

/** The grid for one test; metrics with no data on either side are skipped. */
export async function renderTestGraphs(testName: string, baseline: readonly RunResult[], candidate: readonly RunResult[]): Promise<RenderedGraph[]> {
  const out: RenderedGraph[] = [];
  for (const def of GRAPHS) {
    const spec = chartSpec(def, testName, baseline, candidate);
    if (!spec) continue;
    out.push({ file: `graphs/${testName}_${def.slug}.png`, title: `${testName} ${def.title}`, png: await renderPng(spec) });
  }
  for (const c of capacityChartSpecs(testName, baseline, candidate))
    out.push({ file: `graphs/${testName}_${c.slug}.png`, title: c.title, png: await renderPng(c.spec) });
  return out;
}
