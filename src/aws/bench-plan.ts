import type { GateConfig } from '../config/schema.ts';
import { InputError } from '../util/errors.ts';
import { describeDuration, formatDuration } from '../util/duration.ts';
import { estimateCost, estimateDuration, slotOverheadSec, type CostEstimate, type DbSource, type DurationEstimate } from './cost.ts';
import { resolveBench, type ResolvedBench } from './presets.ts';
import type { ExpectedDuration } from './expected.ts';

/**
 * The plan printed before provisioning (log and check run): what will be
 * created, how long the gate takes and what it costs, and whether that fits the
 * budget. A gate over budget is refused before anything is created.
 */

export interface PlannedResource {
  role: string;
  /** Terraform resource type that holds it. */
  resource: string;
  type: string;
  count: number;
}

export interface Plan {
  gate: string;
  preset: string;
  region: string;
  bench: ResolvedBench;
  dbSource: DbSource;
  resources: PlannedResource[];
  accountNeeds: AccountNeed[];
  duration: DurationEstimate;
  cost: CostEstimate;
  maxCostUsd: number | null;
  /** Where the limit came from: the --max-cost flag or bench.aws.maxCostUsd. */
  maxCostSource: 'flag' | 'config' | null;
  withinBudget: boolean;
  /** Expected duration and cost (src/aws/expected.ts), beside the upper bound; set by the CLI. */
  expected?: { duration: ExpectedDuration; cost: CostEstimate };
  /** The gate in both modes, this config's first, for the side-by-side comparison; set by the CLI. */
  modes?: ModeEstimate[];
  /** An unchanged release at the config's error rates and, when they differ, at 1 % and 1 %; set by the CLI. */
  rates?: RatesEstimate[];
}

/** What an unchanged release's gate is expected to take at one pair of error rates. */
export interface RatesEstimate {
  falseFailPct: number;
  falsePassPct: number;
  /** Pairs (duets) expected, and the share of gates that end inconclusive at maxRepeats. */
  pairs: number;
  inconclusivePct: number;
  totalSec: number;
  costUsd: number;
}

/** One mode's figures on the same bench: the worst case, the expectation and the run jobs. */
export interface ModeEstimate {
  mode: 'sequential' | 'duet';
  /** Load agents of this mode's bench (a duet has one group per side). */
  agents: number;
  worst: { totalSec: number; costUsd: number };
  expected: { totalSec: number; costUsd: number; runsPerSide: number; longestRunSec: number };
  /** Run jobs the worst case needs, or why it does not fit the runner's job limit. */
  runJobs: number | string;
}

export function buildPlan(config: GateConfig, options: { dbSource: DbSource; maxCostUsd?: number }): Plan {
  const bench = resolveBench(config.bench.aws, config.tests, config.mode);
  const duration = estimateDuration(config, bench, options.dbSource);
  const cost = estimateCost(bench, duration.totalSec);
  const flagLimit = options.maxCostUsd;
  const configLimit = config.bench.aws.maxCostUsd;
  const maxCostUsd = flagLimit ?? configLimit ?? null;
  return {
    gate: config.name,
    preset: bench.preset,
    region: bench.region,
    bench,
    dbSource: options.dbSource,
    resources: plannedResources(bench),
    accountNeeds: accountNeeds(bench),
    duration,
    cost,
    maxCostUsd,
    maxCostSource: flagLimit !== undefined ? 'flag' : configLimit !== undefined ? 'config' : null,
    withinBudget: maxCostUsd === null || cost.totalUsd <= maxCostUsd,
  };
}

/**
 * A Mattermost gate on an empty database: loadgate creates no accounts on the AWS bench,
 * so the users the agents log in (the users file) would not exist, nor the system admin a
 * load-test-ng agent logs in when it is created (api/agent.go NewControllerWrapper →
 * createCustomEmoji: "error login as sysadmin"), which fails every run. A load-test-ng
 * gate is refused (InputError); for k6 the warning is returned.
 */
