import { z } from 'zod';

/**
 * What verdict.json says of the releases before this one: the creep check (the cumulative
 * change from an anchor release to the candidate, src/compare/creep.ts) and the series of
 * each gating check over the recorded releases with the change points Apache Otava found
 * in it (src/history). Declared apart from the verdict so the history and the report read
 * them without the verdict's other parts.
 */

const outcome = z.enum(['pass', 'fail', 'inconclusive']);

export const creepCheckSchema = z.strictObject({
  id: z.string(),
  metric: z.string(),
  test: z.string(),
  worse: z.enum(['lower', 'higher']),
  /** The cumulative change since the anchor, %; null when it could not be formed. */
  deltaPct: z.number().nullable(),
  interval: z.tuple([z.number(), z.number()]).nullable(),
  /** chained: the recorded steps' log ratios added; direct: one anchor-against-candidate duet (or pair); none: neither. */
  method: z.enum(['chained', 'direct', 'none']),
  verdict: outcome,
  reason: z.string(),
});
export type CreepCheck = z.output<typeof creepCheckSchema>;

export const creepSchema = z.strictObject({
  /** The config's `creep.anchor`, as written: a release, or a pattern. */
  setting: z.string(),
  /** The release the change is measured from; null when no release matches the setting. */
  anchor: z.string().nullable(),
  /** pass / fail / inconclusive, or skipped: nothing to judge (no anchor, or the anchor is the baseline). */
  verdict: z.enum(['pass', 'fail', 'inconclusive', 'skipped']),
  /** One line for the check run and the report: "each step passed; the change since 10.11.0 is −11 %". */
  line: z.string(),
  /** The releases the chain runs through, anchor first and the candidate last; empty without a recorded path. */
  chain: z.array(z.string()),
  /** The direct measurement, when the chain could not decide: its pairs and its report directory (relative to this one). */
  direct: z.strictObject({ pairs: z.number().int().nonnegative(), report: z.string(), verdict: outcome }).optional(),
  /** Each stage (the chain, then the direct duet) keeps half of each rate, so the creep check keeps them whole. */
  alpha: z.number(),
  beta: z.number(),
  checks: z.array(creepCheckSchema),
});
export type Creep = z.output<typeof creepSchema>;

const seriesPointSchema = z.strictObject({
  release: z.string(),
  /** The change since the series' first release, % (chained), with its interval at the config's confidence. */
  deltaPct: z.number(),
  interval: z.tuple([z.number(), z.number()]),
});

const changePointSchema = z.strictObject({
  /** The release from which the level differs, and the one before it. */
  release: z.string(),
  previous: z.string(),
  /** The shift in the level, % (Otava's forward change). */
  changePct: z.number(),
  pValue: z.number(),
});

export const historyViewSchema = z.strictObject({
  /** The history folder the gate read. */
  source: z.string(),
  /** Records read (every release pair gated so far, this gate's included). */
  records: z.number().int().nonnegative(),
  /** Releases along the candidate's line, oldest first. */
  releases: z.array(z.string()),
  series: z.array(
    z.strictObject({
      id: z.string(),
      metric: z.string(),
      test: z.string(),
      worse: z.enum(['lower', 'higher']),
      points: z.array(seriesPointSchema),
      changePoints: z.array(changePointSchema),
    }),
  ),
  /** Apache Otava's version, or why change points were not looked for. */
  otava: z.union([z.strictObject({ version: z.string(), maxPValue: z.number() }), z.strictObject({ unavailable: z.string() })]),
});
export type HistoryView = z.output<typeof historyViewSchema>;
