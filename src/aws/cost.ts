import type { GateConfig } from '../config/schema.ts';
import type { ResolvedBench } from './presets.ts';
import { AURORA_HOURLY_USD, EC2_HOURLY_USD, HOURS_PER_MONTH, OPENSEARCH_HOURLY_USD, OTHER_PRICES_USD, PRICES_AS_OF, PRICES_REGION } from './prices.ts';

/**
 * How long a gate on the AWS bench takes and what it costs, as an upper bound:
 * unbounded tests are counted at their maxDuration, and every resource is billed
 * from the start of provisioning to the end of teardown.
 */

/** Where the database's data comes from; it dominates provisioning time. */
export type DbSource = 'empty' | 'snapshot' | 'dump';

/**
 * What one test run on the AWS bench spends besides the test itself, step by step, as
 * src/bench/aws (app-nodes.ts prepare, aws-gate-bench.ts execute) does it. The dataset is
 * restored from its pristine copy before every run, and that copy is the dump as loaded,
 * so every run's first start migrates the schema from the dump's version again. Estimates
 * until a real bench measures them; the gate also budgets the longest set-up it has seen.
 */
export const RUN_SETUP_SEC = {
  /** systemctl stop on every app node: systemd's default stop timeout (the unit sets none). */
  stop: 90,
  /** CREATE DATABASE ... TEMPLATE of the pristine copy (a file copy, far quicker than the 45-minute dump load) and the licence clean-up. */
  restore: 5 * 60,
  /** A version switch: extract the cached release (downloaded once per URL), configure. */
  install: 90,
  /** app0's start with the migrations from the dump's schema, then the other app nodes. */
  start: 10 * 60,
  /** k6 initialising its VUs, or load-test-ng agents created and run (agentReadyTimeoutSec allows 5 minutes). */
  agents: 2 * 60,
  /** After the test: one more scrape, the engine's statistics, the collection queries, the Grafana snapshot. */
  windDown: 90,
} as const;

/**
 * Provisioning and teardown times, in seconds. Typical AWS figures, rounded up:
 * a new Aurora cluster with its instances takes 10-15 minutes, a snapshot
 * restore 20-30, an OpenSearch domain in a VPC 15-30 (in parallel with Aurora);
 * loading the 12M-post dump of the seed comparisons takes about 45 minutes.
 *
 * After a dump load app0's user data (app.sh.tftpl) deletes the dump's licence rows and
 * renames the loaded database to the pristine copy: seconds, inside dumpLoad's round-up.
 * No copy of the data and no Mattermost start happen at boot (the first run restores and
 * migrates each slot's own database, which RUN_SETUP_SEC counts, under the run's first-start
 * limit); the release is installed and configured while the dump loads. The first run job
 * waits for all of it (job-limits.ts).
 */
export const TIMING_SEC = {
  /** VPC, NAT gateway, instances booting and installing their software (the release too, beside the dump load). */
  networkAndNodes: 10 * 60,
  auroraCreate: 15 * 60,
  auroraRestore: 30 * 60,
  openSearchCreate: 30 * 60,
  /** The dump's download and load, then its licence clean-up and rename (seconds, inside the round-up). */
  dumpLoad: 45 * 60,
  /** Per test run: the set-up and wind-down around the test (RUN_SETUP_SEC). */
  runOverhead: Object.values(RUN_SETUP_SEC).reduce((a, b) => a + b, 0),
  teardown: 15 * 60,
  teardownOpenSearch: 25 * 60,
} as const;

export interface RunSlot {
  test: string;
  /** The side that runs in this slot, or both at once (a duet). */
  side: 'baseline' | 'candidate' | 'duet';
  repeat: number;
  seconds: number;
}

/** The slots one repeat of a test takes: the baseline's run and the candidate's, or one duet. */
export function slotSides(mode: GateConfig['mode']): readonly RunSlot['side'][] {
  return mode === 'duet' ? ['duet'] : ['baseline', 'candidate'];
}

/**
 * The set-up and wind-down around one slot's test. A duet sets both sides up at once on
 * the same nodes, except their restores: those take turns under app0's dataset lock
 * (app.sh.tftpl), so a duet waits for two.
 */
export function slotOverheadSec(side: RunSlot['side']): number {
  return side === 'duet' ? TIMING_SEC.runOverhead + RUN_SETUP_SEC.restore : TIMING_SEC.runOverhead;
}

export interface DurationEstimate {
  /** From the apply's start until the dataset is ready: what the bench bills before its first run. */
  provisionSec: number;
  /**
   * What the provision job itself spends (the workflow's provision-aws): the wait for the
   * release tarballs (target.releaseWait at most), then `terraform apply`, which returns once
   * the network, the instances and the database (and search) exist.
   */
  provisionJob: { releaseWaitSec: number; applySec: number };
  /** The dump load on app0 after the apply (its clean-up and rename included): the first run job waits for it before its first run. */
  datasetSec: number;
  runs: RunSlot[];
  testsSec: number;
  teardownSec: number;
  totalSec: number;
}