export function requireDataset(config: GateConfig, dbSource: DbSource): string | undefined {
  if (config.target.system !== 'mattermost' || dbSource !== 'empty') return undefined;
  const fix = 'Name the dataset that holds them: bench.aws.database.dumpUrl (with .name) or .snapshotIdentifier, or --db-dump-url / --db-snapshot';
  if (config.engine.kind === 'load-test-ng') {
    throw new InputError(
      "bench.aws.database: the gate would run on an empty database, where neither the system admin load-test-ng's agents log in when they are created " +
        `(LOADGATE_ADMIN_EMAIL / LOADGATE_ADMIN_PASSWORD) nor the users file's accounts exist. ${fix}`,
    );
  }
  return `warning: bench.aws.database: no dataset, so the bench starts with an empty database, where the users file's accounts do not exist and every login would fail. ${fix}`;
}

/** The resources infra/aws creates for this bench, by role. */
function plannedResources(bench: ResolvedBench): PlannedResource[] {
  const resources: PlannedResource[] = [
    { role: 'app', resource: 'aws_instance', type: bench.appInstanceType, count: bench.appCount },
    { role: 'agent', resource: 'aws_instance', type: bench.agentInstanceType, count: bench.agentCount },
    ...(bench.proxyCount > 0 ? [{ role: 'proxy', resource: 'aws_instance', type: bench.proxyInstanceType, count: bench.proxyCount }] : []),
    { role: 'metrics', resource: 'aws_instance', type: bench.metricsInstanceType, count: 1 },
    { role: 'db', resource: 'aws_rds_cluster_instance', type: bench.dbInstanceType, count: bench.dbCount },
  ];
  if (bench.openSearchCount > 0) {
    resources.push({ role: 'opensearch', resource: 'aws_opensearch_domain', type: bench.openSearchInstanceType, count: bench.openSearchCount });
  }
  resources.push(
    { role: 'network', resource: 'aws_vpc', type: '/16, 2 public + 2 private subnets', count: 1 },
    { role: 'network', resource: 'aws_nat_gateway', type: 'NAT gateway', count: 1 },
    { role: 'network', resource: 'aws_security_group', type: 'one per role', count: bench.openSearchCount > 0 ? 6 : 5 },
    { role: 'security', resource: 'aws_kms_key', type: 'bench key (Aurora, OpenSearch, secrets, logs)', count: 1 },
    { role: 'logs', resource: 'aws_cloudwatch_log_group', type: 'Aurora PostgreSQL log, 7-day retention', count: 1 },
    { role: 'security', resource: 'aws_iam_role', type: 'instance roles (app, metrics, other nodes)', count: 3 },
  );
  return resources;
}

/**
 * vCPUs of an EC2 instance type of the families the presets use (c, m and r, fifth
 * generation on, Intel, AMD or Graviton): large 2, xlarge 4, Nxlarge 4N. Undefined for
 * other sizes and families, whose vCPUs the plan does not guess.
 */
export function instanceVcpus(type: string): number | undefined {
  const m = /^[cmr][5-8][a-z]*\.(large|(\d*)xlarge)$/.exec(type);
  if (!m) return undefined;
  if (m[1] === 'large') return 2;
  return 4 * (m[2] ? Number(m[2]) : 1);
}

/** Service Quotas' quota of on-demand vCPUs for the Standard families, which every bench instance falls under. */
export const STANDARD_VCPU_QUOTA = {
  service: 'ec2',
  code: 'L-1216C47A',
  name: 'Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances',
} as const;

/** One account limit (Service Quotas, per region) the bench needs, beyond what the account already uses. */
export interface AccountNeed {
  /** The quota as Service Quotas names it, with its service and code. */
  quota: string;
  service: 'ec2' | 'rds';
  code: string;
  needed: number;
  detail: string;
}

/**
 * What one bench takes of the account's quotas: on-demand vCPUs of the Standard families
 * (a new account's quota is often far below the perfcomp preset's), Aurora instances and
 * clusters, Elastic IPs (the NAT gateway's; agents and the metrics node get auto-assigned
 * public addresses, which are not Elastic IPs).
 */
