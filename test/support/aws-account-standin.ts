import { z } from 'zod';

/**
 * The account-level AWS CLI calls provision makes before it creates anything (`loadgate
 * check-quota`), answered as the AWS CLI v2 answers them, for the aws stand-ins of the
 * action tests (test/support/aws-cli-standin.ts in-process, test/aws/actions-aws.test.ts
 * through test/support/aws-account-cli.ts):
 *
 * - `aws service-quotas get-service-quota` / `get-aws-default-service-quota`: the
 *   response shape of the Service Quotas API (botocore
 *   data/service-quotas/2019-06-24/service-2.json, GetServiceQuotaResponse: {Quota:
 *   ServiceQuota}). Service and quota codes are case-sensitive, and an unknown one is
 *   NoSuchResourceException ("The request failed because the specified service does not
 *   exist.", aws/aws-cli#4569; the message for an unknown quota code is this model's own). GetServiceQuota answers NoSuchResourceException, with an
 *   empty message, for a quota that has no value applied to the account (aws/aws-cli#6629;
 *   terraform-provider-aws internal/service/servicequotas/service_quota_data_source.go:
 *   "will only have a current value if it has been set"); the default is always there.
 *   Quotas are regional: an applied value holds in its region only. The answer of the
 *   default carries no account in its ARN (arn:aws:servicequotas:REGION::ec2/CODE).
 * - `aws ec2 describe-instances --filters Name=instance-state-name,Values=...`: the
 *   Reservations/Instances shape of DescribeInstancesResponse with State and CpuOptions
 *   (the CLI joins the pages); a filter other than instance-state-name is refused as EC2
 *   refuses an unknown one, since this model does not implement it.
 * - A call needs a region (--region, else AWS_REGION or AWS_DEFAULT_REGION), as the CLI
 *   does; required arguments missing exit 252 (the CLI's parameter error), service errors
 *   254 with "An error occurred (Code) when calling the Operation operation: message".
 * - An IAM action in `denied` is refused as AWS refuses it (AccessDeniedException for
 *   Service Quotas, UnauthorizedOperation for EC2).
 */

const STATE_CODES = { pending: 0, running: 16, 'shutting-down': 32, terminated: 48, stopping: 64, stopped: 80 } as const;

export const accountSchema = z.object({
  id: z
    .string()
    .regex(/^\d{12}$/)
    .default('123456789012'),
  /** Service Quotas ec2 L-1216C47A: AWS's default, and the value applied to the account per region (none: never applied). */
  standardVcpus: z.object({ default: z.number().nonnegative(), applied: z.record(z.string(), z.number().nonnegative()).default({}) }),
  instances: z
    .array(
      z.object({
        type: z.string(),
        region: z.string(),
        state: z.enum(Object.keys(STATE_CODES) as [keyof typeof STATE_CODES]),
        cores: z.number().int().positive(),
        threadsPerCore: z.number().int().positive(),
        spot: z.boolean().default(false),
      }),
    )
    .default([]),
  denied: z.array(z.string()).default([]),
});
export type AwsAccount = z.input<typeof accountSchema>;

export interface CliAnswer {
  code: number;
  stdout: string;
  stderr: string;
}

/** The one quota this account models, as Service Quotas describes it. */
const STANDARD = {
  ServiceCode: 'ec2',
  ServiceName: 'Amazon Elastic Compute Cloud (Amazon EC2)',
  QuotaCode: 'L-1216C47A',
  QuotaName: 'Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances',
  Unit: 'None',
  Adjustable: true,
  GlobalQuota: false,
  UsageMetric: {
    MetricNamespace: 'AWS/Usage',
    MetricName: 'ResourceCount',
    MetricDimensions: { Class: 'Standard/OnDemand', Resource: 'vCPU', Service: 'EC2', Type: 'Resource' },
    MetricStatisticRecommendation: 'Maximum',
  },
  QuotaAppliedAtLevel: 'ACCOUNT',
};
/** Service codes Service Quotas knows, of those a bench touches. */
const SERVICES = new Set(['ec2', 'rds', 'vpc', 'es', 'kms', 'logs', 'secretsmanager', 'ssm']);

const OPERATIONS: Record<string, string> = {
  'get-service-quota': 'GetServiceQuota',
  'get-aws-default-service-quota': 'GetAWSDefaultServiceQuota',
  'describe-instances': 'DescribeInstances',
};

