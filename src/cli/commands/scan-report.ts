import { z } from 'zod';
import { readReportDir } from '../../github/report-files.ts';
import { assertNoSecrets, secretsFromEnv } from '../../github/secret-scan.ts';
import { defineCommand, flag } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

const scanReportCommand = defineCommand({
  command: 'scan-report',
  about: `Refuses a report directory that holds a secret, before it leaves the job that made it
(the gate job, where the AWS session credentials and the OIDC request token live). It
looks in every file for the value of each environment variable named like a secret
(AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, GITHUB_TOKEN, ACTIONS_ID_TOKEN_REQUEST_TOKEN,
*_PASSWORD, ...) and for credential shapes (AWS access key IDs, GitHub tokens, private
keys, JSON Web Tokens). Prints each file and what it holds, never the value, and exits 3;
exits 0 when the report is clean. publish runs the same scan before committing.`,
  flags: {
    report: flag.required('DIR', z.string({ error: 'required: the report directory' }).min(1), 'The report directory (`loadgate run|compare --out`)'),
  },
});

export const usage = scanReportCommand.usage;

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = scanReportCommand.parse(argv);
  const files = await readReportDir(flags.report);
  assertNoSecrets(
    files.map((f) => ({ name: `${flags.report}/${f.path}`, content: f.content })),
    secretsFromEnv(),
    { action: 'let the report leave this job' },
  );
  io.err(`scan-report: ${files.length} files in ${flags.report}, no secret found`);
  return 0;
}
