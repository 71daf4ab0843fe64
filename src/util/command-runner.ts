import { spawn } from 'node:child_process';

/**
 * Every external command loadgate's AWS side runs (aws, terraform, SSM through the aws
 * CLI) goes through a CommandRunner, so tests replay recorded responses or point the
 * commands at loopback stand-ins instead of calling AWS.
 */

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CommandRunner {
  run(command: string, args: readonly string[], options?: { timeoutMs?: number }): Promise<CommandResult>;
}

/** Runs real commands, each bounded in time (an Aurora destroy takes up to ~20 minutes). */
export const processRunner: CommandRunner = {
  run(command, args, options = {}) {
    return new Promise((resolve) => {
      const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: options.timeoutMs ?? 45 * 60_000 });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', (error) => resolve({ code: 127, stdout, stderr: `${stderr}${error.message}` }));
      child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    });
  },
};
