import { z } from 'zod';
import { storedProfileSchema } from './profile.ts';

/**
 * Run results: one JSON file per test run, written by every bench and read by `compare`.
 * Bump RUN_RESULT_SCHEMA_VERSION on any change a reader of the old format would misread;
 * readers refuse other versions with a message naming the file.
 */
export const RUN_RESULT_SCHEMA_VERSION = 1;

const finite = z.number().refine(Number.isFinite, 'expected a finite number');
const nonNegative = finite.refine((n) => n >= 0, 'expected a number >= 0');

/** A time series at fixed or irregular resolution: `t` seconds since the run started, `v` values. */
export const seriesSchema = z
  .strictObject({
    unit: z.enum(['percent', 'bytes', 'count', 'ms', 'rps', 'users']),
    t: z.array(nonNegative).min(1, 'a series needs at least one point; omit the series when it was not measured'),
    v: z.array(finite),
  })
  .refine((s) => s.t.length === s.v.length, { message: 't and v must have the same length', path: ['v'] })
  .refine((s) => s.t.every((x, i) => i === 0 || x > (s.t[i - 1] as number)), {
    message: 't must be strictly increasing',
    path: ['t'],
  });
export type Series = z.output<typeof seriesSchema>;

/**
 * The graph grid of the seed reports, one series each. `threads` is goroutines for
 * Go targets (Mattermost) and OS threads for others (Synapse).
 */
const SERIES_KEYS = [
  'apiAvgMs',
  'apiP99Ms',
  'storeAvgMs',
  'storeP99Ms',
  'cpuPercent',
  'threads',
  'heapInUseBytes',
  'connectedUsers',
  'rps',
  'stackInUseBytes',
  // The capacity curve's per-level columns: API median and p95, client error %.
  'apiP50Ms',
  'apiP95Ms',
  'errorPercent',
] as const;
export type SeriesKey = (typeof SERIES_KEYS)[number];

const timingSchema = z.strictObject({
  name: z.string().min(1),
  count: nonNegative,
  avgMs: nonNegative,
  p99Ms: nonNegative,
});
export type Timing = z.output<typeof timingSchema>;

/**
 * Version labels and test names end up in file names, markdown, branch names and check
 * runs, so they are restricted to characters that are safe in all of those.
 */
const label = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/, 'expected 1-64 letters, digits, ".", "_", "+" or "-"');

const boundedParams = z.strictObject({
  type: z.literal('bounded'),
  name: label,
  users: z.number().int().positive(),
  rampUpSec: nonNegative,
  durationSec: z.number().positive(),
});

const unboundedParams = z.strictObject({
  type: z.literal('unbounded'),
  name: label,
  maxUsers: z.number().int().positive(),
  /** Absent when the coordinator started from 0 users. */
  initialUsers: z.number().int().positive().optional(),
  usersIncrement: z.number().int().positive(),
  usersDecrement: z.number().int().positive(),
  restSec: nonNegative,
  stabilityWindowSec: z.number().positive(),
  maxDurationSec: z.number().positive(),
  health: z.array(z.strictObject({ name: z.string(), query: z.string(), threshold: finite })),
});

/** The speed probe's summary (src/bench/local/speed-probe.ts): CPU ms of a fixed workload. */
const speedProbeSchema = z.strictObject({
  /** Probe times of different workloads do not compare. */
  workload: z.string().min(1),
  samples: z.number().int().positive(),
  cpuMsMedian: z.number().positive(),
  cpuMsMin: z.number().positive(),
  cpuMsMax: z.number().positive(),
});

export const benchFingerprintSchema = z.strictObject({
  kind: z.enum(['local', 'aws']),
  /** Local bench: the host; AWS bench: absent. */
  host: z
    .strictObject({
      cpuModel: z.string(),
      cores: z.number().int().positive(),
      kernel: z.string(),
      memoryBytes: nonNegative,
    })
    .optional(),
  /** AWS bench: role → "2 x c7i.2xlarge". */
  instances: z.record(z.string(), z.string()).optional(),
  /**
   * Local bench: the machine's speed at set-up, before any load (the speed probe on the
   * target's cores, workload `…@setup`): what scales the profile's calibrated capacity to
   * this machine, and what a calibration records beside the capacity it measures.
   */
  setupProbe: speedProbeSchema.optional(),
  /** Component → version, e.g. { engine: "k6 v1.4.2", database: "PostgreSQL 15.14" }. */
  versions: z.record(z.string(), z.string()),
  dataset: z.string().optional(),
});
export type BenchFingerprint = z.output<typeof benchFingerprintSchema>;

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'expected a SHA-256 in hex');

/**
 * A side run from a build rather than a released version (src/chat-servers/build-source.ts): a
 * local Synapse wheel or source directory with its content hash, or a Mattermost build URL.
 */
export const buildSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.enum(['wheel', 'source']), path: z.string().min(1), sha256, version: z.string().min(1) }),
  z.strictObject({ kind: z.literal('url'), url: z.string().url(), sha256 }),
]);
export type BuildRecord = z.output<typeof buildSchema>;

