import { z } from 'zod';
import { benchFingerprintSchema, type BenchFingerprint } from '../results/schema.ts';
import type { Creep } from '../results/creep-schema.ts';
import type { VerdictFile } from '../results/verdict-schema.ts';

/**
 * One line of the history: what one gate found, enough to chain its steps and draw its
 * series without its report. Strict, like every format loadgate reads: a field it does not
 * know is refused, not ignored.
 */
export const HISTORY_KIND = 'loadgate-history';
export const HISTORY_SCHEMA_VERSION = 1;

const outcome = z.enum(['pass', 'fail', 'inconclusive']);

export const historyCheckSchema = z.strictObject({
  /** "test.metric", as verdict.json's checks name it. */
  id: z.string().min(1),
  metric: z.string().min(1),
  test: z.string().min(1),
  worse: z.enum(['lower', 'higher']),
  gating: z.boolean(),
  tolerancePct: z.number().nonnegative(),
  /** ln(candidate/baseline) where the gate stopped, its standard error, and its noise's degrees of freedom. */
  logRatio: z.number(),
  se: z.number().positive(),
  df: z.number().positive(),
});
export type HistoryCheck = z.output<typeof historyCheckSchema>;

export const historyRecordSchema = z.strictObject({
  kind: z.literal(HISTORY_KIND),
  schemaVersion: z.literal(HISTORY_SCHEMA_VERSION),
  /** The chat server (target.system). */
  product: z.string().min(1),
  /** The gate config's name: the profile whose bench, tests and tolerances the steps share. */
  profile: z.string().min(1),
  bench: benchFingerprintSchema,
  mode: z.enum(['sequential', 'duet']),
  baseline: z.string().min(1),
  candidate: z.string().min(1),
  /** When the gate judged (ISO 8601). */
  date: z.iso.datetime({ offset: true }),
  verdict: outcome,
  pairs: z.number().int().nonnegative(),
  checks: z.array(historyCheckSchema),
  /** The gate's creep check, when it had one. */
  creep: z.strictObject({ anchor: z.string(), verdict: z.enum(['pass', 'fail', 'inconclusive', 'skipped']), line: z.string() }).optional(),
  /** The gate's report: a path relative to the history folder, or its URL. */
  report: z.string().min(1),
});
export type HistoryRecord = z.output<typeof historyRecordSchema>;

/** What a record takes beyond the verdict. */
export interface RecordContext {
  product: string;
  profile: string;
  bench: BenchFingerprint;
  date: string;
  report: string;
}

/**
 * The record of a gate from its verdict: each relative check with an estimate (rates are
 * judged against their healthy level and are not chained).
 */
export function recordOf(verdict: VerdictFile, ctx: RecordContext): HistoryRecord {
  const checks = verdict.checks.flatMap((c) =>
    c.estimate && c.estimate.se > 0
      ? [
          {
            id: c.id,
            metric: c.metric,
            test: c.test,
            worse: c.worse,
            gating: c.gating,
            tolerancePct: c.tolerancePct,
            logRatio: c.estimate.logRatio,
            se: c.estimate.se,
            df: c.estimate.df,
          },
        ]
      : [],
  );
  return historyRecordSchema.parse({
    kind: HISTORY_KIND,
    schemaVersion: HISTORY_SCHEMA_VERSION,
    product: ctx.product,
    profile: ctx.profile,
    bench: ctx.bench,
    mode: verdict.mode ?? 'sequential',
    baseline: verdict.baseline.version,
    candidate: verdict.candidate.version,
    date: ctx.date,
    verdict: verdict.verdict,
    pairs: verdict.decision.pairs,
    checks,
    ...(verdict.creep && verdict.creep.anchor ? { creep: creepOf(verdict.creep) } : {}),
    report: ctx.report,
  });
}

function creepOf(creep: Creep): NonNullable<HistoryRecord['creep']> {
  return { anchor: creep.anchor as string, verdict: creep.verdict, line: creep.line };
}
