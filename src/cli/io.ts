import type { CliIO } from '../util/io.ts';

export const processIO: CliIO = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

export function captureIO(): CliIO & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l) };
}

/** A CLI command module: `src/cli/commands/<name>.ts` exports these. */
export interface CommandModule {
  usage: string;
  run(argv: string[], io: CliIO): Promise<number>;
}
