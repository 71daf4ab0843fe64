import { z } from 'zod';
import { CHAT_SERVER_NAMES } from './chat-servers.ts';
import { DEFAULT_LOADTEST_NG_VERSION } from './engine-versions.ts';
import { durationSchema } from '../util/duration.ts';

/**
 * The gate config (`gate.yml`). Every object is strict: an unknown key is an error,
 * because a misspelt tolerance that is silently ignored would let a regression pass.
 * Durations accept "90m"/"2s"/"1h30m" or seconds and are held as seconds.
 */

const name = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'expected a lower-case name of letters, digits and dashes');

export const healthQuerySchema = z.strictObject({
  name: z.string().min(1).max(120).describe('What the query measures, shown in logs and reports'),
  query: z
    .string()
    .min(1)
    .describe("PromQL (checked with Prometheus's grammar; the local bench fills in $TARGET_CPUS and $TARGET_CPU_COUNT); must return a single number"),
  threshold: z.number().describe('The system is healthy while the value stays below this (load-test-ng alerts at value >= threshold)'),
  minInterval: durationSchema.default(0).describe('Minimum time between two evaluations of this query'),
  enabled: z.boolean().default(true),
});
export type HealthQuery = z.output<typeof healthQuerySchema>;

export const boundedTestSchema = z.strictObject({
  type: z.literal('bounded'),
  name: name.default('bounded'),
  users: z.number().int().positive().describe('Number of simulated users'),
  rampUp: durationSchema.describe('Time over which users are added; excluded from the measurement window'),
  duration: durationSchema.refine((s) => s > 0, 'must be longer than 0s').describe('Total test time, ramp-up included; a cap when earlyStop is set'),
  earlyStop: z
    .strictObject({
      query: z
        .string()
        .min(1)
        .describe("PromQL of the gating metric watched (one number, checked with Prometheus's grammar), e.g. the average client request duration"),
      halfWidthPct: z.number().gt(0).describe('Stop once the mean of the query over the hold has a 95 % half-width within this % of it'),
      minHold: durationSchema.default(300).describe('Hold at least this long after the ramp-up'),
    })
    .optional()
    .describe('Stop the hold early once the gating metric is measured tightly enough; duration becomes a cap'),
});

export const unboundedTestSchema = z
  .strictObject({
    type: z.literal('unbounded'),
    name: name.default('unbounded'),
    maxUsers: z.number().int().positive(),
    initialUsers: z
      .number()
      .int()
      .nonnegative()
      .default(0)
      .describe("Users started before the coordinator's first step (load-test-ng's InitialActiveUsers); it climbs from there"),
    usersIncrement: z.number().int().positive().default(8).describe('Users added per step while every health query is under threshold'),
    usersDecrement: z.number().int().positive().default(8).describe('Users removed per step while any health query is over threshold'),
    restTime: durationSchema.default(2).describe('Time between two coordinator steps'),
    stabilityWindow: durationSchema.describe('Window over which equilibrium is judged and supported users averaged'),
    equilibriumSlope: z
      .number()
      .nonnegative()
      .default(0.5)
      .describe('Equilibrium when |slope of active users| over the window is below this many users per minute, as a % of the mean'),
    maxDuration: durationSchema.describe('Hard stop; a run that reaches it has not converged'),
    health: z.array(healthQuerySchema).min(1, 'an unbounded test needs at least one health query'),
    // The scale-free search. Every key is optional: without them the coordinator
    // is load-test-ng's, with constant steps and the window mean.
    climbPct: z
      .number()
      .gt(0)
      .max(50)
      .optional()
      .describe('Before the first alert, add this % of the current users per step (at least usersIncrement): the climb scales with the capacity'),
    ceilingStepPct: z
      .number()
      .gt(0)
      .max(10)
      .optional()
      .describe('After the first alert the step halves at every reversal, down to this % of the users at the first alert (fractions accumulate)'),
    warmStart: z
      .strictObject({
        marginPct: z.number().min(0).max(90).default(15).describe('Start this % below the hint, never above it'),
        rampUp: durationSchema.default(60).describe('Time over which the users ramp up to the start point (no login storm)'),
      })
      .optional()
      .describe('Start near a known capacity (an earlier run of this gate, --expect-users, or a --history run of that version)'),
    estimator: z
      .enum(['window-mean', 'hold-mean'])
      .default('window-mean')
      .describe(
        'window-mean: mean users over the last stability window (load-test-ng); hold-mean: mean over the hold once the search settled at the ceiling (its stability window starts there), with its uncertainty',
      ),
    holdHalfWidthPct: z
      .number()
      .gt(0)
      .optional()
      .describe("Adaptive hold (hold-mean only): stop once the estimate's confidence half-width is within this % of it, capped by stabilityWindow"),
  })
  .refine((t) => t.initialUsers <= t.maxUsers, { message: 'must not exceed maxUsers', path: ['initialUsers'] })
  .refine((t) => t.holdHalfWidthPct === undefined || t.estimator === 'hold-mean', {
    message: 'the adaptive hold needs estimator: hold-mean (the window mean carries no uncertainty)',
    path: ['holdHalfWidthPct'],
  });

