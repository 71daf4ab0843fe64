import type { HistoryView } from '../results/creep-schema.ts';
import { normalQuantile } from '../util/stats.ts';
import { chainCheck, lineOf } from './chain.ts';
import { otavaChangePoints, OTAVA_MAX_PVALUE, type OtavaAnswer } from './otava.ts';
import type { HistoryRecord } from './record.ts';

/**
 * Each gating check's series along the candidate's line: its level at every release as
 * the change since the line's first release, chained through the recorded steps, with an
 * interval that widens release by release (the steps' variances add), and the releases
 * where Otava finds the level shifted.
 */

export interface SeriesOptions {
  /** The history folder, as the verdict names it. */
  source: string;
  confidence: number;
  /** Otava's interpreter (otavaPython). */
  python: string;
}

/** The series of the gating checks the last step measured, without change points. */
export function seriesOf(records: readonly HistoryRecord[], candidate: string, confidence: number): Pick<HistoryView, 'releases' | 'series'> {
  const line = lineOf(records, candidate);
  const last = line[line.length - 1];
  if (!last) return { releases: [], series: [] };
  const releases = [(line[0] as HistoryRecord).baseline, ...line.map((r) => r.candidate)];
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const series = last.checks
    .filter((c) => c.gating)
    .map((c) => {
      const points = [{ release: releases[0] as string, deltaPct: 0, interval: [0, 0] as [number, number] }];
      for (let k = 1; k <= line.length; k++) {
        const chained = chainCheck(line.slice(0, k), c.id);
        if ('missing' in chained) break;
        const half = z * Math.sqrt(chained.variance);
        const pct = (x: number) => Math.expm1(x) * 100;
        points.push({
          release: releases[k] as string,
          deltaPct: pct(chained.logRatio),
          interval: [pct(chained.logRatio - half), pct(chained.logRatio + half)],
        });
      }
      return {
        id: c.id,
        metric: c.metric,
        test: c.test,
        worse: c.worse,
        points,
        changePoints: [] as HistoryView['series'][number]['changePoints'],
        tolerancePct: c.tolerancePct,
      };
    })
    .filter((s) => s.points.length > 1);
  return { releases, series: series.map(({ tolerancePct: _t, ...s }) => s) };
}

/** Otava needs a few releases on each side of a shift to call it one. */
const MIN_RELEASES_FOR_CHANGE_POINTS = 4;

/** The history as verdict.json shows it: the series, and Otava's change points in each. */
export async function historyView(records: readonly HistoryRecord[], candidate: string, options: SeriesOptions): Promise<HistoryView> {
  const { releases, series } = seriesOf(records, candidate, options.confidence);
  const tolerance = new Map(records.flatMap((r) => r.checks.map((c) => [c.id, c.tolerancePct] as const)));
  const base = { source: options.source, records: records.length, releases, series };
  const asked = series.filter((s) => s.points.length >= MIN_RELEASES_FOR_CHANGE_POINTS);
  if (!asked.length)
    return {
      ...base,
      otava: { unavailable: `fewer than ${MIN_RELEASES_FOR_CHANGE_POINTS} releases on the candidate's line: too short a series to look for change points` },
    };
  const answer = await otavaChangePoints(
    options.python,
    asked.map((s) => ({ id: s.id, values: s.points.map((p) => 1 + p.deltaPct / 100), minMagnitude: (tolerance.get(s.id) ?? 0) / 100 })),
  );
  if ('unavailable' in answer) return { ...base, otava: answer };
  return {
    ...base,
    series: series.map((s) => ({
      ...s,
      changePoints: changePointsOf(
        s.points.map((p) => p.release),
        answer,
        s.id,
      ),
    })),
    otava: { version: answer.version, maxPValue: OTAVA_MAX_PVALUE },
  };
}

function changePointsOf(releases: readonly string[], answer: OtavaAnswer, id: string): HistoryView['series'][number]['changePoints'] {
  return (answer.changePoints[id] ?? [])
    .filter((c) => c.index > 0 && c.index < releases.length)
    .map((c) => ({ release: releases[c.index] as string, previous: releases[c.index - 1] as string, changePct: c.changePct, pValue: c.pValue }));
}
