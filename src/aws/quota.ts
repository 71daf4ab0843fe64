import { z } from 'zod';
import type { CommandRunner } from '../util/command-runner.ts';
import { InputError } from '../util/errors.ts';
import { instanceVcpus, STANDARD_VCPU_QUOTA, type AccountNeed } from './bench-plan.ts';

/**
 * The account check provision makes before it creates anything: the on-demand vCPUs a
 * bench needs against the account's quota in the bench's region, less the vCPUs already
 * running there. Past the quota, EC2 refuses the launches (VcpuLimitExceeded) in the
 * middle of an apply that has already created the network and the database.
 */

/** The answer of get-service-quota and get-aws-default-service-quota (Service Quotas API, GetServiceQuotaResponse). */
const quotaAnswerSchema = z.object({
  Quota: z.object({
    QuotaCode: z.string(),
    Value: z.number().nonnegative().optional(),
    ErrorReason: z.object({ ErrorCode: z.string().optional(), ErrorMessage: z.string().optional() }).optional(),
  }),
});

/** describe-instances, the fields counted (EC2 API, DescribeInstancesResponse; the CLI joins the pages). */
const instancesAnswerSchema = z.object({
  Reservations: z.array(
    z.object({
      Instances: z
        .array(
          z.object({
            InstanceType: z.string(),
            InstanceLifecycle: z.string().optional(),
            CpuOptions: z.object({ CoreCount: z.number().int().positive(), ThreadsPerCore: z.number().int().positive() }).optional(),
          }),
        )
        .default([]),
    }),
  ),
});

export interface QuotaValue {
  value: number;
  /** applied: the account's own value (an increase, or the value AWS set for it); default: AWS's default, when no value was applied. */
  source: 'applied' | 'default';
}

export interface VcpuCheck {
  region: string;
  need: AccountNeed;
  quota: QuotaValue;
  /** vCPUs of the Standard-family on-demand instances already pending or running in the region. */
  running: number;
  /** Instances whose vCPUs could not be read, by type. */
  uncounted: string[];
  fits: boolean;
}

const denied = (stderr: string): boolean => /\((AccessDeniedException|AccessDenied|UnauthorizedOperation)\)/.test(stderr);

async function aws(runner: CommandRunner, args: string[], permission: string): Promise<{ ok: true; json: unknown } | { ok: false; stderr: string }> {
  const result = await runner.run('aws', [...args, '--output', 'json'], { timeoutMs: 120_000 });
  if (result.code !== 0) {
    if (denied(result.stderr)) {
      throw new InputError(
        `aws ${args.slice(0, 2).join(' ')}: access denied. The role needs ${permission} (infra/iam/github-role-policy.json, docs/aws.md): ${result.stderr.trim()}`,
      );
    }
    return { ok: false, stderr: result.stderr.trim() };
  }
  try {
    return { ok: true, json: JSON.parse(result.stdout) };
  } catch {
    throw new InputError(`aws ${args.slice(0, 2).join(' ')}: the answer is not JSON: ${result.stdout.slice(0, 200)}`);
  }
}

