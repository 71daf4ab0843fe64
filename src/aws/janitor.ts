import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { CommandRunner } from '../util/command-runner.ts';

/**
 * The janitor: finds loadgate benches whose ExpiresAt tag has passed (Resource
 * Groups Tagging API, in every region a gate can name) and destroys them, with
 * `terraform destroy` from their state key and the tfvars stored beside it when
 * it can, else by deleting the tagged resources in dependency order. Every AWS
 * and Terraform call goes through a CommandRunner, so tests replay recorded
 * responses instead of calling AWS.
 */

const tagMappingPageSchema = z.object({
  ResourceTagMappingList: z.array(
    z.object({
      ResourceARN: z.string().startsWith('arn:'),
      Tags: z.array(z.object({ Key: z.string(), Value: z.string() })).default([]),
    }),
  ),
  PaginationToken: z.string().optional(),
});

export interface TaggedBench {
  bench: string;
  stateKey: string | null;
  /** null when the tag is missing or not a time: such a bench counts as expired. */
  expiresAt: Date | null;
  arns: string[];
}

async function awsJson(runner: CommandRunner, args: string[]): Promise<unknown> {
  const result = await runner.run('aws', [...args, '--output', 'json']);
  if (result.code !== 0) throw new Error(`aws ${args.slice(0, 2).join(' ')} failed: ${result.stderr.trim()}`);
  return result.stdout.trim() ? JSON.parse(result.stdout) : {};
}

