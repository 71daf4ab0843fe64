import { z } from 'zod';

/**
 * A noise model file: for one bench profile, the per-run standard deviation of the log
 * of each gating metric, with where it came from. The gate config points at it
 * (`noiseModel:`); `loadgate calibrate` writes it and every gate with repeats refines it.
 */
export const NOISE_MODEL_SCHEMA_VERSION = 1;

const NOISE_KINDS = ['measured', 'assumed'] as const;

/**
 * The metric's noise once adjusted for the machine's speed (src/noise/speed.ts): ln(value)
 * moves by `slope` per unit of ln(probe CPU ms), and `sdLog` is the spread left around
 * that line. Fitted by least squares with one intercept per side and one shared slope.
 * `sxx` (the probe's sum of squares behind the slope) is kept so that later runs pool
 * exactly: the slope's variance is sdLog²/sxx.
 */
export const speedFitSchema = z.strictObject({
  /** The probe workload's name without the interpreter (SPEED_PROBE_WORKLOAD). */
  workload: z.string().min(1),
  slope: z.number().min(-5).max(5),
  sxx: z.number().positive(),
  sdLog: z.number().positive().max(2),
  runs: z.number().int().positive(),
  df: z.number().int().positive(),
  source: z.string().min(1),
  /**
   * Lowest and highest probe time (a run's median CPU ms) among the runs behind the fit:
   * the line is only known between them. Optional, so fits written before it still read;
   * without it the decision cannot check the runs' speeds against the fit's.
   */
  probeMs: z
    .strictObject({ min: z.number().positive(), max: z.number().positive() })
    .refine((r) => r.min <= r.max, { message: 'min must not exceed max' })
    .optional(),
  /**
   * The host every run behind the fit ran on (the runs' bench fingerprint): how the metric
   * follows the probe depends on the machine. Absent when the runs named none, or several.
   */
  machine: z.strictObject({ cpuModel: z.string().min(1), cores: z.number().int().positive() }).optional(),
});
export type SpeedFit = z.output<typeof speedFitSchema>;

/**
 * A duet bench's slot effect on one metric, measured by duets run in both orientations:
 * `logRatio` is ln(value in slot a / value in slot b) for the same build, fitted by least
 * squares beside the change between the sides; `sd` its standard error. `sxx` (the
 * orientations' sum of squares around their mean) and `df` (the fit's residual degrees of
 * freedom) are kept so that later duets pool exactly.
 */
export const slotEffectSchema = z.strictObject({
  logRatio: z.number().min(-2).max(2),
  sd: z.number().positive().max(2),
  sxx: z.number().positive(),
  df: z.number().int().positive(),
  duets: z.number().int().min(3),
});
export type SlotEffect = z.output<typeof slotEffectSchema>;

export const noiseEntrySchema = z
  .strictObject({
    test: z.string().min(1),
    /** A metric key of the tolerances (supportedUsers, apiAvg, errorRate…). */
    metric: z.string().min(1),
    /** Per-run standard deviation of ln(value); 0.03 is about 3 % run to run. */
    sdLog: z.number().positive().max(2),
    /** Runs behind the estimate, and its degrees of freedom (0 for an assumption). */
    runs: z.number().int().nonnegative(),
    df: z.number().nonnegative(),
    kind: z.enum(NOISE_KINDS),
    versions: z.array(z.string()),
    measuredAt: z.string().optional(),
    /** Where the figure came from, in words. */
    source: z.string().min(1),
    /** Present when runs with the local bench's speed probe measured how the metric follows the machine's speed. */
    speed: speedFitSchema.optional(),
    /** Duet models: the bench's slot effect, when A/A duets in both orientations measured it. */
    slotEffect: slotEffectSchema.optional(),
  })
  .refine((e) => !e.speed || e.kind === 'measured', {
    message: 'speed: only a measured entry can hold a speed fit (its noise around the fit is a measurement too)',
    path: ['speed'],
  });
export type NoiseEntry = z.output<typeof noiseEntrySchema>;

export const noiseProfileSchema = z.strictObject({
  /** The gate config's `name`. */
  name: z.string().min(1),
  /** sha256 (first 16 hex) of the config's tests and gating metric set; see profile.ts. */
  hash: z.string().regex(/^[0-9a-f]{16}$/),
  /** The gating checks, "test.metric", sorted. */
  metrics: z.array(z.string()),
  /**
   * sha256 (first 16 hex) of each test's shape, by test name: which test differs when the
   * hash does. Optional, so models written before it still read.
   */
  tests: z.record(z.string(), z.string().regex(/^[0-9a-f]{16}$/)).optional(),
  /**
   * The bench the runs ran on: its kind and hardware (the AWS preset and any instance
   * type or count the config sets; the local bench's CPU lists). Optional, so models
   * written before it still read; a model that has it is refused on another bench.
   */
  bench: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
});
export type NoiseProfile = z.output<typeof noiseProfileSchema>;

/**
 * Where an unbounded test's search may start on a bench with no run of its own yet (every
 * AWS gate, a first local gate): the supported users per side (duet) or per run that
 * calibrations measured, or an assumption from the seed reports, with the machine's speed
 * when it was measured. A start hint only places the start: a wrong one costs time, not
 * accuracy.
 */
export const capacityEntrySchema = z.strictObject({
  test: z.string().min(1),
  users: z.number().positive(),
  kind: z.enum(NOISE_KINDS),
  /** Converged runs behind a measured figure (0 for an assumption). */
  runs: z.number().int().nonnegative(),
  /** The set-up speed probe's median CPU ms on the machine the runs ran on (the local bench's runs record it). */
  probe: z.strictObject({ workload: z.string().min(1), cpuMs: z.number().positive() }).optional(),
  source: z.string().min(1),
});
export type CapacityEntry = z.output<typeof capacityEntrySchema>;

export const noiseModelFileSchema = z.strictObject({
  $comment: z.string().optional(),
  schemaVersion: z.literal(NOISE_MODEL_SCHEMA_VERSION),
  profile: noiseProfileSchema,
  /**
   * How the runs behind it ran (the config's `mode`): absent or sequential, each entry's sdLog
   * is one run's; duet, it is one duet's log ratio of the two sides. A gate in the other mode
   * refuses the model.
   */
  mode: z.enum(['sequential', 'duet']).optional(),
  updatedAt: z.string().optional(),
  entries: z.array(noiseEntrySchema).min(1),
  /** Per unbounded test, where a first gate's search starts (capacityEntrySchema). */
  capacity: z.array(capacityEntrySchema).optional(),
});
export type NoiseModelFile = z.output<typeof noiseModelFileSchema>;
