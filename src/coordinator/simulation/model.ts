import { seededRandom } from '../../util/random.ts';
import type { Clock, HealthSource, UserControl } from '../types.ts';

/**
 * A capacity model to drive the real coordinator with: users -> a latency-like health
 * value that crosses its threshold at `ceiling` users, seen the way the coordinator sees
 * it, through Prometheus: scraped every `scrapeSec`, averaged by a `rate(...[W])` window
 * (request-weighted, as sum(rate(x_sum))/sum(rate(x_count)) is), with seeded noise.
 *
 * The latency curve is a single-server queue's, L(u) = L0 / (1 - u/K): flat at low load,
 * steep near saturation, as the seeds' latencies are (the Locust seed: p50 150-170 ms from
 * 48 to 96 clients; the talk seed: store times that multiply near the limit). L0 is a third
 * of the threshold, so K = 1.5 x ceiling.
 */

export interface ModelParams {
  /** Users at which the (noise-free, instantaneous) health value equals the threshold. */
  ceiling: number;
  /** Health threshold (the value at the ceiling). */
  threshold: number;
  /** The rate() window of the health query, seconds. */
  rateWindowSec: number;
  /** Prometheus scrape interval, seconds. */
  scrapeSec: number;
  /**
   * Multiplicative noise of the latency of each scrape interval's requests (sd of its log):
   * slow and fast periods (GC, cache misses, disk) that the rate window averages, so
   * evaluations inside one window share their noise and longer windows see less of it.
   */
  noiseSd: number;
  /**
   * The cost of starting a user (login, initial sync): each user started in the last
   * `seconds` loads the system like `users` more running users. A ramp then looks
   * unhealthy below the ceiling, as the local bench's ramps do
   * (docs/research/2026-11-24-capacity-search.md). Unset: starting is free.
   */
  startCost?: { users: number; seconds: number };
}

/** Standard normal from a uniform source (Box-Muller). */
export function gaussian(random: () => number): number {
  const u = Math.max(1e-12, random());
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/** A virtual clock: sleeping advances time at once. */
export class SimClock implements Clock {
  private t = 0;
  now(): number {
    return this.t;
  }
  async sleep(ms: number): Promise<void> {
    this.t += Math.max(0, ms);
  }
}

/**
 * A virtual clock several coroutines share (the two sides of a duet): a sleep wakes when
 * every coroutine is asleep and its time is the earliest, so time advances in order, as on
 * a real clock, and minutes of two interleaved searches run in milliseconds. Whatever the
 * coroutines await besides sleeping must settle in microtasks (the model's does).
 */
export class SharedSimClock implements Clock {
  private t = 0;
  private readonly timers: Array<{ at: number; seq: number; wake: () => void }> = [];
  private seq = 0;
  private pending = false;

  now(): number {
    return this.t;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((wake) => {
      this.timers.push({ at: this.t + Math.max(0, ms), seq: this.seq++, wake });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.pending) return;
    this.pending = true;
    // setImmediate runs once every microtask has settled: every coroutine is asleep.
    setImmediate(() => {
      this.pending = false;
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers.shift();
      if (!next) return;
      this.t = next.at;
      next.wake();
      if (this.timers.length) this.schedule();
    });
  }
}

/** The system under test: remembers the users over time and answers the health query. */
export class SimSystem implements UserControl, HealthSource {
  private readonly changes: Array<{ tMs: number; users: number }> = [{ tMs: 0, users: 0 }];
  private readonly seed: number;
  private readonly slotNoise = new Map<number, number>();
  /** New users per second in the last second, for the login-storm check. */
  peakStartsPerSec = 0;

  constructor(
    private readonly clock: Pick<Clock, 'now'>,
    readonly params: ModelParams,
    seed: number,
  ) {
    this.seed = seed;
  }

  async setUsers(n: number): Promise<void> {
    const now = this.clock.now();
    const last = this.changes[this.changes.length - 1] as { tMs: number; users: number };
    if (n === last.users) return;
    if (n > last.users) {
      const previous = this.usersAt(now - 1000);
      this.peakStartsPerSec = Math.max(this.peakStartsPerSec, n - previous);
    }
    if (last.tMs === now) last.users = n;
    else this.changes.push({ tMs: now, users: n });
  }

  async activeUsers(): Promise<number> {
    return (this.changes[this.changes.length - 1] as { users: number }).users;
  }

  /** Instantaneous latency at `users`. */
  latency(users: number): number {
    const { ceiling, threshold } = this.params;
    const saturation = 1.5 * ceiling;
    const load = Math.min(users / saturation, 0.995);
    return threshold / 3 / (1 - load);
  }

  async query(): Promise<number | null> {
    const { rateWindowSec, scrapeSec, noiseSd } = this.params;
    const nowSec = this.clock.now() / 1000;
    // The newest scrape, and the window of samples a rate() over it reads.
    const scrape = Math.floor(nowSec / scrapeSec) * scrapeSec;
    const from = Math.max(0, scrape - rateWindowSec);
    if (scrape - from < scrapeSec) return null;
    let weighted = 0;
    let requests = 0;
    const cost = this.params.startCost;
    for (let t = from; t < scrape; t += 1) {
      const u = this.usersAt(t * 1000);
      const starting = cost ? Math.max(0, u - this.usersAt((t - cost.seconds) * 1000)) * cost.users : 0;
      weighted += u * this.latency(u + starting) * this.noiseOf(Math.floor(t / scrapeSec), noiseSd);
      requests += u;
    }
    if (requests === 0) return null;
    return weighted / requests;
  }

  /** The noise factor of one scrape interval: a function of the seed and the slot only. */
  private noiseOf(slot: number, sd: number): number {
    let factor = this.slotNoise.get(slot);
    if (factor === undefined) {
      factor = Math.exp(sd * gaussian(seededRandom(this.seed * 1_000_003 + slot)));
      this.slotNoise.set(slot, factor);
    }
    return factor;
  }

  usersAt(tMs: number): number {
    let users = 0;
    for (let i = this.changes.length - 1; i >= 0; i--) {
      const c = this.changes[i] as { tMs: number; users: number };
      if (c.tMs <= tMs) {
        users = c.users;
        break;
      }
    }
    return users;
  }
}