const serviceError = (code: string, operation: string, message: string): CliAnswer => ({
  code: 254,
  stdout: '',
  stderr: `\nAn error occurred (${code}) when calling the ${operation} operation: ${message}\n`,
});
const paramError = (message: string): CliAnswer => ({
  code: 252,
  stdout: '',
  stderr: `usage: aws [options] <command> <subcommand> [<subcommand> ...] [parameters]\naws: error: ${message}\n`,
});
/** The CLI prints JSON with four spaces, and a double (QuotaValue) with its decimal point. */
const json = (value: unknown): CliAnswer => ({
  code: 0,
  stdout: `${JSON.stringify(value, null, 4).replace(/("Value": )(\d+)(,?)$/gm, '$1$2.0$3')}\n`,
  stderr: '',
});

function option(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

/** Answers the calls this model knows; undefined for any other call. */
export function answerAccountCall(input: AwsAccount, args: readonly string[], env: Record<string, string | undefined> = {}): CliAnswer | undefined {
  const [service, command] = args;
  const operation = OPERATIONS[command ?? ''];
  if (!operation || !((service === 'service-quotas' && command !== 'describe-instances') || (service === 'ec2' && command === 'describe-instances')))
    return undefined;
  const account = accountSchema.parse(input);
  const region = option(args, '--region') ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  if (!region) return { code: 253, stdout: '', stderr: '\nYou must specify a region. You can also configure your region by running "aws configure".\n' };
  const action = `${service === 'ec2' ? 'ec2' : 'servicequotas'}:${operation}`;
  if (account.denied.includes(action)) {
    const who = `arn:aws:sts::${account.id}:assumed-role/loadgate-bench/GitHubActions`;
    return service === 'ec2'
      ? serviceError(
          'UnauthorizedOperation',
          operation,
          `You are not authorized to perform this operation. User: ${who} is not authorized to perform: ${action} because no identity-based policy allows the ${action} action`,
        )
      : serviceError('AccessDeniedException', operation, `User: ${who} is not authorized to perform: ${action}`);
  }
  if (service === 'ec2') return describeInstances(account, args, region);

  const serviceCode = option(args, '--service-code');
  const quotaCode = option(args, '--quota-code');
  const missing = [!serviceCode && '--service-code', !quotaCode && '--quota-code'].filter(Boolean);
  if (missing.length) return paramError(`the following arguments are required: ${missing.join(', ')}`);
  if (!SERVICES.has(serviceCode as string))
    return serviceError('NoSuchResourceException', operation, 'The request failed because the specified service does not exist.');
  if (serviceCode !== STANDARD.ServiceCode || quotaCode !== STANDARD.QuotaCode) {
    return serviceError('NoSuchResourceException', operation, 'The request failed because the specified quota does not exist.');
  }
  if (command === 'get-aws-default-service-quota') {
    return json({ Quota: { ...STANDARD, QuotaArn: `arn:aws:servicequotas:${region}::ec2/${STANDARD.QuotaCode}`, Value: account.standardVcpus.default } });
  }
  const applied = account.standardVcpus.applied[region];
  if (applied === undefined) return serviceError('NoSuchResourceException', operation, '');
  return json({ Quota: { ...STANDARD, QuotaArn: `arn:aws:servicequotas:${region}:${account.id}:ec2/${STANDARD.QuotaCode}`, Value: applied } });
}

function describeInstances(account: z.output<typeof accountSchema>, args: readonly string[], region: string): CliAnswer {
  let states: string[] | undefined;
  const i = args.indexOf('--filters');
  const after = i >= 0 ? args.slice(i + 1) : [];
  const end = after.findIndex((a) => a.startsWith('--'));
  for (const filter of end < 0 ? after : after.slice(0, end)) {
    const m = /^Name=([^,]+),Values=(.+)$/.exec(filter);
    if (!m) return paramError(`argument --filters: Error parsing parameter '--filters': Expected: '=', received: '${filter}'`);
    if (m[1] !== 'instance-state-name') return serviceError('InvalidParameterValue', 'DescribeInstances', `The filter '${m[1]}' is invalid`);
    states = (m[2] as string).split(',');
  }
  const instances = account.instances
    .map((instance, n) => ({ instance, n }))
    .filter(({ instance }) => instance.region === region && (!states || states.includes(instance.state)));
  return json({
    Reservations: instances.map(({ instance, n }) => ({
      ReservationId: `r-${n.toString(16).padStart(17, '0')}`,
      OwnerId: account.id,
      Groups: [],
      Instances: [
        {
          InstanceId: `i-${n.toString(16).padStart(17, '0')}`,
          InstanceType: instance.type,
          Placement: { AvailabilityZone: `${region}a`, Tenancy: 'default' },
          State: { Code: STATE_CODES[instance.state], Name: instance.state },
          CpuOptions: { CoreCount: instance.cores, ThreadsPerCore: instance.threadsPerCore },
          ...(instance.spot ? { InstanceLifecycle: 'spot' } : {}),
        },
      ],
    })),
  });
}