export function accountNeeds(bench: ResolvedBench): AccountNeed[] {
  const ec2 = plannedResources(bench).filter((r) => r.resource === 'aws_instance');
  const parts = ec2.map((r) => ({ r, vcpus: instanceVcpus(r.type) }));
  const unknown = parts.filter((p) => p.vcpus === undefined).map((p) => p.r.type);
  const vcpus = parts.reduce((sum, p) => sum + (p.vcpus ?? 0) * p.r.count, 0);
  return [
    {
      quota: `${STANDARD_VCPU_QUOTA.name} (vCPUs)`,
      service: STANDARD_VCPU_QUOTA.service,
      code: STANDARD_VCPU_QUOTA.code,
      needed: vcpus,
      detail:
        parts.map((p) => `${p.r.role} ${p.r.count} x ${p.r.type}${p.vcpus !== undefined ? ` = ${p.vcpus * p.r.count}` : ''}`).join(', ') +
        (unknown.length ? `; vCPUs of ${[...new Set(unknown)].join(', ')} not counted (check their family's quota)` : ''),
    },
    {
      quota: 'DB instances',
      service: 'rds',
      code: 'L-7B6409FD',
      needed: bench.dbCount,
      detail: `Aurora PostgreSQL ${bench.dbCount} x ${bench.dbInstanceType}`,
    },
    { quota: 'DB clusters', service: 'rds', code: 'L-952B80B8', needed: 1, detail: 'one Aurora cluster' },
    {
      quota: 'EC2-VPC Elastic IPs',
      service: 'ec2',
      code: 'L-0263D0A3',
      needed: 1,
      detail: `the NAT gateway's (the ${bench.agentCount} agents and the metrics node get auto-assigned public addresses, not Elastic IPs)`,
    },
  ];
}

function renderAccountNeeds(needs: readonly AccountNeed[]): string[] {
  const lines = ['Account quotas this bench takes (Service Quotas, this region; on top of what the account already runs):'];
  for (const n of needs) lines.push(`  ${String(n.needed).padStart(3)}  ${n.quota} [${n.service} ${n.code}]: ${n.detail}`);
  lines.push(`  provision checks the vCPUs against the quota first (loadgate check-quota); raise it with request-service-quota-increase.`);
  return lines;
}

const usd = (value: number): string => `$${value.toFixed(2)}`;
/** Unit prices keep their precision (c7i.xlarge is $0.1785/h): 2 to 5 decimals. */
const unitUsd = (value: number): string => `$${value.toFixed(5).replace(/0{1,3}$/, '')}`;

/**
 * What app0 does with the data at boot (app.sh.tftpl loadgate-dataset prepare): it keeps it
 * as the pristine copy by a rename, and starts no Mattermost; each run's restore and first
 * start (the migrations) are in its set-up below.
 */
const DATASET_BOOT: Record<Plan['dbSource'], string> = {
  dump: ', loaded on app0 and kept as the pristine copy; each run restores and migrates its own in its set-up',
  snapshot: ', kept as the pristine copy; each run restores and migrates its own in its set-up',
  empty: '',
};

