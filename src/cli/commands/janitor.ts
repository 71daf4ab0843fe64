import { z } from 'zod';
import { runJanitor } from '../../aws/janitor.ts';
import { processRunner } from '../../util/command-runner.ts';
import { loadGateConfig } from '../../config/load.ts';
import { InputError } from '../../util/errors.ts';
import { parseFlags } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

export const usage = `Usage: loadgate janitor --bucket <state bucket> --state-region <region>
                       [--region <region>]... [--regions <a,b>] [--config <gate.yml>]...
                       [--infra infra/aws] [--dry-run]

Destroys every AWS bench whose ExpiresAt tag has passed: terraform destroy with the bench's
own state key and the tfvars stored beside it, falling back to deleting its tagged
resources. A bench lives in the region its gate config names (bench.aws.region), so every
such region is swept: the --region flags, the comma-separated --regions list, and the
bench.aws.region of each --config on the AWS bench. Run hourly by
.github/workflows/janitor.yml. Exit 0 when every expired bench is gone, 1 when something
could not be deleted, 3 on bad flags.

  --state-region   region of the state bucket (the Terraform backend)`;

const region = z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'expected an AWS region such as us-east-1');

const flagsSchema = z.strictObject({
  bucket: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'expected an S3 bucket name'),
  'state-region': region,
  region: z.array(region).default([]),
  regions: z
    .string()
    .transform((list) => list.split(/[\s,]+/).filter(Boolean))
    .pipe(z.array(region))
    .optional(),
  config: z.array(z.string().min(1)).default([]),
  infra: z.string().default('infra/aws'),
  'dry-run': z.boolean().default(false),
  positionals: z.array(z.string()).max(0, 'unexpected argument'),
});

/** Every region a sweep covers: flags, the list, and the AWS gate configs' regions. */
export async function sweepRegions(flags: { region: string[]; regions?: string[] | undefined; config: string[] }): Promise<string[]> {
  const regions = new Set([...flags.region, ...(flags.regions ?? [])]);
  for (const file of flags.config) {
    const config = await loadGateConfig(file);
    if (config.bench.kind === 'aws') regions.add(config.bench.aws.region);
  }
  if (regions.size === 0) {
    throw new InputError(`no region to sweep: give --region, --regions or a --config on the AWS bench\n\n${usage}`);
  }
  return [...regions].sort();
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = parseFlags(
    argv,
    {
      bucket: { type: 'string' },
      'state-region': { type: 'string' },
      region: { type: 'string', multiple: true },
      regions: { type: 'string' },
      config: { type: 'string', multiple: true },
      infra: { type: 'string' },
      'dry-run': { type: 'boolean' },
    },
    flagsSchema,
    usage,
  );
  const regions = await sweepRegions(flags);
  io.out(`janitor: sweeping ${regions.join(', ')}`);
  const report = await runJanitor(processRunner, {
    bucket: flags.bucket,
    regions,
    stateRegion: flags['state-region'],
    infraDir: flags.infra,
    now: new Date(),
    dryRun: flags['dry-run'],
    log: (line) => io.out(line),
  });
  io.out(
    `janitor: ${report.expired.length} expired, ${report.kept.length} kept, ${report.destroyedWithTerraform.length} destroyed with terraform, ` +
      `${report.deletedByTags.length} deleted by tags, ${report.pendingDeletion.length} waiting for their key's deletion, ${report.failures.length} failure(s)`,
  );
  for (const failure of report.failures) io.err(`janitor: ${failure}`);
  return report.failures.length ? 1 : 0;
}
