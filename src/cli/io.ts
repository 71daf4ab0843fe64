/** Where a command writes. Tests pass a capturing implementation. */
export interface CliIO {
  out(line: string): void;
  err(line: string): void;
}

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
