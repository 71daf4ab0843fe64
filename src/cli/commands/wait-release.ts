import { z } from 'zod';
import { loadGateConfig } from '../../config/load.ts';
import { resolveReleaseUrl } from '../../chat-servers/mattermost/release.ts';
import { waitForReleases } from '../../chat-servers/mattermost/release-wait.ts';
import { durationSchema } from '../../util/duration.ts';
import { InputError } from '../../util/errors.ts';
import { defineCommand, flag } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

const waitReleaseCommand = defineCommand({
  command: 'wait-release',
  about: `Before provisioning: waits until the Mattermost release tarball of every --version is
published (HEAD answers 200), logging each attempt. Gives up after target.releaseWait
(default 30m) with "release tarball not published" and exit 3.`,
  flags: {
    config: flag.required('FILE', z.string({ error: 'required: the gate config' }), 'Gate config (target.system: mattermost)'),
    version: flag.list('V', z.array(z.string().min(1)).min(1, 'required: at least one version'), 'A version whose release tarball to wait for', true),
    timeout: flag.optional('DURATION', durationSchema, 'Overrides target.releaseWait, e.g. 45m'),
    interval: flag.withDefault('DURATION', durationSchema.pipe(z.number().min(1, 'at least 1s')), '30s', 'Time between attempts'),
  },
});

export const usage = waitReleaseCommand.usage;

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = waitReleaseCommand.parse(argv);
  const config = await loadGateConfig(flags.config);
  if (config.target.system !== 'mattermost')
    throw new InputError(`${flags.config}: target.system is "${config.target.system}"; wait-release waits for Mattermost release tarballs`);
  const urls = flags.version.map((v) => resolveReleaseUrl(config.target, v, '--version'));
  await waitForReleases({ urls, timeoutSec: flags.timeout ?? config.target.releaseWait, intervalSec: flags.interval, log: (l) => io.err(l) });
  return 0;
}
