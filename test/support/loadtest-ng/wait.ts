import type { CoordinatorClient } from './coordinator-client.ts';
import type { CoordinatorStatus } from '../../../src/engine/loadtest-ng/schema.ts';

export interface WaitOptions {
  /** Hard stop: the gate's maxDuration (unbounded) or duration (bounded), in seconds. */
  maxDurationSec: number;
  pollIntervalMs?: number;
  /** Called with every status read, e.g. to log active users. */
  onStatus?: (status: CoordinatorStatus) => void;
  signal?: AbortSignal;
  /** Swappable for tests. */
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface WaitOutcome {
  status: CoordinatorStatus;
  /** True when the time ran out and loadgate stopped the coordinator itself. */
  hitMaxDuration: boolean;
}

/**
 * Polls a running coordinator until it reports `done` (equilibrium found) or `stopped`,
 * and stops it when `maxDurationSec` has passed. Bounded in time: it never waits longer
 * than maxDuration plus one poll.
 */
export async function waitForCoordinator(coordinator: CoordinatorClient, options: WaitOptions): Promise<WaitOutcome> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? defaultSleep;
  const pollMs = options.pollIntervalMs ?? 10_000;
  const deadline = now() + options.maxDurationSec * 1000;
  for (;;) {
    options.signal?.throwIfAborted();
    const status = await coordinator.status();
    options.onStatus?.(status);
    if (status.State !== 'running') return { status, hitMaxDuration: false };
    const left = deadline - now();
    if (left <= 0) return { status: await coordinator.stop(), hitMaxDuration: true };
    await sleep(Math.min(pollMs, left), options.signal);
  }
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
