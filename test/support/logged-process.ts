import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';

export interface LoggedRun {
  /** Exit code, or null when a signal ended the process. */
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
}

/**
 * Runs a command in its own process group with stdout and stderr appended to one log
 * file, and resolves once both pipes are drained and the log is flushed.
 *
 * Why `close` and not `exit`: `exit` fires when the process ends, but its pipes stay open
 * while anything it started (act's step containers and shells) still holds them, so
 * output keeps arriving. Ending the log on `exit` is what crashed the act test with
 * ERR_STREAM_WRITE_AFTER_END. For the same reason neither pipe may end the log itself
 * (`pipe`'s default): the log is ended exactly once, here, after `close`.
 */
export async function runLogged(
  command: string,
  args: string[],
  options: { cwd: string; logFile: string; timeoutMs: number; env?: NodeJS.ProcessEnv },
): Promise<LoggedRun> {
  const log = createWriteStream(options.logFile);
  let timedOut = false;
  try {
    return await new Promise<LoggedRun>((resolveRun, reject) => {
      const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      child.stdout.pipe(log, { end: false });
      child.stderr.pipe(log, { end: false });
      const timer = setTimeout(() => {
        timedOut = true;
        try {
          process.kill(-(child.pid as number), 'SIGTERM');
        } catch {
          /* the group is already gone */
        }
      }, options.timeoutMs);
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        resolveRun({ code, signal, timedOut });
      });
    });
  } finally {
    log.end();
    await finished(log);
  }
}
