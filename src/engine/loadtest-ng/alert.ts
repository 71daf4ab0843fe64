/**
 * When a health query counts as over its threshold: load-test-ng's monitor alerts when
 * `value >= threshold` (coordinator/performance/monitor.go, v1.29.0-v1.33.0-rc2: `if
 * query.Alert && value >= query.Threshold`). loadgate's coordinator uses the same rule, so a
 * value exactly at the threshold backs off on both engines and the seed reports' thresholds
 * mean what they meant there. No value (null, NaN: no data yet) never alerts; +Inf does.
 */
export function overThreshold(value: number | null, threshold: number): boolean {
  return value !== null && value >= threshold;
}