function quotaOf(json: unknown, call: string): z.infer<typeof quotaAnswerSchema>['Quota'] {
  const parsed = quotaAnswerSchema.safeParse(json);
  if (!parsed.success) throw new InputError(`aws service-quotas ${call}: unexpected answer: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data.Quota;
}

/**
 * The quota's value in the region: the applied value, else AWS's default. GetServiceQuota
 * answers NoSuchResourceException when no value was ever applied to the account, and
 * may answer a quota with an ErrorReason and no Value; the AWS provider reads both as
 * "no applied value" and falls back to GetAWSDefaultServiceQuota
 * (terraform-provider-aws internal/service/servicequotas/find.go, service_quota_data_source.go).
 */
export async function readQuota(runner: CommandRunner, region: string, service: string, code: string): Promise<QuotaValue> {
  const args = ['--service-code', service, '--quota-code', code, '--region', region];
  const applied = await aws(runner, ['service-quotas', 'get-service-quota', ...args], 'servicequotas:GetServiceQuota');
  if (applied.ok) {
    const quota = quotaOf(applied.json, 'get-service-quota');
    if (quota.Value !== undefined && !quota.ErrorReason) return { value: quota.Value, source: 'applied' };
  } else if (!/\(NoSuchResourceException\)/.test(applied.stderr)) {
    throw new InputError(`aws service-quotas get-service-quota (${service} ${code}, ${region}) failed: ${applied.stderr}`);
  }
  const fallback = await aws(runner, ['service-quotas', 'get-aws-default-service-quota', ...args], 'servicequotas:GetAWSDefaultServiceQuota');
  if (!fallback.ok) throw new InputError(`aws service-quotas get-aws-default-service-quota (${service} ${code}, ${region}) failed: ${fallback.stderr}`);
  const quota = quotaOf(fallback.json, 'get-aws-default-service-quota');
  if (quota.Value === undefined) {
    const reason = quota.ErrorReason ? `: ${quota.ErrorReason.ErrorCode ?? ''} ${quota.ErrorReason.ErrorMessage ?? ''}`.trimEnd() : '';
    throw new InputError(`Service Quotas has no value for ${service} ${code} in ${region}${reason}`);
  }
  return { value: quota.Value, source: 'default' };
}

/**
 * Whether the Standard on-demand quota covers an instance type: the families A, C, D, H,
 * I, M, R, T and Z (with I's im and is). Inf, Trn, DL, HPC, Mac, VT, X, U, F, G and P have
 * quotas of their own (EC2 User Guide, "On-Demand Instance quotas").
 */
export function isStandardFamily(type: string): boolean {
  const family = /^([a-z]+)\d/.exec(type)?.[1];
  return family !== undefined && /^(?:[acdhimrtz]|im|is)$/.test(family);
}

/** vCPUs of the region's pending and running on-demand instances of the Standard families. */
async function runningStandardVcpus(runner: CommandRunner, region: string): Promise<{ vcpus: number; uncounted: string[] }> {
  const args = ['ec2', 'describe-instances', '--region', region, '--filters', 'Name=instance-state-name,Values=pending,running'];
  const answer = await aws(runner, args, 'ec2:DescribeInstances');
  if (!answer.ok) throw new InputError(`aws ec2 describe-instances (${region}) failed: ${answer.stderr}`);
  const parsed = instancesAnswerSchema.safeParse(answer.json);
  if (!parsed.success) throw new InputError(`aws ec2 describe-instances: unexpected answer: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  let vcpus = 0;
  const uncounted: string[] = [];
  for (const instance of parsed.data.Reservations.flatMap((r) => r.Instances)) {
    // Spot instances count against the Spot quotas, not this one.
    if (instance.InstanceLifecycle === 'spot' || !isStandardFamily(instance.InstanceType)) continue;
    const cpus = instance.CpuOptions ? instance.CpuOptions.CoreCount * instance.CpuOptions.ThreadsPerCore : instanceVcpus(instance.InstanceType);
    if (cpus === undefined) uncounted.push(instance.InstanceType);
    else vcpus += cpus;
  }
  return { vcpus, uncounted };
}

export async function checkVcpuQuota(runner: CommandRunner, region: string, need: AccountNeed): Promise<VcpuCheck> {
  const quota = await readQuota(runner, region, need.service, need.code);
  const running = await runningStandardVcpus(runner, region);
  return { region, need, quota, running: running.vcpus, uncounted: running.uncounted, fits: running.vcpus + need.needed <= quota.value };
}

/** The Standard vCPU need among a plan's account needs. */
export function standardVcpuNeed(needs: readonly AccountNeed[]): AccountNeed {
  const need = needs.find((n) => n.service === STANDARD_VCPU_QUOTA.service && n.code === STANDARD_VCPU_QUOTA.code);
  if (!need) throw new Error(`the plan names no ${STANDARD_VCPU_QUOTA.code} need`);
  return need;
}

export function renderVcpuCheck(check: VcpuCheck): string {
  const { need, quota, region } = check;
  const source = quota.source === 'applied' ? "the account's applied value" : 'the AWS default: no value applied to this account';
  const lines = [
    `Service Quotas ${need.service} ${need.code} (${STANDARD_VCPU_QUOTA.name}) in ${region}:`,
    `  quota          ${quota.value} vCPUs (${source})`,
    `  running        ${check.running} vCPUs (pending and running on-demand instances of those families)`,
    `  this bench     ${need.needed} vCPUs (${need.detail})`,
  ];
  if (check.uncounted.length) lines.push(`  not counted    running ${[...new Set(check.uncounted)].join(', ')} (vCPUs unknown)`);
  const total = check.running + need.needed;
  if (check.fits) {
    lines.push(`Quota: ${total} of ${quota.value} vCPUs with this bench; ${quota.value - total} to spare.`);
    return lines.join('\n');
  }
  lines.push(
    `REFUSED: this bench needs ${need.needed} vCPUs of ${need.code} and ${check.running} are already running in ${region}, ` +
      `${total} in all, over the quota of ${quota.value}; nothing was provisioned.`,
    `Request an increase to at least ${total} in the Service Quotas console ` +
      `(https://${region}.console.aws.amazon.com/servicequotas/home/services/${need.service}/quotas/${need.code}) or with`,
    `  aws service-quotas request-service-quota-increase --service-code ${need.service} --quota-code ${need.code} --desired-value ${total} --region ${region}`,
    'then re-run once it is approved; or pick a smaller bench (bench.aws.preset, the instance counts and types), or stop instances in the region.',
  );
  return lines.join('\n');
}