export const testSchema = z.discriminatedUnion('type', [boundedTestSchema, unboundedTestSchema]);
export type BoundedTest = z.output<typeof boundedTestSchema>;
export type UnboundedTest = z.output<typeof unboundedTestSchema>;
export type TestSpec = z.output<typeof testSchema>;

export const targetSchema = z.strictObject({
  system: z.enum(CHAT_SERVER_NAMES),
  versionPattern: z
    .string()
    .default('^v?[0-9]+\\.[0-9]+\\.[0-9]+(-rc[0-9]+)?$')
    .describe('Regular expression every version label must match (validated before any use)'),
  package: z.string().optional().describe('Synapse: PyPI package name (default matrix-synapse)'),
  downloadUrl: z.string().url().optional().describe('Mattermost: release tarball URL template; {version} is replaced by the version without a leading v'),
  settings: z.record(z.string(), z.unknown()).default({}).describe('Target config overrides applied to both sides'),
  releaseWait: durationSchema
    .default(1800)
    .describe('Mattermost: how long to wait for a release tarball to be published before provisioning (loadgate wait-release)'),
});

const awsBenchSchema = z.strictObject({
  preset: z.string().default('perfcomp').describe('perfcomp, or a ceiling-test family such as 2XL.220'),
  region: z
    .string()
    .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'expected an AWS region such as us-east-1')
    .default('us-east-1'),
  appInstanceType: z.string().optional(),
  appCount: z.number().int().min(1).max(20).optional(),
  agentInstanceType: z.string().optional(),
  agentCount: z.number().int().min(1).max(100).optional(),
  proxyInstanceType: z.string().optional().describe('Only used with two or more app nodes: a single node is reached directly'),
  metricsInstanceType: z
    .string()
    .optional()
    .describe('Metrics node (Prometheus, Grafana, Pyroscope); m7i.xlarge for perfcomp, m7i.2xlarge for ceiling presets'),
  dbInstanceType: z.string().optional(),
  dbCount: z.number().int().min(1).max(15).optional(),
  openSearchCount: z.union([z.literal(0), z.literal(2)]).optional(),
  usersPerAgent: z.number().int().positive().default(2000),
  database: z
    .strictObject({
      snapshotIdentifier: z.string().min(1).optional().describe('Aurora cluster snapshot holding the dataset (restored per bench)'),
      dumpUrl: z.string().url().optional().describe('PostgreSQL dump (.sql or .sql.gz over https) loaded by the first app node'),
      name: z
        .string()
        .regex(/^[A-Za-z][A-Za-z0-9_]{0,62}$/, 'expected a PostgreSQL database name')
        .optional(),
    })
    .refine((d) => !(d.snapshotIdentifier && d.dumpUrl), 'give at most one of snapshotIdentifier and dumpUrl')
    .optional()
    .describe(
      "Where the dataset comes from; command-line flags of `loadgate plan` override it. The agents log in as the dataset's users, listed in the users file (run's --users-file; in the workflow the variable LOADGATE_USERS_FILE), which `loadgate validate --users-file` checks",
    ),
  maxCostUsd: z
    .number()
    .positive()
    .optional()
    .describe(
      'Refuse to start a gate whose worst-case cost (every pair maxRepeats allows, unbounded tests at maxDuration: what the bench may run) exceeds this; the expected cost is lower',
    ),
  maxEngineCpuPercent: z
    .number()
    .positive()
    .max(100)
    .default(85)
    .describe('Above this CPU use on any load agent the agents are the bottleneck and the run is invalid'),
});