export const runResultSchema = z.strictObject({
  $schema: z.string().optional(),
  schemaVersion: z.literal(RUN_RESULT_SCHEMA_VERSION),
  /** Where the numbers come from; "reconstructed" files are rebuilt from published reports. */
  provenance: z.strictObject({ kind: z.enum(['measured', 'reconstructed']), note: z.string().optional() }),
  target: z.strictObject({
    system: label,
    version: label,
    /**
     * The fraction of the target cores a cgroup CPU quota left this run (--baseline-cpu-quota,
     * --candidate-cpu-quota): a deliberately slowed target, kept in the result so a resume, a
     * re-compare or a warm-start hint never takes it for an unrestricted one.
     */
    cpuQuota: z.number().gt(0).max(1).optional(),
    /** The build this side ran, when not a released version; `version` is then its label. */
    build: buildSchema.optional(),
  }),
  test: z.discriminatedUnion('type', [boundedParams, unboundedParams]),
  repeat: z.number().int().nonnegative(),
  /**
   * A duet run (mode: duet): the bench slot it ran in, at the same time as the other side's
   * run of the same test and repeat in the other slot, and the share of the target CPUs its
   * CPU utilisation is measured against.
   */
  duet: z.strictObject({ slot: z.enum(['a', 'b']), cpuShare: z.number().gt(0).max(1) }).optional(),
  startedAt: z.iso.datetime(),
  /**
   * When the test's first step ran (after settling and, in a duet, the meeting of both
   * sides): `stableWindow` counts from here, so a duet's two windows compare in wall-clock time.
   */
  testStartedAt: z.iso.datetime().optional(),
  finishedAt: z.iso.datetime(),
  /**
   * completed: ran to its end. crashed: the target or a component died. aborted: stopped
   * by the user or a timeout. invalid: ran, but the numbers cannot be trusted (e.g. the
   * load generator saturated). Only `completed` runs are judged.
   */
  status: z.enum(['completed', 'crashed', 'aborted', 'invalid']),
  problems: z.array(z.string()).default([]),
  /** Unbounded: users supported at equilibrium (mean over the stability window). */
  supportedUsers: nonNegative.optional(),
  converged: z.boolean().optional(),
  /**
   * Unbounded: how supportedUsers was estimated and how sure it is. Optional, so
   * results written before it still read. The decision rule's noise model may use
   * halfWidthPct / sdPct as the run's own uncertainty.
   */
  capacity: z
    .strictObject({
      estimator: z.enum(['window-mean', 'hold-mean']),
      supportedUsers: nonNegative,
      /** load-test-ng's definition (mean users over the last stability window), for past reports. */
      windowMeanUsers: nonNegative,
      /** 95 % confidence half-width of supportedUsers, % of it (hold-mean). */
      halfWidthPct: nonNegative.optional(),
      /** Standard deviation of one batch mean, % of supportedUsers (hold-mean). */
      sdPct: nonNegative.optional(),
      batches: z.number().int().nonnegative().optional(),
      firstAlertUsers: nonNegative.optional(),
      startUsers: nonNegative,
      /** cold, initialUsers, or where a warm start's hint came from. */
      startSource: z.string().min(1),
      holdSec: nonNegative.optional(),
    })
    .optional(),
  /** Bounded: set when the hold stopped before `duration` because the metrics were tight enough. */
  earlyStop: z.strictObject({ atSec: nonNegative, halfWidthPct: nonNegative.optional() }).optional(),
  /** Seconds since the test started (testStartedAt) of the phase the stable-phase metrics are averaged over. */
  stableWindow: z.strictObject({ startSec: nonNegative, endSec: nonNegative }),
  totals: z.strictObject({ requests: nonNegative, errors: nonNegative, timeouts: nonNegative }),
  api: z.array(timingSchema),
  store: z.array(timingSchema),
  series: z.partialRecord(z.enum(SERIES_KEYS), seriesSchema),
  /**
   * Local bench: a fixed CPU workload timed on the target's cores every 5 s during the run
   * (src/bench/local/speed-probe.ts), in CPU ms, summarised over the measured window when it
   * holds enough samples (workload `…@window`): how fast the machine itself ran, which the
   * run's own metrics cannot tell from a costlier release. Optional: AWS runs and results
   * written before it have none.
   */
  speedProbe: speedProbeSchema.optional(),
  /**
   * Local bench: the CPU other work took from the bench's cores during the measured window
   * (node_exporter's busy CPU less the bench's own processes'), % of those cores, and the
   * limit above which a duet counts as disturbed (src/bench/local/outside-cpu.ts). `percent`
   * is absent when it could not be measured, with the reason. AWS runs have none.
   */
  outsideCpu: z
    .strictObject({
      percent: nonNegative.optional(),
      hostPercent: nonNegative.optional(),
      benchPercent: nonNegative.optional(),
      limitPercent: z.number().positive(),
      unmeasured: z.string().min(1).optional(),
    })
    .optional(),
  /**
   * Set by the gate when this run's duet was disturbed (other work above the limit): why.
   * The run is kept as recorded, and neither the gate nor `compare` judges it; the gate ran
   * the duet again.
   */
  disturbed: z.string().min(1).optional(),
  /**
   * The target's CPU profile over the measured window (gate config `profile: on`), for the
   * report's profile diff. Optional: runs without profiling and older results have none.
   */
  profile: storedProfileSchema.optional(),
  /** The load generator's own health: a saturated generator makes the run invalid. */
  generator: z
    .strictObject({
      cpuPercentMax: nonNegative.optional(),
      droppedIterations: nonNegative.optional(),
      saturated: z.boolean(),
    })
    .optional(),
  bench: benchFingerprintSchema,
  links: z.array(z.strictObject({ title: z.string(), url: z.string().url() })).default([]),
});

export type RunResult = z.output<typeof runResultSchema>;
export type RunResultInput = z.input<typeof runResultSchema>;
export type TestType = RunResult['test']['type'];
