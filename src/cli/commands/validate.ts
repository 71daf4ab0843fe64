import { loadGateConfig } from '../../config/load.ts';
import { InputError } from '../../util/errors.ts';
import type { CliIO } from '../../util/io.ts';

export const usage = `Usage: loadgate validate <gate.yml>...

Checks each gate config. Exit 0 when all are valid; otherwise prints one line per
problem, naming its path in the file (tests[1].health[3].threshold: expected number), and exits 3.`;

export async function run(argv: string[], io: CliIO): Promise<number> {
  const files = argv.filter((a) => !a.startsWith('-'));
  const unknown = argv.filter((a) => a.startsWith('-'));
  if (unknown.length) throw new InputError(`unknown option ${unknown[0]}\n\n${usage}`);
  if (!files.length) throw new InputError(`name a gate config file\n\n${usage}`);
  let failed = 0;
  for (const file of files) {
    try {
      const config = await loadGateConfig(file);
      io.out(`${file}: ok (${config.tests.length} test${config.tests.length === 1 ? '' : 's'}, bench ${config.bench.kind}, target ${config.target.system})`);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      failed++;
      const problems = error.problems.length ? error.problems : [error.message];
      for (const p of problems) io.err(`${file}: ${p}`);
    }
  }
  return failed ? 3 : 0;
}