const localBenchSchema = z.strictObject({
  targetCpus: z
    .string()
    .regex(/^\d+(-\d+)?(,\d+(-\d+)?)*$/, 'expected a CPU list such as "0" or "0-1"')
    .default('0'),
  engineCpus: z
    .string()
    .regex(/^\d+(-\d+)?(,\d+(-\d+)?)*$/, 'expected a CPU list such as "1"')
    .default('1'),
  dataset: z
    .strictObject({
      users: z.number().int().positive().default(200),
      rooms: z.number().int().positive().default(40),
      membersPerRoom: z.number().int().positive().default(25),
      directRooms: z.number().int().nonnegative().default(40),
      messagesPerRoom: z.number().int().nonnegative().default(30),
      threadRatio: z.number().min(0).max(1).default(0.18),
      reactionRatio: z.number().min(0).max(1).default(0.1),
    })
    .prefault({}),
  maxEngineCpuPercent: z.number().positive().max(100).default(85).describe('Above this the load generator is the bottleneck and the run is invalid'),
  maxOutsideCpuPercent: z
    .number()
    .positive()
    .max(100)
    .default(25)
    .describe(
      "Duets: above this share of the bench's cores (targetCpus and engineCpus) used by other work during a duet's measured window, the duet is disturbed: recorded, not judged, and run again",
    ),
});

const benchSchema = z.strictObject({
  kind: z.enum(['local', 'aws']),
  local: localBenchSchema.prefault({}),
  aws: awsBenchSchema.prefault({}),
});

const idleSchema = z.strictObject({
  minimumMs: z.number().int().nonnegative().default(1000),
  averageMs: z.number().int().positive().default(20000),
  rateMultiplier: z.number().positive().default(5.4).describe('Multiplies idle time; >1 slows users down (load-test-ng RatesDistribution)'),
});

/**
 * Each engine's own release numbering: k6's v1.4.2 is no load-test-ng release (its download
 * 404s), so the default follows engine.kind. load-test-ng: src/engine/loadtest-ng/rules.ts.
 */
const DEFAULT_ENGINE_VERSIONS = { k6: 'v1.4.2', 'load-test-ng': DEFAULT_LOADTEST_NG_VERSION } as const;

const engineSchema = z
  .strictObject({
    kind: z.enum(['k6', 'load-test-ng']).default('k6'),
    version: z.string().optional().describe('Pinned engine release; defaults to v1.4.2 for k6 and v1.32.0 for load-test-ng'),
    scenario: z.string().optional().describe('Path to the k6 scenario; defaults to the one for the target system'),
    idle: idleSchema.prefault({}),
    actions: z.record(z.string(), z.number().nonnegative()).optional().describe('Relative action frequencies; defaults to the ceiling-test table'),
  })
  .transform((engine) => ({ ...engine, version: engine.version ?? DEFAULT_ENGINE_VERSIONS[engine.kind] }));

/** One metric's tolerance. Percentages are relative changes of candidate vs baseline. */
const toleranceSchema = z.strictObject({
  tolerancePct: z
    .number()
    .nonnegative()
    .describe(
      "The change in the bad direction at which a check is as likely to fail as to pass (the test's indifference point); smaller changes pass, larger ones fail, more surely the farther they are",
    ),
  noiseFloorPct: z
    .number()
    .nonnegative()
    .describe('Without a measured noise model: the ±95 % band of the difference of two runs, from which the per-run noise is assumed'),
  materialPct: z
    .number()
    .positive()
    .optional()
    .describe(
      'A change this large in the bad direction must fail (default: twice the tolerance on the log scale, so the tolerance is where a check is as likely to fail as to pass: 30 → 69, 5 for supported users → 9.75)',
    ),
  weight: z
    .number()
    .positive()
    .optional()
    .describe(
      "This check's share of the gate's false-fail budget, relative to the other gating checks' (default: (σ/material change)⁴ from the noise model, relative to the largest among the gating checks, at least 0.01: the budget goes to the checks that need the most pairs)",
    ),
  gating: z.boolean().default(true).describe('false: reported as a warning, never fails the gate'),
});

