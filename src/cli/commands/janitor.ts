import { z } from 'zod';
import { processRunner, runJanitor } from '../../aws/janitor.ts';
import { parseFlags } from '../args.ts';
import type { CliIO } from '../io.ts';

export const usage = `Usage: loadgate janitor --bucket <state bucket> --region <region> [--infra infra/aws] [--dry-run]

Destroys every AWS bench whose ExpiresAt tag has passed: terraform destroy with the bench's
own state key, falling back to deleting its tagged resources. Run hourly by
.github/workflows/janitor.yml. Exit 0 when every expired bench is gone, 1 when something
could not be deleted, 3 on bad flags.`;

const flagsSchema = z.strictObject({
  bucket: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'expected an S3 bucket name'),
  region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'expected an AWS region such as us-east-1'),
  infra: z.string().default('infra/aws'),
  'dry-run': z.boolean().default(false),
  positionals: z.array(z.string()).max(0, 'unexpected argument'),
});

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = parseFlags(
    argv,
    { bucket: { type: 'string' }, region: { type: 'string' }, infra: { type: 'string' }, 'dry-run': { type: 'boolean' } },
    flagsSchema,
    usage,
  );
  const report = await runJanitor(processRunner, {
    bucket: flags.bucket,
    region: flags.region,
    infraDir: flags.infra,
    now: new Date(),
    dryRun: flags['dry-run'],
    log: (line) => io.out(line),
  });
  io.out(
    `janitor: ${report.expired.length} expired, ${report.kept.length} kept, ${report.destroyedWithTerraform.length} destroyed with terraform, ` +
      `${report.deletedByTags.length} deleted by tags, ${report.failures.length} failure(s)`,
  );
  for (const failure of report.failures) io.err(`janitor: ${failure}`);
  return report.failures.length ? 1 : 0;
}
