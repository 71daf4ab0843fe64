import { z } from 'zod';
import { runJanitor } from '../../aws/janitor.ts';
import { processRunner } from '../../util/command-runner.ts';
import { loadGateConfig } from '../../config/load.ts';
import { InputError } from '../../util/errors.ts';
import { defineCommand, flag } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

const region = z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'expected an AWS region such as us-east-1');

const janitorCommand = defineCommand({
  command: 'janitor',
  about: `Destroys every AWS bench whose ExpiresAt tag has passed: terraform destroy with the bench's
own state key and the tfvars stored beside it, falling back to deleting its tagged
resources. A bench lives in the region its gate config names (bench.aws.region), so every
such region is swept: the --region flags, the comma-separated --regions list, and the
bench.aws.region of each --config on the AWS bench. Run hourly by
.github/workflows/janitor.yml. Exit 0 when every expired bench is gone, 1 when something
could not be deleted, 3 on bad flags.`,
  flags: {
    bucket: flag.required(
      '<state bucket>',
      z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'expected an S3 bucket name'),
      'S3 bucket of the Terraform state',
    ),
    'state-region': flag.required('<region>', region, 'region of the state bucket (the Terraform backend)'),
    region: flag.list('<region>', z.array(region), 'A region to sweep'),
    regions: flag.optional(
      '<a,b>',
      z
        .string()
        .transform((list) => list.split(/[\s,]+/).filter(Boolean))
        .pipe(z.array(region)),
      'Regions to sweep, comma-separated',
    ),
    config: flag.list('<gate.yml>', z.array(z.string().min(1)), 'A gate config whose bench.aws.region is swept'),
    infra: flag.withDefault('<dir>', z.string(), 'infra/aws', 'The Terraform root'),
    'dry-run': flag.toggle('List what would be destroyed, and destroy nothing'),
  },
});

export const usage = janitorCommand.usage;

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
  const flags = janitorCommand.parse(argv);
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
