/**
 * The target's CPUs in PromQL: a CPU list ("0-1,3") as node_exporter's `cpu` label regex,
 * its core count, the CPUs a quota leaves the target, and the health queries'
 * `$TARGET_CPUS` / `$TARGET_CPU_COUNT` placeholders that the local bench fills in.
 */

/** "0-1,3" → "0|1|3", for the `cpu` label of node_cpu_seconds_total. */
export function cpuListRegex(cpus: string): string {
  const out: number[] = [];
  for (const part of cpus.split(',')) {
    const [a, b] = part.split('-').map(Number) as [number, number | undefined];
    for (let c = a; c <= (b ?? a); c++) out.push(c);
  }
  return out.join('|');
}

/** Number of cores in a CPU list. */
export function cpuCount(cpus: string): number {
  return cpuListRegex(cpus).split('|').length;
}

/**
 * The CPUs the target may use: its cores times `share`, the fraction a CPU quota leaves it
 * (--candidate-cpu-quota; 1 without one). CPU utilisation is measured against this, as
 * container monitoring reports a limited container's CPU against its limit: a target given
 * 0.88 of its core is a machine with 0.88 of the CPU, and at a CPU-bound ceiling it
 * supports 12 % fewer users (docs/local.md, "Overrides and known losses").
 */
export function availableCpus(targetCpus: string, share = 1): number {
  if (!(share > 0 && share <= 1)) throw new Error(`CPU share must be in (0, 1], got ${share}`);
  return Math.round(cpuCount(targetCpus) * share * 1e6) / 1e6;
}

/**
 * Replaces the bench placeholders in a health query: `$TARGET_CPUS` (regex of the target
 * cores, for node_cpu_seconds_total's `cpu` label) and `$TARGET_CPU_COUNT` (the CPUs the
 * target may use: `availableCpus`).
 */
export function expandQuery(query: string, targetCpus: string, share = 1): string {
  return query.replaceAll('$TARGET_CPU_COUNT', String(availableCpus(targetCpus, share))).replaceAll('$TARGET_CPUS', cpuListRegex(targetCpus));
}
