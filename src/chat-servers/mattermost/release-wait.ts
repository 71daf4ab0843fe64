import { formatDuration } from '../../util/duration.ts';
import { InputError } from '../../util/errors.ts';

/**
 * Waits for a release tarball to be published. A release-candidate tag is often pushed
 * before its tarball reaches releases.mattermost.com, and provisioning a bench that then
 * cannot install the candidate spends money for nothing. So, before provisioning: ask for
 * each tarball with HEAD until it answers 200, every `intervalSec`, logging each miss,
 * for at most `timeoutSec`; then give up with "release tarball not published" (InputError,
 * exit 3). 403 and 404 (what S3 and CloudFront answer for a missing object), 5xx and
 * network errors all mean "not yet".
 */

export interface ReleaseWaitOptions {
  urls: readonly string[];
  timeoutSec: number;
  intervalSec: number;
  log: (line: string) => void;
  fetch?: (url: string, init: { method: string; signal: AbortSignal }) => Promise<{ status: number }>;
  /** Injected so tests run without real waits. */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /** Per-request limit. */
  requestTimeoutMs?: number;
}

export async function waitForReleases(o: ReleaseWaitOptions): Promise<void> {
  const doFetch = o.fetch ?? ((url, init) => fetch(url, init));
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = o.now ?? Date.now;
  const deadline = now() + o.timeoutSec * 1000;
  const pending = new Set(o.urls);
  const last = new Map<string, string>();
  for (let attempt = 1; ; attempt++) {
    for (const url of [...pending]) {
      let outcome: string;
      try {
        const res = await doFetch(url, { method: 'HEAD', signal: AbortSignal.timeout(o.requestTimeoutMs ?? 15_000) });
        outcome = `HTTP ${res.status}`;
        if (res.status === 200) {
          pending.delete(url);
          o.log(`release tarball published: ${url}`);
          continue;
        }
      } catch (error) {
        outcome = (error as Error).message;
      }
      last.set(url, outcome);
      o.log(`release tarball not published yet (attempt ${attempt}, ${outcome}): ${url}`);
    }
    if (pending.size === 0) return;
    const left = deadline - now();
    if (left <= 0) {
      const lines = [...pending].map((url) => `${url} (last answer: ${last.get(url)})`);
      throw new InputError(
        `release tarball not published after ${formatDuration(o.timeoutSec)}: ${lines.join(', ')}; ` +
          'nothing was provisioned. Re-run when the release is published, or raise target.releaseWait',
        lines,
      );
    }
    await sleep(Math.min(o.intervalSec * 1000, left));
  }
}
