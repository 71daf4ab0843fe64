/**
 * Where a command writes. Declared below every layer because the run sequence and the
 * GitHub outputs write through it too, not only the CLI. Tests pass a capturing
 * implementation.
 */
export interface CliIO {
  out(line: string): void;
  err(line: string): void;
}
