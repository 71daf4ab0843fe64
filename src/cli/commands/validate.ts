import { resolve } from 'node:path';
import { z } from 'zod';
import { loadGateConfig } from '../../config/load.ts';
import type { GateConfig } from '../../config/schema.ts';
import { loadNoiseModel, noiseModelPath } from '../../noise/model.ts';
import { runInputProblems, USERS_FILE_ENV } from '../../run/run-inputs.ts';
import { InputError } from '../../util/errors.ts';
import { defineCommand, flag } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

const validateCommand = defineCommand({
  command: 'validate',
  synopsis: '<gate.yml>...',
  about: `Checks each gate config, and the noise model it names against it (its profile, mode and
bench), with no bench: every PromQL query is parsed with Prometheus's grammar, and the
engine's rules and the target's settings are checked as the run checks them. For the AWS
bench it also checks what the run takes from outside the config: the users file
(--users-file, else $${USERS_FILE_ENV}) and, when LOADGATE_SNAPSHOT_GRAFANA names a
Grafana, its token (LOADGATE_GRAFANA_TOKEN). Exit 0 when all are valid; otherwise prints
one line per problem, naming its path in the file (tests[1].health[3].threshold: expected
number) or the flag or variable, and exits 3.`,
  flags: {
    'users-file': flag.optional('<file>', z.string().min(1), `The AWS bench's users file, as run's --users-file takes it (default: $${USERS_FILE_ENV})`),
  },
  positionals: z.array(z.string()).min(1, 'name a gate config file'),
});

export const usage = validateCommand.usage;

type Flags = ReturnType<typeof validateCommand.parse>;

/** One config: its problems are thrown (InputError), its summary returned. */
async function validateOne(file: string, flags: Flags): Promise<string> {
  const config: GateConfig = await loadGateConfig(file);
  const modelPath = noiseModelPath(config, file);
  const model = modelPath ? await loadNoiseModel(modelPath, config) : undefined;
  const usersFile = flags['users-file'] ?? (process.env[USERS_FILE_ENV] || undefined);
  const inputs = await runInputProblems(config, { ...(usersFile ? { usersFile: resolve(usersFile) } : {}), env: process.env });
  if (inputs.problems.length) throw new InputError(inputs.problems.join('\n'), inputs.problems);
  const noise = model ? `, noise model ${config.noiseModel} (${model.kind})` : ', noise assumed from the tolerances';
  const tests = `${config.tests.length} test${config.tests.length === 1 ? '' : 's'}`;
  return `${file}: ok (${tests}, bench ${config.bench.kind}, target ${config.target.system}${noise})${inputs.notes.length ? `; ${inputs.notes.join('; ')}` : ''}`;
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = validateCommand.parse(argv);
  const files = flags.positionals;
  let failed = 0;
  for (const file of files) {
    try {
      io.out(await validateOne(file, flags));
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      failed++;
      const problems = error.problems.length ? error.problems : [error.message];
      for (const p of problems) io.err(`${file}: ${p}`);
    }
  }
  return failed ? 3 : 0;
}
