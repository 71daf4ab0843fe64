import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

/**
 * The janitor: finds loadgate benches whose ExpiresAt tag has passed (Resource
 * Groups Tagging API) and destroys them, with `terraform destroy` from their
 * state key when it can, else by deleting the tagged resources in dependency
 * order. Every AWS and Terraform call goes through a CommandRunner, so tests
 * replay recorded responses instead of calling AWS.
 */

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CommandRunner {
  run(command: string, args: readonly string[], options?: { timeoutMs?: number }): Promise<CommandResult>;
}

/** Runs real commands, each bounded in time (an Aurora destroy takes up to ~20 minutes). */
export const processRunner: CommandRunner = {
  run(command, args, options = {}) {
    return new Promise((resolve) => {
      const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: options.timeoutMs ?? 45 * 60_000 });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', (error) => resolve({ code: 127, stdout, stderr: `${stderr}${error.message}` }));
      child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    });
  },
};

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
  region: string;
  /** S3 bucket of the Terraform states. */
  bucket: string;
  /** Directory of the infra/aws root module. */
  infraDir: string;
  now: Date;
  dryRun: boolean;
  log: (line: string) => void;
}

/** terraform destroy with the bench's own state and tfvars; false when that is not possible. */
export async function destroyWithTerraform(runner: CommandRunner, bench: TaggedBench, options: JanitorOptions): Promise<boolean> {
  if (!bench.stateKey) {
    options.log(`${bench.bench}: no StateKey tag, falling back to deleting tagged resources`);
    return false;
  }
  const work = await mkdtemp(join(tmpdir(), 'loadgate-janitor-'));
  try {
    const tfvars = join(work, 'terraform.tfvars.json');
    const tfvarsKey = bench.stateKey.replace(/terraform\.tfstate$/, 'terraform.tfvars.json');
    const copy = await runner.run('aws', ['s3', 'cp', '--region', options.region, `s3://${options.bucket}/${tfvarsKey}`, tfvars]);
    if (copy.code !== 0) {
      options.log(`${bench.bench}: cannot read s3://${options.bucket}/${tfvarsKey} (${copy.stderr.trim()}), falling back to deleting tagged resources`);
      return false;
    }
    const chdir = `-chdir=${options.infraDir}`;
    const init = await runner.run('terraform', [
      chdir, 'init', '-input=false', '-reconfigure',
      `-backend-config=bucket=${options.bucket}`, `-backend-config=key=${bench.stateKey}`, `-backend-config=region=${options.region}`,
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
 * (search domain, database instances, EC2 instances), then the database cluster,
 * NAT gateway and addresses, security groups, subnets, route tables, gateway and
 * VPC, then groups, secrets, the key and the instance roles. Best effort: each
 * failure is recorded and the rest still runs.
 */
export async function deleteTaggedResources(runner: CommandRunner, bench: TaggedBench, options: JanitorOptions): Promise<string[]> {
  const failures: string[] = [];
  const region = ['--region', options.region];
  const of = (service: string, type: string): string[] =>
    bench.arns.map(parseArn).filter((r) => r.service === service && r.type === type).map((r) => r.id);
  const step = async (what: string, args: string[], timeoutMs?: number): Promise<boolean> => {
    if (options.dryRun) {
      options.log(`${bench.bench}: would run aws ${args.join(' ')}`);
      return true;
    }
    const result = await runner.run('aws', [...args, ...region], timeoutMs ? { timeoutMs } : undefined);
    if (result.code !== 0) {
      failures.push(`${what}: ${lastLine(result.stderr)}`);
      return false;
    }
    options.log(`${bench.bench}: ${what}`);
    return true;
  };

  for (const domain of of('es', 'domain')) await step(`delete OpenSearch domain ${domain}`, ['opensearch', 'delete-domain', '--domain-name', domain]);
  const dbInstances = of('rds', 'db');
  for (const db of dbInstances) {
    await step(`delete DB instance ${db}`, ['rds', 'delete-db-instance', '--db-instance-identifier', db, '--skip-final-snapshot', '--delete-automated-backups']);
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
  const natGateways = of('ec2', 'natgateway');
  for (const nat of natGateways) await step(`delete NAT gateway ${nat}`, ['ec2', 'delete-nat-gateway', '--nat-gateway-id', nat]);
  if (natGateways.length) await step('wait for the NAT gateway', ['ec2', 'wait', 'nat-gateway-deleted', '--nat-gateway-ids', ...natGateways], 20 * 60_000);
  for (const allocation of of('ec2', 'elastic-ip')) await step(`release address ${allocation}`, ['ec2', 'release-address', '--allocation-id', allocation]);
  // Groups reference each other, so every rule goes before any group.
  const groups = of('ec2', 'security-group');
  for (const group of groups) await revokeRules(runner, group, options, step, failures);
  for (const group of groups) await step(`delete security group ${group}`, ['ec2', 'delete-security-group', '--group-id', group]);
  for (const subnet of of('ec2', 'subnet')) await step(`delete subnet ${subnet}`, ['ec2', 'delete-subnet', '--subnet-id', subnet]);
  for (const table of of('ec2', 'route-table')) await step(`delete route table ${table}`, ['ec2', 'delete-route-table', '--route-table-id', table]);
  const vpcs = of('ec2', 'vpc');
  for (const gateway of of('ec2', 'internet-gateway')) {
    for (const vpc of vpcs) await step(`detach internet gateway ${gateway}`, ['ec2', 'detach-internet-gateway', '--internet-gateway-id', gateway, '--vpc-id', vpc]);
    await step(`delete internet gateway ${gateway}`, ['ec2', 'delete-internet-gateway', '--internet-gateway-id', gateway]);
  }
  for (const vpc of vpcs) await step(`delete VPC ${vpc}`, ['ec2', 'delete-vpc', '--vpc-id', vpc]);
  for (const group of of('rds', 'subgrp')) await step(`delete DB subnet group ${group}`, ['rds', 'delete-db-subnet-group', '--db-subnet-group-name', group]);
  for (const group of of('rds', 'cluster-pg')) {
    await step(`delete DB cluster parameter group ${group}`, ['rds', 'delete-db-cluster-parameter-group', '--db-cluster-parameter-group-name', group]);
  }
  for (const arn of bench.arns.filter((a) => parseArn(a).service === 'secretsmanager')) {
    await step(`delete secret ${arn}`, ['secretsmanager', 'delete-secret', '--secret-id', arn, '--force-delete-without-recovery']);
  }
  for (const key of of('kms', 'key')) await step(`schedule deletion of KMS key ${key}`, ['kms', 'schedule-key-deletion', '--key-id', key, '--pending-window-in-days', '7']);
  // IAM is global and not always listed by the tagging API: the roles are found by name.
  for (const role of ['app', 'metrics', 'node'].map((r) => `${bench.bench}-${r}`)) await deleteRole(runner, role, options, failures);
  return failures;
}

async function revokeRules(
  runner: CommandRunner,
  group: string,
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
      await awsJson(runner, ['ec2', 'describe-security-group-rules', '--region', options.region, '--filters', `Name=group-id,Values=${group}`]),
    );
  } catch (error) {
    failures.push(`list rules of ${group}: ${(error as Error).message}`);
    return;
  }
  const ingress = rules.SecurityGroupRules.filter((r) => !r.IsEgress).map((r) => r.SecurityGroupRuleId);
  const egress = rules.SecurityGroupRules.filter((r) => r.IsEgress).map((r) => r.SecurityGroupRuleId);
  if (ingress.length) await step(`revoke ${ingress.length} ingress rule(s) of ${group}`, ['ec2', 'revoke-security-group-ingress', '--group-id', group, '--security-group-rule-ids', ...ingress]);
  if (egress.length) await step(`revoke ${egress.length} egress rule(s) of ${group}`, ['ec2', 'revoke-security-group-egress', '--group-id', group, '--security-group-rule-ids', ...egress]);
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
  ];
  // The first four may already be gone; only the role deletion itself must succeed.
  for (const call of calls) await runner.run('aws', call);
  const result = await runner.run('aws', ['iam', 'delete-role', '--role-name', role]);
  if (result.code !== 0) failures.push(`delete IAM role ${role}: ${lastLine(result.stderr)}`);
  else options.log(`deleted IAM role ${role}`);
}

export interface JanitorReport {
  expired: string[];
  kept: string[];
  destroyedWithTerraform: string[];
  deletedByTags: string[];
  failures: string[];
}

export async function runJanitor(runner: CommandRunner, options: JanitorOptions): Promise<JanitorReport> {
  const report: JanitorReport = { expired: [], kept: [], destroyedWithTerraform: [], deletedByTags: [], failures: [] };
  const benches = await listBenches(runner, options.region);
  for (const bench of benches) {
    if (!isExpired(bench, options.now)) {
      report.kept.push(bench.bench);
      options.log(`${bench.bench}: expires ${bench.expiresAt?.toISOString()}, kept`);
      continue;
    }
    report.expired.push(bench.bench);
    options.log(`${bench.bench}: ${bench.expiresAt ? `expired at ${bench.expiresAt.toISOString()}` : 'no valid ExpiresAt tag'}, ${bench.arns.length} tagged resource(s)`);
    if (options.dryRun) {
      await deleteTaggedResources(runner, bench, options);
      continue;
    }
    if (await destroyWithTerraform(runner, bench, options)) {
      report.destroyedWithTerraform.push(bench.bench);
      continue;
    }
    const failures = await deleteTaggedResources(runner, bench, options);
    if (failures.length) report.failures.push(...failures.map((f) => `${bench.bench}: ${f}`));
    else report.deletedByTags.push(bench.bench);
  }
  return report;
}
