import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Resources of infra/aws that moto cannot create, each left out of the
 * emulator's copy of the module by a Terraform override file (the module
 * itself is unchanged; the mocked `terraform test` still plans and applies
 * them). The reason names what moto lacks, checked against moto 5.1.12
 * (https://docs.getmoto.org/en/latest/docs/services/ec2.html lists the
 * implemented EC2 operations). OpenSearch is left out by the tfvars instead
 * (OPENSEARCH_SKIP).
 */
export interface EmulatorSkip {
  resource: string;
  reason: string;
  /** Override file (path inside infra/aws) and its contents. */
  file: string;
  hcl: string;
}

const EMULATOR_SKIPS: readonly EmulatorSkip[] = [
  {
    resource: 'module.network.aws_ec2_subnet_cidr_reservation.{public,private}_fixed',
    reason: 'moto does not implement CreateSubnetCidrReservation (its server answers 500)',
    file: 'modules/network/emulator_override.tf',
    hcl: `# Written by test/aws/emulator/skips.ts into the emulator's copy only.
resource "aws_ec2_subnet_cidr_reservation" "public_fixed" {
  count = 0
}

resource "aws_ec2_subnet_cidr_reservation" "private_fixed" {
  count = 0
}

output "public_fixed_cidr_block" {
  value = cidrsubnet(aws_subnet.public[0].cidr_block, 5, 1)
}

output "private_fixed_cidr_block" {
  value = cidrsubnet(aws_subnet.private[0].cidr_block, 5, 1)
}
`,
  },
  {
    resource: 'module.db.aws_rds_cluster_parameter_group.this',
    reason:
      'moto refuses ListTagsForResource on a cluster parameter group ARN (InvalidParameterValue: Invalid resource name), which the provider reads after creating it; the cluster uses the default group',
    file: 'modules/aurora-postgresql/emulator_override.tf',
    hcl: `# Written by test/aws/emulator/skips.ts into the emulator's copy only.
resource "aws_rds_cluster_parameter_group" "this" {
  count = 0
}

resource "aws_rds_cluster" "this" {
  db_cluster_parameter_group_name = null
}
`,
  },
  {
    resource: 'module.*.aws_instance.this monitoring (detailed CloudWatch monitoring)',
    reason: 'moto answers MonitorInstances with 500 (not implemented), and the provider waits for monitoring to be enabled; instances are created without it',
    file: 'modules/nodes/emulator_override.tf',
    hcl: `# Written by test/aws/emulator/skips.ts into the emulator's copy only.
resource "aws_instance" "this" {
  monitoring = false
}
`,
  },
];

/** OpenSearch is not applied on the emulator (opensearch_count = 0): not a moto gap, but the time it would take. */
export const OPENSEARCH_SKIP = {
  resource: 'module.opensearch[0].aws_opensearch_domain.this',
  reason:
    'the provider waits 10 minutes before its first check of a new domain (internal/service/opensearch/wait.go, waitForDomainCreation: tfresource.WithDelay(10*time.Minute)), too long for every CI run; moto itself creates VPC domains',
};

/** Writes every skip's override file into a copy of infra/aws; returns what was skipped. */
export async function writeEmulatorOverrides(infraCopy: string): Promise<readonly EmulatorSkip[]> {
  for (const skip of EMULATOR_SKIPS) await writeFile(join(infraCopy, skip.file), skip.hcl);
  return EMULATOR_SKIPS;
}