export function renderPlanText(plan: Plan): string {
  const { bench, duration, cost } = plan;
  const lines: string[] = [];
  lines.push(`AWS bench plan for gate "${plan.gate}": preset ${plan.preset} in ${plan.region}`);
  if (bench.overridden.length) lines.push(`  overridden by bench.aws: ${bench.overridden.join(', ')}`);
  lines.push('', 'Resources:');
  const width = Math.max(...plan.resources.map((r) => r.role.length));
  for (const r of plan.resources) {
    lines.push(`  ${r.role.padEnd(width)}  ${String(r.count).padStart(3)} x ${r.type}  (${r.resource})`);
  }
  lines.push(
    `  agents drive up to ${bench.agentCount * bench.usersPerAgent} users (${bench.usersPerAgent} each); the largest test needs ${bench.usersNeeded}`,
    // server/channels/app/platform/license.go SaveLicense: "unique users" refusal; app/limits.go: a
    // seat-enforcing licence stops user creation at its seats (docs/mattermost.md, "The dataset's accounts").
    "  licence: its user count must be at least the dataset's users (all accounts in the database, not only those the tests log in); Mattermost refuses a smaller one and runs unlicensed. One that enforces its seats also needs the accounts load-test-ng signs up (the users file's); the first run prints both counts",
  );
  lines.push('', ...renderAccountNeeds(plan.accountNeeds));
  lines.push('', 'Duration (upper bound: unbounded tests at their maxDuration):');
  lines.push(`  provisioning   ${formatDuration(duration.provisionSec)} (database: ${plan.dbSource}${DATASET_BOOT[plan.dbSource]})`);
  const perTest = new Map<string, { count: number; seconds: number }>();
  for (const run of duration.runs) {
    const entry = perTest.get(run.test) ?? { count: 0, seconds: 0 };
    entry.count++;
    entry.seconds += run.seconds;
    perTest.set(run.test, entry);
  }
  const duet = duration.runs.some((r) => r.side === 'duet');
  for (const [test, entry] of perTest) {
    const slots = duet ? `${entry.count} duets: both versions at once` : `${entry.count} runs: baseline and candidate x ${entry.count / 2} repeat(s)`;
    lines.push(
      `  ${test.padEnd(14)} ${formatDuration(entry.seconds)} (${slots}, each with ${formatDuration(slotOverheadSec(duet ? 'duet' : 'baseline'))} of set-up)`,
    );
  }
  lines.push(`  teardown       ${formatDuration(duration.teardownSec)}`);
  lines.push(`  total          ${formatDuration(duration.totalSec)} (${describeDuration(Math.ceil(duration.totalSec / 60) * 60)})`);
  lines.push('', `Estimated cost (on-demand ${cost.pricesRegion} prices as of ${cost.pricesAsOf}):`);
  const itemWidth = Math.max(...cost.lines.map((l) => l.item.length));
  for (const l of cost.lines) {
    const rate = l.unit === 'GB-month' ? `${unitUsd(l.unitPriceUsd)}/GB-month` : `${unitUsd(l.unitPriceUsd)}/h`;
    lines.push(
      `  ${l.item.padEnd(itemWidth)}  ${String(l.quantity).padStart(5)} x ${rate.padEnd(18)} ${l.hours.toFixed(2).padStart(6)} h  ${usd(l.costUsd).padStart(9)}`,
    );
  }
  lines.push(`  ${'total'.padEnd(itemWidth)}  ${' '.repeat(35)}${usd(cost.totalUsd).padStart(9)}`);
  for (const note of cost.notes) lines.push(`  ${note}`);
  if (plan.expected) lines.push('', ...renderExpected(plan.expected.duration, plan.expected.cost.totalUsd));
  if (plan.rates) lines.push('', ...renderRates(plan.rates));
  if (plan.modes) lines.push('', ...renderModes(plan.modes));
  lines.push('');
  // max-cost caps the worst case: the bench may run that long (its expiry allows it), so a
  // cap on the expected cost would not bound what a gate can spend.
  const expected = plan.expected ? `; the expected cost is ${usd(plan.expected.cost.totalUsd)}` : '';
  if (plan.maxCostUsd === null) {
    lines.push('Budget: no max-cost set (bench.aws.maxCostUsd or --max-cost), which caps the worst-case cost.');
  } else if (plan.withinBudget) {
    lines.push(
      `Budget: the worst case ${usd(cost.totalUsd)} is within the max-cost of ${usd(plan.maxCostUsd)} (${plan.maxCostSource === 'flag' ? '--max-cost' : 'bench.aws.maxCostUsd'})${expected}.`,
    );
  } else {
    lines.push(
      `REFUSED: the worst case ${usd(cost.totalUsd)} (every pair maxRepeats allows, unbounded tests at their maxDuration) exceeds the max-cost of ${usd(plan.maxCostUsd)} (${plan.maxCostSource === 'flag' ? '--max-cost' : 'bench.aws.maxCostUsd'})${expected}; ` +
        'max-cost caps the worst case, since the bench may run that long. Nothing was provisioned. Raise the limit, lower maxRepeats, pick a smaller preset, or shorten the tests.',
    );
  }
  return lines.join('\n');
}

