import Bottleneck from 'bottleneck';
import { Octokit } from '@octokit/rest';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import * as core from '@actions/core';

const LoadgateOctokit = Octokit.plugin(retry, throttling);
export type GitHubClient = InstanceType<typeof LoadgateOctokit>;

export interface ClientOptions {
  token: string;
  /** https://api.github.com, GITHUB_API_URL on Actions/GHES, or the test stand-in. */
  baseUrl: string;
  /** Retries of 5xx and network errors (plugin-retry). */
  retries?: number;
  /** Wait at most this long for a rate limit to reset before giving up. */
  maxRateLimitWaitSec?: number;
  /** Milliseconds one second of Retry-After stands for; tests shrink it. */
  retryAfterUnitMs?: number;
  /** Minimum spacing of write requests (GitHub asks for 1 s to avoid secondary limits). */
  writeIntervalMs?: number;
  /** Mask the token in Actions logs; on by default inside Actions. */
  maskToken?: boolean;
  log?: (line: string) => void;
}

/**
 * The one GitHub client loadgate uses: Octokit with retries and throttling, pointed at
 * a configurable base URL so tests can swap in the stand-in. The token is masked in
 * Actions logs before the first request and never appears in our own messages.
 */
export function createGitHubClient(options: ClientOptions): GitHubClient {
  if (options.maskToken ?? process.env.GITHUB_ACTIONS === 'true') core.setSecret(options.token);
  const log = options.log ?? (() => {});
  const maxWait = options.maxRateLimitWaitSec ?? 120;
  const onLimit = (kind: string) => (retryAfter: number, request: { method: string; url: string }, _octokit: unknown, retryCount: number) => {
    if (retryCount < 2 && retryAfter <= maxWait) {
      log(`GitHub ${kind} rate limit on ${request.method} ${request.url}; retrying in ${retryAfter}s`);
      return true;
    }
    log(`GitHub ${kind} rate limit on ${request.method} ${request.url}; not waiting ${retryAfter}s`);
    return false;
  };
  const writeIntervalMs = options.writeIntervalMs ?? 1000;
  // Own limiter groups (not the plugin's process-wide ones) so the pacing is per client.
  const paced = (id: string, minTime: number) => new Bottleneck.Group({ id: `loadgate-${id}-${Math.random()}`, maxConcurrent: 1, minTime });
  return new LoadgateOctokit({
    auth: options.token,
    baseUrl: options.baseUrl,
    userAgent: 'loadgate',
    retry: {
      retries: options.retries ?? 3,
      retryAfterBaseValue: options.retryAfterUnitMs ?? 1000,
      // 4xx answers are decisions, not hiccups; 403/429 rate limits are the throttling plugin's.
      doNotRetry: [400, 401, 403, 404, 409, 410, 422, 429, 451],
    },
    throttle: {
      onRateLimit: onLimit('primary'),
      onSecondaryRateLimit: onLimit('secondary'),
      retryAfterBaseValue: options.retryAfterUnitMs ?? 1000,
      write: paced('write', writeIntervalMs),
      notifications: paced('notifications', writeIntervalMs * 3),
    },
    log: { debug: () => {}, info: () => {}, warn: (m: string) => log(m), error: (m: string) => log(m) },
  });
}
