import { z } from 'zod';
import { buildSchema, type BuildRecord, type RunResult } from './schema.ts';
import { creepSchema, historyViewSchema } from './creep-schema.ts';

/** `verdict.json`: the gate's decision and every check behind it. Read by the GitHub side. */
export const VERDICT_SCHEMA_VERSION = 3;

export const VERDICTS = ['pass', 'fail', 'inconclusive'] as const;
export type Verdict = (typeof VERDICTS)[number];

/** A check's own outcome; `warn` is a non-gating check beyond its tolerance. */
export const CHECK_OUTCOMES = ['pass', 'fail', 'inconclusive', 'warn'] as const;
export type CheckOutcome = (typeof CHECK_OUTCOMES)[number];

export const checkSchema = z.strictObject({
  id: z.string(),
  metric: z.string(),
  test: z.string(),
  baseline: z.number().nullable(),
  candidate: z.number().nullable(),
  unit: z.string(),
  deltaPct: z.number().nullable(),
  /** Interval on the % change, [low, high]; null when it could not be computed. */
  interval: z.tuple([z.number(), z.number()]).nullable(),
  /** How the interval was obtained. */
  method: z.enum(['sprt', 'noise-floor', 't-interval', 'poisson-rate', 'none']),
  /** Accepted change in the bad direction, in % (always positive). */
  tolerancePct: z.number(),
  /** Which direction is worse: "lower" for supported users, "higher" for latencies. */
  worse: z.enum(['lower', 'higher']),
  gating: z.boolean(),
  verdict: z.enum(CHECK_OUTCOMES),
  reason: z.string(),
  /**
   * When the noise model has a speed fit for this check (src/noise/speed.ts): either the
   * values were taken to one machine speed (baseline, candidate and deltaPct are then the
   * adjusted figures, the raw ones are here), or why they were not.
   */
  speed: z
    .discriminatedUnion('adjusted', [
      z.strictObject({
        adjusted: z.literal(true),
        /** d ln(value) / d ln(probe CPU ms), from the model. */
        slope: z.number(),
        /** The per-run noise the evidence implies, %: the fit's, updated by the runs' own pair differences. */
        sdPct: z.number().positive(),
        /** Each side's probe CPU time (geometric mean over its runs), ms. */
        baselineProbeMs: z.number().positive(),
        candidateProbeMs: z.number().positive(),
        rawBaseline: z.number(),
        rawCandidate: z.number(),
        rawDeltaPct: z.number(),
      }),
      z.strictObject({ adjusted: z.literal(false), why: z.string() }),
    ])
    .optional(),
  /**
   * A relative check's estimate where the gate stopped: ln(candidate/baseline), its standard
   * error and the degrees of freedom of its noise, which the history records and the creep
   * check chains.
   */
  estimate: z.strictObject({ logRatio: z.number(), se: z.number().nonnegative(), df: z.number().positive() }).optional(),
});
export type Check = z.output<typeof checkSchema>;

export const sideSchema = z.strictObject({
  version: z.string(),
  runs: z.number().int().nonnegative(),
  /** The build the side ran, when not a released version: a local wheel or source directory (path, SHA-256) or a build URL. */
  build: buildSchema.optional(),
});

/** The build a side's runs ran (they share one: a side's label names its build), as the verdict's side records it. */
export function sideBuild(runs: readonly Pick<RunResult, 'target'>[]): { build?: BuildRecord } {
  const build = runs.find((r) => r.target.build)?.target.build;
  return build ? { build } : {};
}