/** Every loadgate bench in the region, grouped by its Bench tag. */
export async function listBenches(runner: CommandRunner, region: string): Promise<TaggedBench[]> {
  const benches = new Map<string, TaggedBench>();
  let token: string | undefined;
  for (let page = 0; page < 200; page++) {
    const args = ['resourcegroupstaggingapi', 'get-resources', '--region', region, '--tag-filters', 'Key=Project,Values=loadgate'];
    if (token) args.push('--pagination-token', token);
    const parsed = tagMappingPageSchema.safeParse(await awsJson(runner, args));
    if (!parsed.success) throw new Error(`unexpected get-resources response: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    for (const mapping of parsed.data.ResourceTagMappingList) {
      const tags = new Map(mapping.Tags.map((t) => [t.Key, t.Value]));
      const name = tags.get('Bench');
      if (!name) continue;
      const bench = benches.get(name) ?? { bench: name, stateKey: null, expiresAt: null, arns: [] };
      bench.arns.push(mapping.ResourceARN);
      bench.stateKey ??= tags.get('StateKey') ?? null;
      const expires = tags.get('ExpiresAt');
      const time = expires ? Date.parse(expires) : Number.NaN;
      if (!Number.isNaN(time)) bench.expiresAt = bench.expiresAt && bench.expiresAt.getTime() > time ? bench.expiresAt : new Date(time);
      benches.set(name, bench);
    }
    token = parsed.data.PaginationToken || undefined;
    if (!token) break;
  }
  return [...benches.values()].sort((a, b) => a.bench.localeCompare(b.bench));
}

export function isExpired(bench: TaggedBench, now: Date): boolean {
  return bench.expiresAt === null || bench.expiresAt.getTime() <= now.getTime();
}

export interface JanitorOptions {
  /** Regions swept: every region a gate config can put a bench in. */
  regions: readonly string[];
  /** Region of the state bucket (the Terraform backend), whatever region a bench is in. */
  stateRegion: string;
  /** S3 bucket of the Terraform states. */
  bucket: string;
  /** Directory of the infra/aws root module. */
  infraDir: string;
  now: Date;
  dryRun: boolean;
  log: (line: string) => void;
  /** Waits between polls (OpenSearch deletion, retries); tests pass an instant one. */
  sleep?: (ms: number) => Promise<void>;
}

/** A bench found in one region. */
interface Sweep {
  region: string;
  options: JanitorOptions;
}

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** terraform destroy with the bench's own state and tfvars; false when that is not possible. */
async function destroyWithTerraform(runner: CommandRunner, bench: TaggedBench, options: JanitorOptions): Promise<boolean> {
  // The state bucket has one region; the bench's own region is in its tfvars.
  if (!bench.stateKey) {
    options.log(`${bench.bench}: no StateKey tag, falling back to deleting tagged resources`);
    return false;
  }
  const work = await mkdtemp(join(tmpdir(), 'loadgate-janitor-'));
  try {
    const tfvars = join(work, 'terraform.tfvars.json');
    const tfvarsKey = bench.stateKey.replace(/terraform\.tfstate$/, 'terraform.tfvars.json');
    const copy = await runner.run('aws', ['s3', 'cp', '--region', options.stateRegion, `s3://${options.bucket}/${tfvarsKey}`, tfvars]);
    if (copy.code !== 0) {
      options.log(`${bench.bench}: cannot read s3://${options.bucket}/${tfvarsKey} (${copy.stderr.trim()}), falling back to deleting tagged resources`);
      return false;
    }
    const chdir = `-chdir=${options.infraDir}`;
    const init = await runner.run('terraform', [
      chdir,
      'init',
      '-input=false',
      '-reconfigure',
      `-backend-config=bucket=${options.bucket}`,
      `-backend-config=key=${bench.stateKey}`,
      `-backend-config=region=${options.stateRegion}`,
    ]);
    if (init.code !== 0) {
      options.log(`${bench.bench}: terraform init failed: ${lastLine(init.stderr)}`);
      return false;
    }
    const destroy = await runner.run('terraform', [chdir, 'destroy', '-auto-approve', '-input=false', `-var-file=${tfvars}`], { timeoutMs: 90 * 60_000 });
    if (destroy.code !== 0) {
      options.log(`${bench.bench}: terraform destroy failed: ${lastLine(destroy.stderr)}`);
      return false;
    }
    options.log(`${bench.bench}: destroyed with terraform (state ${bench.stateKey})`);
    return true;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

const lastLine = (text: string): string => text.trim().split('\n').filter(Boolean).pop() ?? '(no output)';

/** A resource from its ARN: service, type and ID (arn:aws:ec2:r:a:instance/i-1, arn:aws:rds:r:a:cluster:name). */
export function parseArn(arn: string): { service: string; type: string; id: string } {
  const parts = arn.split(':');
  const service = parts[2] ?? '';
  const resource = parts.slice(5).join(':');
  const slash = resource.indexOf('/');
  const colon = resource.indexOf(':');
  const cut = slash >= 0 && (colon < 0 || slash < colon) ? slash : colon;
  return cut < 0 ? { service, type: resource, id: resource } : { service, type: resource.slice(0, cut), id: resource.slice(cut + 1) };
}

/**
 * Deletes a bench's tagged resources when Terraform cannot: dependents first
 * (the expiry schedules, search domain, database instances, EC2 instances), then the
 * database cluster, NAT gateway and addresses, security groups, subnets, route tables,
 * gateway and VPC, then groups, secrets, the log group, the key and the roles. The
 * search domain and the instances are waited for, because their network
 * interfaces hold the security groups and subnets; those deletions are retried
 * while AWS still reports a dependency. Best effort: each failure is recorded
 * and the rest still runs.
 */
async function deleteTaggedResources(
  runner: CommandRunner,
  bench: TaggedBench,
  options: JanitorOptions,
  region = options.regions[0] ?? 'us-east-1',
): Promise<string[]> {
  const deletion = startDeletion(runner, bench, options, region);
  await deleteDependents(deletion);
  await deleteNetwork(deletion);
  await deleteAccessories(deletion);
  return deletion.failures;
}

/** One bench's deletion by tags: its resources, where it runs the calls, and what failed so far. */
interface Deletion {
  runner: CommandRunner;
  bench: TaggedBench;
  options: JanitorOptions;
  region: string;
  sleep: (ms: number) => Promise<void>;
  failures: string[];
  /** IDs of the bench's resources of one service and type. */
  of: (service: string, type: string) => string[];
  /** Runs one AWS call (only logs it on a dry run); retries while stderr matches `retryOn`; false when it failed. */
  step: (what: string, args: string[], timeoutMs?: number, retryOn?: RegExp) => Promise<boolean>;
}

function startDeletion(runner: CommandRunner, bench: TaggedBench, options: JanitorOptions, region: string): Deletion {
  const failures: string[] = [];
  const sleep = options.sleep ?? realSleep;
  const regionArgs = ['--region', region];
  const of = (service: string, type: string): string[] =>
    bench.arns
      .map(parseArn)
      .filter((r) => r.service === service && r.type === type)
      .map((r) => r.id);
  const step = async (what: string, args: string[], timeoutMs?: number, retryOn?: RegExp): Promise<boolean> => {
    if (options.dryRun) {
      options.log(`${bench.bench}: would run aws ${args.join(' ')} ${regionArgs.join(' ')}`);
      return true;
    }
    for (let attempt = 1; ; attempt++) {
      const result = await runner.run('aws', [...args, ...regionArgs], timeoutMs ? { timeoutMs } : undefined);
      if (result.code === 0) {
        options.log(`${bench.bench}: ${what}`);
        return true;
      }
      // Network interfaces of a deleted cluster or domain linger for minutes.
      if (retryOn?.test(result.stderr) && attempt < DEPENDENCY_RETRIES) {
        options.log(`${bench.bench}: ${what}: still in use (${lastLine(result.stderr)}), retrying in ${DEPENDENCY_RETRY_MS / 1000} s`);
        await sleep(DEPENDENCY_RETRY_MS);
        continue;
      }
      failures.push(`${what}: ${lastLine(result.stderr)}`);
      return false;
    }
  };
  return { runner, bench, options, region, sleep, failures, of, step };
}

/** What holds network interfaces: the search domain, the databases and the instances, waited for until they are gone. */
async function deleteDependents({ runner, bench, options, region, sleep, failures, of, step }: Deletion): Promise<void> {
  // The bench's expiry schedules go first, so none fires on what this sweep is deleting.
  await deleteScheduleGroup(runner, bench.bench, region, options, failures);
  const domains = of('es', 'domain');
  for (const domain of domains) await step(`delete OpenSearch domain ${domain}`, ['opensearch', 'delete-domain', '--domain-name', domain]);
  const dbInstances = of('rds', 'db');
  for (const db of dbInstances) {
    await step(`delete DB instance ${db}`, [
      'rds',
      'delete-db-instance',
      '--db-instance-identifier',
      db,
      '--skip-final-snapshot',
      '--delete-automated-backups',
    ]);
  }
  const instances = of('ec2', 'instance');
  if (instances.length) {
    await step(`terminate ${instances.length} instance(s)`, ['ec2', 'terminate-instances', '--instance-ids', ...instances]);
    await step('wait for the instances to terminate', ['ec2', 'wait', 'instance-terminated', '--instance-ids', ...instances], 40 * 60_000);
  }
  for (const db of dbInstances) await step(`wait for DB instance ${db}`, ['rds', 'wait', 'db-instance-deleted', '--db-instance-identifier', db], 60 * 60_000);
  for (const cluster of of('rds', 'cluster')) {
    await step(`delete DB cluster ${cluster}`, ['rds', 'delete-db-cluster', '--db-cluster-identifier', cluster, '--skip-final-snapshot']);
    await step(`wait for DB cluster ${cluster}`, ['rds', 'wait', 'db-cluster-deleted', '--db-cluster-identifier', cluster], 60 * 60_000);
  }
  // The AWS CLI has no waiter for a domain's deletion: poll until it is gone.
  for (const domain of domains) {
    if (options.dryRun) continue;
    if (!(await waitForDomainDeletion(runner, domain, region, sleep)))
      failures.push(`OpenSearch domain ${domain} was still being deleted after ${DOMAIN_DELETE_TIMEOUT_MS / 60_000} minutes`);
    else options.log(`${bench.bench}: OpenSearch domain ${domain} is gone`);
  }
}

/** The VPC and what is in it, each part after what depends on it. */
async function deleteNetwork({ runner, options, region, failures, of, step }: Deletion): Promise<void> {
  const natGateways = of('ec2', 'natgateway');
  for (const nat of natGateways) await step(`delete NAT gateway ${nat}`, ['ec2', 'delete-nat-gateway', '--nat-gateway-id', nat]);
  if (natGateways.length) await step('wait for the NAT gateway', ['ec2', 'wait', 'nat-gateway-deleted', '--nat-gateway-ids', ...natGateways], 20 * 60_000);
  for (const allocation of of('ec2', 'elastic-ip')) await step(`release address ${allocation}`, ['ec2', 'release-address', '--allocation-id', allocation]);
  // Groups reference each other, so every rule goes before any group.
  const groups = of('ec2', 'security-group');
  for (const group of groups) await revokeRules(runner, group, region, options, step, failures);
  const inUse = /DependencyViolation|InvalidGroup\.InUse/;
  for (const group of groups) await step(`delete security group ${group}`, ['ec2', 'delete-security-group', '--group-id', group], undefined, inUse);
  for (const subnet of of('ec2', 'subnet')) await step(`delete subnet ${subnet}`, ['ec2', 'delete-subnet', '--subnet-id', subnet], undefined, inUse);
  for (const table of of('ec2', 'route-table')) await step(`delete route table ${table}`, ['ec2', 'delete-route-table', '--route-table-id', table]);
  const vpcs = of('ec2', 'vpc');
  for (const gateway of of('ec2', 'internet-gateway')) {
    for (const vpc of vpcs)
      await step(`detach internet gateway ${gateway}`, ['ec2', 'detach-internet-gateway', '--internet-gateway-id', gateway, '--vpc-id', vpc], undefined, inUse);
    await step(`delete internet gateway ${gateway}`, ['ec2', 'delete-internet-gateway', '--internet-gateway-id', gateway]);
  }
  for (const vpc of vpcs) await step(`delete VPC ${vpc}`, ['ec2', 'delete-vpc', '--vpc-id', vpc], undefined, inUse);
}

/** What nothing else depends on: database groups, secrets, the log group, the key and the instance roles. */
async function deleteAccessories({ runner, bench, options, region, failures, of, step }: Deletion): Promise<void> {
  for (const group of of('rds', 'subgrp')) await step(`delete DB subnet group ${group}`, ['rds', 'delete-db-subnet-group', '--db-subnet-group-name', group]);
  for (const group of of('rds', 'cluster-pg')) {
    await step(`delete DB cluster parameter group ${group}`, ['rds', 'delete-db-cluster-parameter-group', '--db-cluster-parameter-group-name', group]);
  }
  for (const arn of bench.arns.filter((a) => parseArn(a).service === 'secretsmanager')) {
    await step(`delete secret ${arn}`, ['secretsmanager', 'delete-secret', '--secret-id', arn, '--force-delete-without-recovery']);
  }
  for (const logGroup of of('logs', 'log-group')) {
    const name = logGroup.replace(/:\*$/, '');
    await step(`delete log group ${name}`, ['logs', 'delete-log-group', '--log-group-name', name]);
  }
  for (const key of of('kms', 'key')) {
    // A key scheduled by an earlier sweep stays listed (with its tags) until AWS
    // deletes it: that is done, not a failure to report every hour.
    if ((await kmsKeyState(runner, key, region)) === 'PendingDeletion') {
      options.log(`${bench.bench}: KMS key ${key} is already pending deletion`);
      continue;
    }
    await step(`schedule deletion of KMS key ${key}`, ['kms', 'schedule-key-deletion', '--key-id', key, '--pending-window-in-days', '7']);
  }
  // IAM is global and not always listed by the tagging API: the roles are found by name.
  for (const role of ['app', 'metrics', 'node', 'expiry'].map((r) => `${bench.bench}-${r}`)) await deleteRole(runner, role, options, failures);
}

/** Retries while a network resource is still held by a deleting cluster, domain or instance. */
const DEPENDENCY_RETRIES = 20;
const DEPENDENCY_RETRY_MS = 30_000;
const DOMAIN_DELETE_TIMEOUT_MS = 60 * 60_000;
const DOMAIN_POLL_MS = 30_000;

const describeDomainSchema = z.object({ DomainStatus: z.object({ Deleted: z.boolean().optional() }) });
const describeKeySchema = z.object({ KeyMetadata: z.object({ KeyState: z.string() }) });

/** Polls describe-domain until AWS answers ResourceNotFoundException; false on timeout. */
async function waitForDomainDeletion(runner: CommandRunner, domain: string, region: string, sleep: (ms: number) => Promise<void>): Promise<boolean> {
  for (let waited = 0; waited <= DOMAIN_DELETE_TIMEOUT_MS; waited += DOMAIN_POLL_MS) {
    const result = await runner.run('aws', ['opensearch', 'describe-domain', '--domain-name', domain, '--region', region, '--output', 'json']);
    if (result.code !== 0 && /ResourceNotFoundException/.test(result.stderr)) return true;
    if (result.code === 0) {
      const parsed = describeDomainSchema.safeParse(safeJson(result.stdout));
      if (!parsed.success) return false;
    }
    await sleep(DOMAIN_POLL_MS);
  }
  return false;
}

/** The key's KeyState (Enabled, PendingDeletion, ...), or undefined when it cannot be read. */
async function kmsKeyState(runner: CommandRunner, key: string, region: string): Promise<string | undefined> {
  const result = await runner.run('aws', ['kms', 'describe-key', '--key-id', key, '--region', region, '--output', 'json']);
  if (result.code !== 0) return undefined;
  const parsed = describeKeySchema.safeParse(safeJson(result.stdout));
  return parsed.success ? parsed.data.KeyMetadata.KeyState : undefined;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function revokeRules(
  runner: CommandRunner,
  group: string,
  region: string,
  options: JanitorOptions,
  step: (what: string, args: string[]) => Promise<boolean>,
  failures: string[],
): Promise<void> {
  const rulesSchema = z.object({
    SecurityGroupRules: z.array(z.object({ SecurityGroupRuleId: z.string(), IsEgress: z.boolean() })).default([]),
  });
  let rules;
  try {
    rules = rulesSchema.parse(
      await awsJson(runner, ['ec2', 'describe-security-group-rules', '--region', region, '--filters', `Name=group-id,Values=${group}`]),
    );
  } catch (error) {
    failures.push(`list rules of ${group}: ${(error as Error).message}`);
    return;
  }
  const ingress = rules.SecurityGroupRules.filter((r) => !r.IsEgress).map((r) => r.SecurityGroupRuleId);
  const egress = rules.SecurityGroupRules.filter((r) => r.IsEgress).map((r) => r.SecurityGroupRuleId);
  if (ingress.length)
    await step(`revoke ${ingress.length} ingress rule(s) of ${group}`, [
      'ec2',
      'revoke-security-group-ingress',
      '--group-id',
      group,
      '--security-group-rule-ids',
      ...ingress,
    ]);
  if (egress.length)
    await step(`revoke ${egress.length} egress rule(s) of ${group}`, [
      'ec2',
      'revoke-security-group-egress',
      '--group-id',
      group,
      '--security-group-rule-ids',
      ...egress,
    ]);
}

/**
 * The bench's expiry schedules (infra/aws/modules/expiry), found by their group's name,
 * the bench's: deleting the group deletes its schedules (Scheduler API Reference,
 * DeleteScheduleGroup).
 */
async function deleteScheduleGroup(runner: CommandRunner, group: string, region: string, options: JanitorOptions, failures: string[]): Promise<void> {
  const exists = await runner.run('aws', ['scheduler', 'get-schedule-group', '--name', group, '--region', region, '--output', 'json']);
  if (exists.code !== 0) return; // ResourceNotFoundException: gone, or a bench made before it had one.
  if (options.dryRun) {
    options.log(`would delete schedule group ${group} and its expiry schedules`);
    return;
  }
  const result = await runner.run('aws', ['scheduler', 'delete-schedule-group', '--name', group, '--region', region]);
  if (result.code !== 0) failures.push(`delete schedule group ${group}: ${lastLine(result.stderr)}`);
  else options.log(`${group}: deleted its expiry schedules`);
}

async function deleteRole(runner: CommandRunner, role: string, options: JanitorOptions, failures: string[]): Promise<void> {
  const exists = await runner.run('aws', ['iam', 'get-role', '--role-name', role, '--output', 'json']);
  if (exists.code !== 0) return; // NoSuchEntity: Terraform or an earlier janitor run removed it.
  if (options.dryRun) {
    options.log(`would delete IAM role ${role} and its instance profile`);
    return;
  }
  const calls: string[][] = [
    ['iam', 'remove-role-from-instance-profile', '--instance-profile-name', role, '--role-name', role],
    ['iam', 'delete-instance-profile', '--instance-profile-name', role],
    ['iam', 'detach-role-policy', '--role-name', role, '--policy-arn', 'arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore'],
    ['iam', 'delete-role-policy', '--role-name', role, '--policy-name', 'bench-secrets'],
    // The expiry role's (infra/aws/modules/expiry).
    ['iam', 'delete-role-policy', '--role-name', role, '--policy-name', 'bench-expiry'],
  ];
  // These may not apply or already be gone; only the role deletion itself must succeed.
  for (const call of calls) await runner.run('aws', call);
  const result = await runner.run('aws', ['iam', 'delete-role', '--role-name', role]);
  if (result.code !== 0) failures.push(`delete IAM role ${role}: ${lastLine(result.stderr)}`);
  else options.log(`deleted IAM role ${role}`);
}

export interface JanitorReport {
  regions: string[];
  expired: string[];
  kept: string[];
  destroyedWithTerraform: string[];
  deletedByTags: string[];
  /** Benches whose only remains are KMS keys AWS will delete after their waiting period. */
  pendingDeletion: string[];
  failures: string[];
}

export async function runJanitor(runner: CommandRunner, options: JanitorOptions): Promise<JanitorReport> {
  const regions = [...new Set(options.regions)].sort();
  const report: JanitorReport = { regions, expired: [], kept: [], destroyedWithTerraform: [], deletedByTags: [], pendingDeletion: [], failures: [] };
  for (const region of regions) {
    let benches: TaggedBench[];
    try {
      benches = await listBenches(runner, region);
    } catch (error) {
      report.failures.push(`${region}: cannot list benches: ${(error as Error).message}`);
      continue;
    }
    options.log(`${region}: ${benches.length} loadgate bench(es)`);
    for (const bench of benches) await sweepBench(runner, bench, { region, options }, report);
  }
  return report;
}

async function sweepBench(runner: CommandRunner, bench: TaggedBench, { region, options }: Sweep, report: JanitorReport): Promise<void> {
  if (!isExpired(bench, options.now)) {
    report.kept.push(bench.bench);
    options.log(`${bench.bench} (${region}): expires ${bench.expiresAt?.toISOString()}, kept`);
    return;
  }
  // What a finished sweep leaves behind: keys waiting out their deletion window.
  const keys = bench.arns.filter((arn) => parseArn(arn).service === 'kms' && parseArn(arn).type === 'key');
  if (keys.length === bench.arns.length) {
    const states = await Promise.all(keys.map((arn) => kmsKeyState(runner, parseArn(arn).id, region)));
    if (states.every((state) => state === 'PendingDeletion')) {
      report.pendingDeletion.push(bench.bench);
      options.log(`${bench.bench} (${region}): only its KMS key is left, already pending deletion`);
      return;
    }
  }
  report.expired.push(bench.bench);
  options.log(
    `${bench.bench} (${region}): ${bench.expiresAt ? `expired at ${bench.expiresAt.toISOString()}` : 'no valid ExpiresAt tag'}, ${bench.arns.length} tagged resource(s)`,
  );
  if (options.dryRun) {
    await deleteTaggedResources(runner, bench, options, region);
    return;
  }
  if (await destroyWithTerraform(runner, bench, options)) {
    report.destroyedWithTerraform.push(bench.bench);
    return;
  }
  const failures = await deleteTaggedResources(runner, bench, options, region);
  if (failures.length) report.failures.push(...failures.map((f) => `${bench.bench}: ${f}`));
  else report.deletedByTags.push(bench.bench);
}
