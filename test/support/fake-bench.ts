import type { GateBench } from '../../src/bench/gate-bench.ts';
import type { ScheduledRun } from '../../src/bench/gate-plan.ts';
import type { BenchFingerprint, RunResult } from '../../src/results/schema.ts';

/**
 * A local bench that sets nothing up and never breaks, for tests of the gate loop: a
 * subclass says how a run (or a duet) turns out, and may count what it is asked.
 */
export abstract class QuietBench implements GateBench {
  readonly system = 'synapse' as const;
  tornDown = 0;
  constructor(readonly runOverheadSec = 0) {}
  abstract execute(run: ScheduledRun): Promise<RunResult>;
  expandHealthQuery(q: string): string {
    return q;
  }
  handleSignals(): void {}
  async setUp(): Promise<void> {}
  fingerprint(): BenchFingerprint {
    return { kind: 'local', versions: {} };
  }
  stopReason(): string | undefined {
    return undefined;
  }
  async tearDown(): Promise<string[]> {
    this.tornDown++;
    return [];
  }
  tornDownMessage(): string {
    return 'torn down';
  }
  notes(_fatal: readonly string[], ranOn?: BenchFingerprint): string[] {
    return [ranOn ? `bench notes from the reused runs' ${ranOn.kind} bench` : 'bench notes from the bench set up here'];
  }
}