export function estimateDuration(config: GateConfig, bench: ResolvedBench, dbSource: DbSource): DurationEstimate {
  const database = dbSource === 'snapshot' ? TIMING_SEC.auroraRestore : TIMING_SEC.auroraCreate;
  const search = bench.openSearchCount > 0 ? TIMING_SEC.openSearchCreate : 0;
  const applySec = TIMING_SEC.networkAndNodes + Math.max(database, search);
  const datasetSec = dbSource === 'dump' ? TIMING_SEC.dumpLoad : 0;
  const provisionSec = applySec + datasetSec;
  const runs: RunSlot[] = [];
  // The worst case: every pair the sequential rule may ask for (maxRepeats), interleaved
  // as the gate runs them. The bench's expiry and the budget check use this bound.
  for (let repeat = 0; repeat < Math.max(config.maxRepeats, config.repeats); repeat++) {
    for (const test of config.tests) {
      const testSec = test.type === 'bounded' ? test.duration : test.maxDuration;
      for (const side of slotSides(config.mode)) {
        runs.push({ test: test.name, side, repeat, seconds: testSec + slotOverheadSec(side) });
      }
    }
  }
  const testsSec = runs.reduce((sum, r) => sum + r.seconds, 0);
  const teardownSec = bench.openSearchCount > 0 ? TIMING_SEC.teardownOpenSearch : TIMING_SEC.teardown;
  return {
    provisionSec,
    provisionJob: { releaseWaitSec: config.target.releaseWait, applySec },
    datasetSec,
    runs,
    testsSec,
    teardownSec,
    totalSec: provisionSec + testsSec + teardownSec,
  };
}

export interface CostLine {
  item: string;
  quantity: number;
  unit: 'instance-hour' | 'hour' | 'GB-month';
  unitPriceUsd: number;
  /** Billed hours per unit (after the service's minimums and rounding). */
  hours: number;
  costUsd: number;
}

export interface CostEstimate {
  lines: CostLine[];
  totalUsd: number;
  pricesAsOf: string;
  pricesRegion: string;
  notes: string[];
}

/** Root volume sizes of modules/bench/variables.tf, for the EBS line. */
const ROOT_VOLUME_GB = { app: 20, agent: 20, proxy: 20, metrics: 200 } as const;
const OPENSEARCH_VOLUME_GB = 200;

function price(table: Readonly<Record<string, number>>, type: string): number {
  const value = table[type];
  // resolveBench rejects unpriced types, so this is a programming error.
  if (value === undefined) throw new Error(`no price for ${type}`);
  return value;
}

const round2 = (usd: number): number => Math.round(usd * 100) / 100;

export function estimateCost(bench: ResolvedBench, durationSec: number): CostEstimate {
  const hours = durationSec / 3600;
  const ec2Hours = Math.max(hours, 60 / 3600);
  const rdsHours = Math.max(hours, 10 / 60);
  const openSearchHours = Math.ceil(hours);
  const lines: CostLine[] = [];
  const add = (item: string, quantity: number, unit: CostLine['unit'], unitPriceUsd: number, billedHours: number): void => {
    if (quantity <= 0) return;
    const perUnit = unit === 'GB-month' ? (unitPriceUsd * billedHours) / HOURS_PER_MONTH : unitPriceUsd * billedHours;
    lines.push({ item, quantity, unit, unitPriceUsd, hours: billedHours, costUsd: quantity * perUnit });
  };
  add(`app nodes ${bench.appInstanceType}`, bench.appCount, 'instance-hour', price(EC2_HOURLY_USD, bench.appInstanceType), ec2Hours);
  add(`load agents ${bench.agentInstanceType}`, bench.agentCount, 'instance-hour', price(EC2_HOURLY_USD, bench.agentInstanceType), ec2Hours);
  if (bench.proxyCount > 0)
    add(`proxy ${bench.proxyInstanceType}`, bench.proxyCount, 'instance-hour', price(EC2_HOURLY_USD, bench.proxyInstanceType), ec2Hours);
  add(`metrics node ${bench.metricsInstanceType}`, 1, 'instance-hour', price(EC2_HOURLY_USD, bench.metricsInstanceType), ec2Hours);
  add(`Aurora PostgreSQL ${bench.dbInstanceType}`, bench.dbCount, 'instance-hour', price(AURORA_HOURLY_USD, bench.dbInstanceType), rdsHours);
  if (bench.openSearchCount > 0) {
    add(
      `OpenSearch ${bench.openSearchInstanceType}`,
      bench.openSearchCount,
      'instance-hour',
      price(OPENSEARCH_HOURLY_USD, bench.openSearchInstanceType),
      openSearchHours,
    );
    add('OpenSearch gp3 storage', bench.openSearchCount * OPENSEARCH_VOLUME_GB, 'GB-month', OTHER_PRICES_USD.openSearchGp3GbMonth, openSearchHours);
  }
  add('NAT gateway', 1, 'hour', OTHER_PRICES_USD.natGatewayHour, hours);
  // Agents and the metrics node have public addresses, and so does the NAT gateway.
  add('public IPv4 addresses', bench.agentCount + 2, 'hour', OTHER_PRICES_USD.publicIpv4Hour, hours);
  const ebsGb =
    bench.appCount * ROOT_VOLUME_GB.app + bench.agentCount * ROOT_VOLUME_GB.agent + bench.proxyCount * ROOT_VOLUME_GB.proxy + ROOT_VOLUME_GB.metrics;
  add('EBS gp3 root volumes', ebsGb, 'GB-month', OTHER_PRICES_USD.gp3GbMonth, hours);
  const totalUsd = round2(lines.reduce((sum, l) => sum + l.costUsd, 0));
  const notes = ['Not included: Aurora storage and I/O, NAT and inter-AZ data transfer, KMS, Secrets Manager and CloudWatch (cents for a few hours).'];
  if (bench.region !== PRICES_REGION) notes.push(`Prices are ${PRICES_REGION}'s; ${bench.region} may differ.`);
  return { lines: lines.map((l) => ({ ...l, costUsd: round2(l.costUsd) })), totalUsd, pricesAsOf: PRICES_AS_OF, pricesRegion: PRICES_REGION, notes };
}
