import { z } from 'zod';
import { loadGateConfig } from '../../config/load.ts';
import { accountNeeds } from '../../aws/bench-plan.ts';
import { resolveBench } from '../../aws/presets.ts';
import { checkVcpuQuota, renderVcpuCheck, standardVcpuNeed } from '../../aws/quota.ts';
import { processRunner, type CommandRunner } from '../../util/command-runner.ts';
import { InputError } from '../../util/errors.ts';
import { defineCommand, flag } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

const checkQuotaCommand = defineCommand({
  command: 'check-quota',
  about: `Checks that the AWS account can run the bench of a gate before anything is provisioned:
the vCPUs of the bench's instances (as loadgate plan counts them) plus the vCPUs of the
on-demand instances of the same families already pending or running in the bench's
region, against the account's Service Quotas quota ec2 L-1216C47A, "Running On-Demand
Standard (A, C, D, H, I, M, R, T, Z) instances": the value applied to the account, or
AWS's default when none was applied. Calls the AWS CLI with the credentials of the
environment (servicequotas:GetServiceQuota, servicequotas:GetAWSDefaultServiceQuota,
ec2:DescribeInstances). Exits 0 when the bench fits, 1 when it does not (saying how to
request an increase), 3 on bad input or when the quota cannot be read.`,
  flags: {
    config: flag.required(
      'FILE',
      z.string({ error: 'name the gate config with --config' }).min(1),
      "gate config (bench.kind: aws); the bench's region is bench.aws.region",
    ),
  },
  positionals: z.array(z.string()).max(0, 'check-quota takes no positional arguments; name the config with --config'),
});

export const usage = checkQuotaCommand.usage;

export async function run(argv: string[], io: CliIO, runner: CommandRunner = processRunner): Promise<number> {
  const flags = checkQuotaCommand.parse(argv);
  const config = await loadGateConfig(flags.config);
  if (config.bench.kind !== 'aws') {
    throw new InputError(`${flags.config}: bench.kind is "${config.bench.kind}"; check-quota checks the AWS bench (bench.kind: aws)`);
  }
  const bench = resolveBench(config.bench.aws, config.tests, config.mode);
  const check = await checkVcpuQuota(runner, bench.region, standardVcpuNeed(accountNeeds(bench)));
  if (!check.fits) {
    io.err(renderVcpuCheck(check));
    return 1;
  }
  io.out(renderVcpuCheck(check));
  return 0;
}
