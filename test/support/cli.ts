import { captureIO } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';

/**
 * Runs the CLI in this process with extra environment variables (undefined unsets one),
 * as a workflow step would see them, and restores the environment afterwards.
 */
export async function runCli(argv: string[], env: Record<string, string | undefined> = {}): Promise<{ code: number; out: string; err: string }> {
  const saved: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(env)) {
    saved[k] = process.env[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  const io = captureIO();
  try {
    const code = await main(argv, io);
    return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n') };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
