import type { Clock, HealthSource, UserControl } from '../../src/coordinator/types.ts';

/** A virtual clock: sleeping advances time instantly, so minutes of coordination run in ms. */
export class FakeClock implements Clock {
  private t = 1_700_000_000_000;
  readonly sleeps: number[] = [];
  private readonly start = this.t;

  now(): number {
    return this.t;
  }

  async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.t += ms;
  }

  /** Seconds since the clock was created. */
  elapsedSec(): number {
    return (this.t - this.start) / 1000;
  }

  advance(ms: number): void {
    this.t += ms;
  }
}

/** A load engine that does what it is told, and remembers every request. */
export class FakeUsers implements UserControl {
  active = 0;
  readonly requested: number[] = [];

  constructor(private readonly onSet?: (n: number) => void) {}

  async setUsers(n: number): Promise<void> {
    this.requested.push(n);
    this.active = n;
    this.onSet?.(n);
  }

  async activeUsers(): Promise<number> {
    return this.active;
  }
}

/** Answers each PromQL string with a function of the current state; records each call. */
export class FakeHealth implements HealthSource {
  readonly calls: Array<{ query: string; atSec: number }> = [];

  constructor(
    private readonly clock: FakeClock,
    private readonly answers: Record<string, () => number | null>,
  ) {}

  async query(promql: string): Promise<number | null> {
    this.calls.push({ query: promql, atSec: this.clock.elapsedSec() });
    const answer = this.answers[promql];
    if (!answer) throw new Error(`unexpected query ${promql}`);
    return answer();
  }

  callsOf(promql: string): number[] {
    return this.calls.filter((c) => c.query === promql).map((c) => c.atSec);
  }
}
