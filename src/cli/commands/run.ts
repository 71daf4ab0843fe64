import type { CliIO } from '../../util/io.ts';
import { parseRunOptions, usage as runUsage } from '../../run/options.ts';
import { runGate } from '../../run/gate.ts';

export const usage = runUsage;

/** `loadgate run`: validate everything first (exit 3 on bad input), then run the local gate. */
export async function run(argv: string[], io: CliIO): Promise<number> {
  const options = await parseRunOptions(argv);
  return runGate(options, io);
}
