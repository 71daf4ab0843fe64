import { z } from 'zod';
import { loadGateConfig } from '../../config/load.ts';
import { resolveReleaseUrl } from '../../target/mattermost/release.ts';
import { waitForReleases } from '../../target/mattermost/release-wait.ts';
import { durationSchema } from '../../util/duration.ts';
import { InputError } from '../../util/errors.ts';
import { parseFlags } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

export const usage = `Usage: loadgate wait-release --config gate.yml --version V [--version V2] [options]

Before provisioning: waits until the Mattermost release tarball of every --version is
published (HEAD answers 200), logging each attempt. Gives up after target.releaseWait
(default 30m) with "release tarball not published" and exit 3.

Options:
  --timeout DURATION    Overrides target.releaseWait, e.g. 45m
  --interval DURATION   Time between attempts (default 30s)`;

const options = {
  config: { type: 'string' },
  version: { type: 'string', multiple: true },
  timeout: { type: 'string' },
  interval: { type: 'string' },
} as const;

const flagsSchema = z.strictObject({
  config: z.string({ error: 'required: the gate config' }),
  version: z.array(z.string().min(1)).min(1, 'required: at least one version'),
  timeout: durationSchema.optional(),
  interval: durationSchema.pipe(z.number().min(1, 'at least 1s')).default(30),
  positionals: z.array(z.string()).max(0, 'wait-release takes no positional arguments'),
});

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = parseFlags(argv, options, flagsSchema, usage);
  const config = await loadGateConfig(flags.config);
  if (config.target.system !== 'mattermost') throw new InputError(`${flags.config}: target.system is "${config.target.system}"; wait-release waits for Mattermost release tarballs`);
  const urls = flags.version.map((v) => resolveReleaseUrl(config.target, v, '--version'));
  await waitForReleases({ urls, timeoutSec: flags.timeout ?? config.target.releaseWait, intervalSec: flags.interval, log: (l) => io.err(l) });
  return 0;
}