/** How the verdict was reached (src/compare/sequential.ts): the rule, the noise model, why it stopped. */
export const decisionSchema = z.strictObject({
  rule: z.literal('sprt'),
  /** The gate's false-fail budget at no change, over all gating checks (split by weight: see `detectable`). */
  alpha: z.number(),
  /** Each check's false-pass probability at its material regression. */
  beta: z.number(),
  gatingChecks: z.number().int().nonnegative(),
  noiseModel: z.strictObject({
    /** As the config names it (relative to the config); null: assumed from the tolerances. */
    path: z.string().nullable(),
    kind: z.enum(['measured', 'assumed']),
    measuredAt: z.string().optional(),
    n: z.number().int().nonnegative().optional(),
    /** "test.metric" entries of the model that are assumptions, and the checks it has no entry for. */
    assumed: z.array(z.string()),
    /** The config's gating checks the model has no entry for (added since it was measured): judged under the assumed prior. */
    notInModel: z.array(z.string()).optional(),
  }),
  /** Baseline/candidate pairs recorded (per test). */
  pairs: z.number().int().nonnegative(),
  minRepeats: z.number().int().positive(),
  maxRepeats: z.number().int().positive(),
  stopReason: z.string(),
  /** Inconclusive at maxRepeats: about how many more pairs would likely decide it. */
  suggestedMorePairs: z.number().int().positive().optional(),
  /**
   * Per gating check: its share of the false-fail budget, and (relative checks) the chance
   * it fails within maxRepeats pairs at a true change of its tolerance and of its material
   * regression, at the noise model's σ.
   */
  detectable: z.array(
    z.strictObject({
      metric: z.string(),
      test: z.string(),
      tolerancePct: z.number(),
      materialPct: z.number(),
      /** The check's weight and the false-fail probability it gets from the gate's budget. */
      weight: z.number().positive(),
      alpha: z.number().positive(),
      /** The noise model's per-run σ (%) and degrees of freedom the check was judged with. */
      sdPct: z.number().positive().optional(),
      priorDf: z.number().nonnegative().optional(),
      failAtTolerance: z.number().min(0).max(1).optional(),
      /** The chance it passes within maxRepeats at a true change of its tolerance; the rest end undecided. */
      passAtTolerance: z.number().min(0).max(1).optional(),
      probabilityFail: z.number().min(0).max(1).optional(),
    }),
  ),
});
export type Decision = z.output<typeof decisionSchema>;

export const verdictFileSchema = z.strictObject({
  schemaVersion: z.literal(VERDICT_SCHEMA_VERSION),
  verdict: z.enum(VERDICTS),
  /** One line saying why, for a check run title or a PR title. */
  summary: z.string(),
  baseline: sideSchema,
  candidate: sideSchema,
  /**
   * How the runs ran: sequential (one after the other) or duet (each baseline run at the
   * same time as the candidate run of its test and repeat). Absent in verdicts written before.
   */
  mode: z.enum(['sequential', 'duet']).optional(),
  /**
   * Duets the gate found disturbed (other work on the bench's CPUs above its limit), one line
   * each: recorded with the runs, judged by no check. Absent when there were none.
   */
  disturbed: z.array(z.string()).optional(),
  /** Why the gate could not judge (crashed runs, missing data); empty on pass/fail. */
  problems: z.array(z.string()),
  checks: z.array(checkSchema),
  /** "repeat": undecided below maxRepeats, another pair would help (a resumed run adds it). */
  next: z.enum(['stop', 'repeat']),
  decision: decisionSchema,
  /**
   * The gate config that judged: its path as given (--config) and a sha256 of its bytes, so
   * a verdict can be traced to the exact file. Absent without a config (the defaults), and
   * in verdicts written before.
   */
  config: z.strictObject({ path: z.string(), sha256: z.string().regex(/^[0-9a-f]{64}$/) }).optional(),
  /** The creep check (the config's `creep.anchor`): the change since the anchor release. Absent when not configured. */
  creep: creepSchema.optional(),
  /** Each gating check's series over the recorded releases, with Otava's change points. Absent without a history. */
  history: historyViewSchema.optional(),
});
export type VerdictFile = z.output<typeof verdictFileSchema>;

export const EXIT_CODES = { pass: 0, fail: 1, inconclusive: 2, badInput: 3 } as const;
