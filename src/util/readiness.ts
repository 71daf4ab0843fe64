import { setTimeout as sleep } from 'node:timers/promises';
import type { ManagedProcess } from './process.ts';

/**
 * Readiness checks with a bounded number of tries. A component that exits while we wait,
 * or never answers, fails with a message naming it and pointing at its log file.
 */
export class ComponentError extends Error {
  constructor(
    readonly component: string,
    message: string,
    readonly logFile?: string,
  ) {
    super(`${component}: ${message}${logFile ? `; see its log: ${logFile}` : ''}`);
    this.name = 'ComponentError';
  }
}

export interface WaitOptions {
  component: string;
  /** The process whose exit ends the wait early. */
  process?: ManagedProcess;
  logFile?: string;
  timeoutMs: number;
  intervalMs?: number;
  /** What "ready" means, for the timeout message: "answering GET /health". */
  what: string;
}

/** Polls `check` until it returns true; throws ComponentError on exit or time-out. */
export async function waitUntilReady(check: () => Promise<boolean>, options: WaitOptions): Promise<void> {
  const interval = options.intervalMs ?? 250;
  const deadline = Date.now() + options.timeoutMs;
  let lastError = '';
  for (;;) {
    if (options.process && !options.process.running) {
      throw new ComponentError(options.component, `exited before it was ready (${options.process.describeExit()})`);
    }
    try {
      if (await check()) return;
    } catch (error) {
      lastError = (error as Error).message;
    }
    if (Date.now() >= deadline) break;
    await sleep(interval);
  }
  const detail = lastError ? ` (last error: ${lastError})` : '';
  throw new ComponentError(
    options.component,
    `not ready after ${Math.round(options.timeoutMs / 1000)}s: expected it to be ${options.what}${detail}`,
    options.logFile ?? options.process?.logFile,
  );
}

/** GET a loopback URL with a short time-out; true on the expected status (and body test). */
export async function httpOk(url: string, accept: (status: number, body: string) => boolean = (s) => s === 200): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
  const body = await response.text();
  return accept(response.status, body);
}
