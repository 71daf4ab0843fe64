import { writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { loadGateConfig } from '../../config/load.ts';
import type { GateConfig } from '../../config/schema.ts';
import { resolveBench } from '../../aws/presets.ts';
import { perAgentMax } from '../../bench/aws/agent-users.ts';
import {
  LOADTEST_NG_PASSWORD,
  LOADTEST_NG_USER_PREFIX,
  SEED_DUMP_ADMIN,
  loadTestNgUsersLines,
  usernamePrefixProblem,
} from '../../chat-servers/mattermost/dataset-accounts.ts';
import { InputError } from '../../util/errors.ts';
import { defineCommand, flag } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

const command = defineCommand({
  command: 'mattermost-users',
  about: `Writes a users file for load-test-ng's datasets (the 12M-post dump of the seed
comparisons): accounts in load-test-ng's own scheme, "<prefix>-<n>@example.com
${LOADTEST_NG_PASSWORD}", one per line. load-test-ng's agents log each in and sign up the
ones the dataset lacks, as load-test-ng's own comparisons do on that dump; the k6 engine
only logs in, so its accounts must exist. With --config the count is what the gate needs:
for every agent of a side, an account per user it runs in the largest test. It prints the
dump's system admin, for the LOADGATE_ADMIN_EMAIL and LOADGATE_ADMIN_PASSWORD secrets.
docs/mattermost.md, "The dataset's accounts", says where each rule comes from.`,
  flags: {
    config: flag.optional('FILE', z.string(), 'Gate config (bench.kind aws): the count is the accounts it needs'),
    count: flag.optional('N', z.coerce.number().int().min(1).max(1_000_000), 'Accounts to write (default: what --config needs)'),
    prefix: flag.withDefault('PREFIX', z.string().min(1), LOADTEST_NG_USER_PREFIX, "Account names' prefix (load-test-ng's ltagent default)"),
    out: flag.optional('FILE', z.string().min(1), 'Write the file here (default: stdout)'),
  },
});

export const usage = command.usage;

/** The accounts a gate's run needs: each agent of a side an account for each user it runs (load-agents.ts checkSlices). */
export function accountsNeeded(config: GateConfig): { count: number; test: string } {
  if (config.bench.kind !== 'aws')
    throw new InputError(`--config: bench.kind is ${config.bench.kind}; the users file is the AWS bench's (the local bench makes its own users)`);
  const bench = resolveBench(config.bench.aws, config.tests, config.mode);
  const agents = bench.agentCount / (bench.agentGroups ?? 1);
  let most = { count: 0, test: '' };
  for (const test of config.tests) {
    const count = agents * perAgentMax(test.type === 'bounded' ? test.users : test.maxUsers, agents);
    if (count > most.count) most = { count, test: test.name };
  }
  return most;
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = command.parse(argv);
  const config = flags.config ? await loadGateConfig(flags.config) : undefined;
  const needed = config ? accountsNeeded(config) : undefined;
  const count = flags.count ?? needed?.count;
  if (count === undefined) throw new InputError('--count: how many accounts to write; or --config, to write what that gate needs');
  if (needed && count < needed.count) {
    throw new InputError(
      `--count: ${count} accounts, but test "${needed.test}" of ${flags.config} needs ${needed.count} (an account per user on every agent of a side); raise --count or leave it out`,
    );
  }
  const problem = usernamePrefixProblem(flags.prefix, count);
  if (problem) throw new InputError(`--prefix: ${problem}`);
  const text = loadTestNgUsersLines(count, flags.prefix);
  if (flags.out) await writeFile(flags.out, text);
  else io.out(text.trimEnd());
  const where = flags.out ? `wrote ${count} accounts to ${flags.out}` : `${count} accounts`;
  io.err(`${where} (${flags.prefix}-1@example.com to ${flags.prefix}-${count}@example.com, password ${LOADTEST_NG_PASSWORD}).`);
  if (config?.engine.kind === 'k6') io.err('engine.kind k6 only logs in: these accounts must exist in the dataset (the first run checks one before any test).');
  io.err(
    `The 12M-post dump's system admin, for the repository secrets: LOADGATE_ADMIN_EMAIL=${SEED_DUMP_ADMIN.email} LOADGATE_ADMIN_PASSWORD=${SEED_DUMP_ADMIN.password}`,
  );
  return 0;
}