/** The config's error rates beside 1 % and 1 %: what each costs an unchanged release in time, money and inconclusive gates. */
function renderRates(rates: readonly RatesEstimate[]): string[] {
  const lines = ['Error rates (errorRates: false fail over all checks, false pass per check), an unchanged release:'];
  rates.forEach((r, i) => {
    const which = i === 0 ? 'this config' : 'the default';
    lines.push(
      `  ${`${r.falseFailPct} % / ${r.falsePassPct} %`.padEnd(12)} ${which.padEnd(12)} ${r.pairs.toFixed(2)} pairs expected, ${r.inconclusivePct.toFixed(1)} % inconclusive, ${formatDuration(r.totalSec)}, ${usd(r.costUsd)}`,
    );
  });
  return lines;
}

function renderExpected(e: ExpectedDuration, costUsd: number): string[] {
  const duet = e.runs.some((r) => r.side === 'duet');
  const lines = [`Expected (capacity model, ${e.runsPerSide} ${duet ? 'duet(s)' : 'run(s) per side'}; the bound above is the worst case):`];
  const perTest = new Map<string, { seconds: number; count: number; basis: string }>();
  for (const r of e.runs) {
    const entry = perTest.get(r.test) ?? { seconds: 0, count: 0, basis: r.basis.replace(' (cold)', '') };
    entry.seconds += r.seconds;
    entry.count++;
    perTest.set(r.test, entry);
  }
  for (const [test, entry] of perTest)
    lines.push(`  ${test.padEnd(14)} ${formatDuration(entry.seconds)} (${entry.count} ${duet ? 'duets' : 'runs'}, ${entry.basis})`);
  lines.push(`  total          ${formatDuration(e.totalSec)} with provisioning and teardown; longest single run ${formatDuration(e.longestRunSec)}`);
  lines.push(`  cost           ${usd(costUsd)}`);
  return lines;
}

/**
 * Both modes side by side, each on its own bench shape (a duet has one agent group per
 * side). Both expect the runs per side of this config's noise model: what a duet's noise
 * is on a real bench only a calibration there measures.
 */
function renderModes(modes: readonly ModeEstimate[]): string[] {
  const lines = ["Sequential and duet (a duet runs both versions at once on the same app nodes; both expect the pairs this config's noise model gives):"];
  lines.push(`  ${'mode'.padEnd(11)} ${'agents'.padEnd(7)} ${'expected'.padEnd(22)} ${'worst case'.padEnd(22)} run jobs (worst case)`);
  for (const m of modes) {
    const expected = `${formatDuration(m.expected.totalSec)}, ${usd(m.expected.costUsd)}`;
    const worst = `${formatDuration(m.worst.totalSec)}, ${usd(m.worst.costUsd)}`;
    lines.push(`  ${m.mode.padEnd(11)} ${String(m.agents).padEnd(7)} ${expected.padEnd(22)} ${worst.padEnd(22)} ${m.runJobs}`);
  }
  return lines;
}

/** The plan as JSON for the check run and workflow outputs. */
export function planJson(plan: Plan): Record<string, unknown> {
  return {
    gate: plan.gate,
    preset: plan.preset,
    region: plan.region,
    dbSource: plan.dbSource,
    bench: plan.bench,
    resources: plan.resources,
    accountNeeds: plan.accountNeeds,
    durationSec: { provision: plan.duration.provisionSec, tests: plan.duration.testsSec, teardown: plan.duration.teardownSec, total: plan.duration.totalSec },
    runs: plan.duration.runs,
    cost: plan.cost,
    maxCostUsd: plan.maxCostUsd,
    withinBudget: plan.withinBudget,
    ...(plan.expected
      ? {
          expected: {
            runsPerSide: plan.expected.duration.runsPerSide,
            totalSec: plan.expected.duration.totalSec,
            longestRunSec: plan.expected.duration.longestRunSec,
            runs: plan.expected.duration.runs,
            costUsd: plan.expected.cost.totalUsd,
          },
        }
      : {}),
    ...(plan.modes ? { modes: plan.modes } : {}),
    ...(plan.rates ? { rates: plan.rates } : {}),
  };
}
