/**
 * What the coordinator needs from the outside world, injected so its decisions can be
 * tested with a fake clock, fake users and fake health values.
 */

/** Time in milliseconds; `sleep` is the only way the coordinator waits. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** The load engine's user count (k6's active VUs on the local bench). */
export interface UserControl {
  setUsers(n: number): Promise<void>;
  activeUsers(): Promise<number>;
}

/** Evaluates a PromQL query to one number; null when Prometheus has no data for it. */
export interface HealthSource {
  query(promql: string): Promise<number | null>;
}

export interface TimelinePoint {
  /** Seconds since the coordinator started. */
  tSec: number;
  /** Active users after this step. */
  users: number;
  /** True when no health query was over its threshold at this step. */
  healthy: boolean;
  /** Health query name -> the value the decision used (null: no data). */
  values: Record<string, number | null>;
}