const rateToleranceSchema = z.strictObject({
  tolerancePct: z.number().nonnegative().describe('Largest relative increase of the rate per request the gate accepts'),
  ignoreBelowPct: z.number().nonnegative().describe('Rates (as % of requests) at or below this on both sides are healthy whatever the change'),
  materialPct: z.number().positive().optional().describe('An increase this large must fail (default: twice the tolerance on the log scale)'),
  weight: z
    .number()
    .positive()
    .optional()
    .describe(
      "This check's share of the gate's false-fail budget, relative to the other gating checks' (default: (σ/material change)⁴ from the noise model, relative to the largest among the gating checks, at least 0.01: the budget goes to the checks that need the most pairs)",
    ),
  gating: z.boolean().default(true),
});

export const tolerancesSchema = z.strictObject({
  confidence: z.number().gt(0.5).lt(1).default(0.95).describe('Confidence level of the intervals'),
  supportedUsers: toleranceSchema.prefault({ tolerancePct: 5, noiseFloorPct: 5 }),
  errorRate: rateToleranceSchema.prefault({ tolerancePct: 25, ignoreBelowPct: 0.025 }),
  timeoutRate: rateToleranceSchema.prefault({ tolerancePct: 25, ignoreBelowPct: 0.025 }),
  apiAvg: toleranceSchema.prefault({ tolerancePct: 10, noiseFloorPct: 10 }),
  apiP99: toleranceSchema.prefault({ tolerancePct: 20, noiseFloorPct: 20 }),
  storeAvg: toleranceSchema.prefault({ tolerancePct: 10, noiseFloorPct: 10 }),
  storeP99: toleranceSchema.prefault({ tolerancePct: 20, noiseFloorPct: 20 }),
  cpu: toleranceSchema.prefault({ tolerancePct: 10, noiseFloorPct: 5 }),
  cpuPerUser: toleranceSchema.prefault({ tolerancePct: 10, noiseFloorPct: 10, gating: false }),
  heap: toleranceSchema.prefault({ tolerancePct: 10, noiseFloorPct: 5 }),
  stack: toleranceSchema.prefault({ tolerancePct: 10, noiseFloorPct: 5, gating: false }),
  /** Per-handler lists: changes smaller than both are not listed (the seed tooling's filter). */
  listing: z
    .strictObject({
      minDeltaPct: z.number().nonnegative().default(1),
      minDeltaMs: z.number().nonnegative().default(2),
    })
    .prefault({}),
});
export type Tolerances = z.output<typeof tolerancesSchema>;

/** A creep anchor: a release, or a pattern (`*` any characters, `?` one). */
export const creepAnchorSchema = z
  .string()
  .regex(/^[A-Za-z0-9._+*?-]{1,64}$/, 'expected a release such as 10.11.0, or a pattern such as 10.11.* (* any characters, ? one)');

