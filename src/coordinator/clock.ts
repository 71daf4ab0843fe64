import type { Clock } from './types.ts';

/** The real clock, for production use; tests inject a fake one. */
export const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms))),
};

/**
 * Sleeps on the injected clock, waking early when `signal` aborts.
 * Resolves true when it was aborted.
 */
export async function sleepUnlessAborted(clock: Clock, ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return true;
  if (!signal) {
    await clock.sleep(ms);
    return false;
  }
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<true>((resolve) => {
    onAbort = () => resolve(true);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([clock.sleep(ms).then(() => signal.aborted), aborted]);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/** The reason an AbortSignal carries, as text for a result's `reason`. */
export function abortReason(signal: AbortSignal | undefined): string {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error) return reason.message;
  if (typeof reason === 'string' && reason) return reason;
  return 'aborted';
}
