import { execFile } from 'node:child_process';

/**
 * Runs a short-lived tool (psql, pg_restore, pip, nginx -t) to completion with a
 * time-out, so a hung tool cannot hang the gate. Fails with the tool's own stderr.
 */
export interface ToolOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  timeoutMs: number;
  /** Text for stdin. */
  input?: string;
}

class ToolError extends Error {
  constructor(
    readonly command: string,
    readonly stderr: string,
    message: string,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

export function runTool(command: string, args: readonly string[], options: ToolOptions): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      [...args],
      { env: options.env ?? process.env, cwd: options.cwd, timeout: options.timeoutMs, maxBuffer: 64 * 1024 * 1024, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        if (error) {
          const why = (error as NodeJS.ErrnoException & { killed?: boolean }).killed
            ? `timed out after ${Math.round(options.timeoutMs / 1000)}s`
            : (error as NodeJS.ErrnoException).code === 'ENOENT'
              ? 'not found (is it installed? run scripts/setup-local.sh)'
              : `failed (exit ${(error as { code?: unknown }).code ?? '?'})`;
          const tail = String(stderr).trim().split('\n').slice(-15).join('\n');
          reject(new ToolError(command, String(stderr), `${command} ${why}${tail ? `:\n${tail}` : ''}`));
        } else {
          resolve({ stdout: String(stdout), stderr: String(stderr) });
        }
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}
