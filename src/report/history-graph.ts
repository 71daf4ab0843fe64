import type { TopLevelSpec } from 'vega-lite';
import type { HistoryView } from '../results/creep-schema.ts';
import type { VerdictFile } from '../results/verdict-schema.ts';
import { FONT_FAMILY, renderPng, type RenderedGraph } from './graphs.ts';

/**
 * Each gating check's series over the recorded releases: the change since the line's first
 * release at every release, chained, with its interval (which widens as the steps' variances
 * add up), the anchor and the releases where Otava found a shift. Vega-Lite, rendered by
 * resvg like every graph of the report.
 */

type Series = HistoryView['series'][number];

const slug = (id: string) => id.replace(/[^A-Za-z0-9_-]/g, '-');

export function historyGraphFile(id: string): string {
  return `graphs/history_${slug(id)}.png`;
}

export function historyChartSpec(series: Series, anchor: string | null): TopLevelSpec {
  const rows = series.points.map((p, i) => ({ i, release: p.release, delta: round(p.deltaPct), low: round(p.interval[0]), high: round(p.interval[1]) }));
  const order = rows.map((r) => r.release);
  const x = { field: 'release', type: 'ordinal' as const, sort: order, title: 'Release', axis: { labelAngle: -30 } };
  const marks = [
    ...series.changePoints.map((c) => ({ release: c.release, label: `shift ${c.changePct >= 0 ? '+' : '−'}${Math.abs(c.changePct).toFixed(1)} %` })),
    ...(anchor && order.includes(anchor) ? [{ release: anchor, label: 'anchor' }] : []),
  ];
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: `${series.metric}: change since ${order[0] ?? ''} (%)`, subtitle: `${series.test}; bars: interval, chained through the recorded steps` },
    width: 520,
    height: 240,
    background: 'white',
    padding: 8,
    layer: [
      ...(marks.length
        ? [
            { data: { values: marks }, mark: { type: 'rule' as const, color: '#bbbbbb', strokeDash: [4, 3] }, encoding: { x } },
            {
              data: { values: marks },
              mark: { type: 'text' as const, align: 'left' as const, dx: 3, dy: 6, color: '#777', fontSize: 10 },
              encoding: { x, y: { value: 0 }, text: { field: 'label' } },
            },
          ]
        : []),
      {
        data: { values: rows },
        mark: { type: 'rule' as const, color: '#1f77b4' },
        encoding: { x, y: { field: 'low', type: 'quantitative' as const, title: '% since the first release' }, y2: { field: 'high' } },
      },
      {
        data: { values: rows },
        mark: { type: 'line' as const, point: true, color: '#1f77b4' },
        encoding: { x, y: { field: 'delta', type: 'quantitative' as const } },
      },
    ],
    config: { font: FONT_FAMILY, view: { stroke: '#ddd' } },
  };
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/** One graph per gating check with a series of at least two releases. */
export async function renderHistoryGraphs(verdict: VerdictFile): Promise<RenderedGraph[]> {
  const out: RenderedGraph[] = [];
  for (const s of verdict.history?.series ?? []) {
    if (s.points.length < 2) continue;
    out.push({
      file: historyGraphFile(s.id),
      title: `${s.test} ${s.metric} since ${s.points[0]?.release}`,
      png: await renderPng(historyChartSpec(s, verdict.creep?.anchor ?? null)),
    });
  }
  return out;
}
