/** The longest range selector (`[1m]`, `[30s]`, `[5m:10s]`) in the queries, in seconds; 0 when none. */
export function longestRangeSec(queries: readonly string[]): number {
  let longest = 0;
  const unit: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };
  for (const q of queries) {
    for (const m of q.matchAll(/\[(\d+)(ms|s|m|h)(?::[^\]]*)?\]/g)) {
      longest = Math.max(longest, Number(m[1]) * (unit[m[2] as string] ?? 1));
    }
  }
  return longest;
}