export const gateConfigSchema = z
  .strictObject({
    $schema: z.string().optional(),
    version: z.literal(1).describe('Config format version'),
    name: name,
    dataset: z.string().optional().describe('Free-text dataset description for the report'),
    target: targetSchema,
    bench: benchSchema,
    engine: engineSchema.prefault({}),
    tests: z.array(testSchema).min(1, 'a gate needs at least one test'),
    mode: z
      .enum(['sequential', 'duet'])
      .default('sequential')
      .describe(
        "sequential: the baseline and the candidate run one after the other on the whole bench; duet: both at once, each on its own servers sharing the same CPUs, so the machine's speed moves both alike and cancels in their ratio (on AWS: two Mattermost services per app node, a bench provisioned with duet slots). A noise model measured in one mode is refused in the other",
      ),
    repeats: z.number().int().min(1).max(20).default(1).describe('Minimum baseline/candidate pairs per test, in counterbalanced order'),
    maxRepeats: z
      .number()
      .int()
      .min(1)
      .max(20)
      .default(3)
      .describe('Pairs added while the sequential decision is undecided, at most; undecided then is inconclusive'),
    noiseModel: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Noise model: builtin:<name> for one loadgate ships (noise/<name>.json, wherever loadgate is installed), or a file (loadgate calibrate) relative to this config; without it the noise is assumed from the tolerances',
      ),
    tolerances: tolerancesSchema.prefault({}),
    profile: z
      .enum(['off', 'on'])
      .default('off')
      .describe(
        "on: profile each side's target over the measured window (local bench: py-spy at 20 Hz on the Synapse process; AWS bench: Go's CPU profile of every app node, merged per slot, read from the bench's own Pyroscope, which profiles them whatever this says) and add the profile diff to the report: the functions whose CPU per request grew or shrank, and a differential flame graph. " +
          'It costs each side about 3 % of a core on the target cores (docs/explain.md), sampled alike on both sides of a duet; every shipped example config turns it on',
      ),
    errorRates: z
      .strictObject({
        falseFailPct: z.number().gt(0).max(20).default(1).describe('How often an unchanged release may fail, %, over all gating checks together'),
        falsePassPct: z.number().gt(0).max(20).default(1).describe('How often a material regression may pass a check, %'),
      })
      .prefault({})
      .describe(
        'The error rates the sequential test keeps, at any pair it stops. Looser rates decide in fewer pairs: `loadgate plan` and `loadgate simulate` show both beside 1 % and 1 %',
      ),
    creep: z
      .strictObject({
        anchor: creepAnchorSchema.describe(
          "The release the cumulative change is measured from, or a pattern: the last release matching it on the candidate's line in the history (e.g. an ESR: v10.11.*)",
        ),
      })
      .optional()
      .describe(
        "The creep check: judges the change from the anchor to the candidate with the step check's rule and error rates, chained through the recorded steps (run --history), and by measuring the anchor against the candidate (usually one duet) when the chain cannot decide. A creep fail fails the gate on its own line",
      ),
  })
  .superRefine((c, ctx) => {
    if (c.mode !== 'duet' || c.bench.kind !== 'aws') return;
    const agents = c.bench.aws.agentCount;
    if (agents !== undefined && agents % 2 !== 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['bench', 'aws', 'agentCount'],
        message: `a duet splits the agents into two equal groups, one per side; ${agents} is odd: use ${agents + 1}`,
      });
    }
    c.tests.forEach((test, t) => {
      if (test.type !== 'unbounded') return;
      test.health.forEach((h, i) => {
        if (h.enabled && SHARED_NODE_SERIES.test(h.query)) {
          ctx.addIssue({
            code: 'custom',
            path: ['tests', t, 'health', i, 'query'],
            message: `"${h.name}" reads the app nodes' own CPU or memory, which both sides of a duet share: it would stop both sides' coordinators at once and hide a regression of either. Measure each side's Mattermost against its half of the nodes instead, e.g. ${DUET_CPU_QUERY_EXAMPLE}`,
          });
        }
      });
    });
  });

/** Node-wide CPU busy time and available memory: in a duet on AWS, both sides' load at once. */
const SHARED_NODE_SERIES = /\bi?rate\(\s*node_cpu_seconds_total|node_memory_MemAvailable_bytes/;
const DUET_CPU_QUERY_EXAMPLE =
  '100 * sum(rate(mattermost_process_cpu_seconds_total[1m])) / (0.5 * count(node_cpu_seconds_total{instance=~"app.*",mode="idle"}))';

export type GateConfig = z.output<typeof gateConfigSchema>;
/** @internal For the tests' config fixtures, written as a user writes them. */
export type GateConfigInput = z.input<typeof gateConfigSchema>;
