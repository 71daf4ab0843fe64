import { z } from 'zod';
import { loadGateConfig } from '../../config/load.ts';
import { loadNoiseModel, noiseModelPath } from '../../noise/model.ts';
import { InputError } from '../../util/errors.ts';
import { defineCommand } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

const validateCommand = defineCommand({
  command: 'validate',
  synopsis: '<gate.yml>...',
  about: `Checks each gate config, and the noise model it names against it (its profile, mode and
bench). Exit 0 when all are valid; otherwise prints one line per problem, naming its path
in the file (tests[1].health[3].threshold: expected number), and exits 3.`,
  flags: {},
  positionals: z.array(z.string()).min(1, 'name a gate config file'),
});

export const usage = validateCommand.usage;

export async function run(argv: string[], io: CliIO): Promise<number> {
  const files = validateCommand.parse(argv).positionals;
  let failed = 0;
  for (const file of files) {
    try {
      const config = await loadGateConfig(file);
      const modelPath = noiseModelPath(config, file);
      const model = modelPath ? await loadNoiseModel(modelPath, config) : undefined;
      const noise = model ? `, noise model ${config.noiseModel} (${model.kind})` : ', noise assumed from the tolerances';
      io.out(`${file}: ok (${config.tests.length} test${config.tests.length === 1 ? '' : 's'}, bench ${config.bench.kind}, target ${config.target.system}${noise})`);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      failed++;
      const problems = error.problems.length ? error.problems : [error.message];
      for (const p of problems) io.err(`${file}: ${p}`);
    }
  }
  return failed ? 3 : 0;
}
