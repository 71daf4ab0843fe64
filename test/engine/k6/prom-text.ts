/**
 * A small reader for the Prometheus text exposition format, for tests: enough to check
 * that the exporter's output is well-formed and to pick values by name and labels.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  types: Map<string, string>;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ');
      if (name && type) types.set(name, type);
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[3] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!;
    const raw = m[4]!;
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
    if (Number.isNaN(value) && raw !== 'NaN') throw new Error(`bad value in: ${line}`);
    samples.push({ name: m[1]!, labels, value });
  }
  return { samples, types };
}

export function valueOf(exp: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  return exp.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

/** Histogram buckets of `name` as [le, cumulative count], ascending, after checking validity. */
export function histogram(exp: Exposition, name: string): { buckets: Array<[number, number]>; sum: number; count: number } {
  if (exp.types.get(name) !== 'histogram') throw new Error(`${name} is not declared a histogram`);
  const buckets = exp.samples
    .filter((s) => s.name === `${name}_bucket`)
    .map((s): [number, number] => [s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), s.value])
    .sort((a, b) => a[0] - b[0]);
  const sum = valueOf(exp, `${name}_sum`);
  const count = valueOf(exp, `${name}_count`);
  if (sum === undefined || count === undefined) throw new Error(`${name}: _sum or _count missing`);
  const last = buckets.at(-1);
  if (!last || last[0] !== Infinity) throw new Error(`${name}: no +Inf bucket`);
  if (last[1] !== count) throw new Error(`${name}: +Inf bucket ${last[1]} != _count ${count}`);
  for (let i = 1; i < buckets.length; i++) {
    if (buckets[i]![1] < buckets[i - 1]![1]) throw new Error(`${name}: buckets are not cumulative at le=${buckets[i]![0]}`);
  }
  return { buckets, sum, count };
}

/** histogram_quantile as Prometheus computes it (linear interpolation inside the bucket). */
export function quantile(q: number, buckets: Array<[number, number]>): number {
  const total = buckets.at(-1)![1];
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const [le, count] of buckets) {
    if (count >= rank) {
      if (le === Infinity) return prevLe;
      return prevLe + ((le - prevLe) * (rank - prevCount)) / Math.max(1e-12, count - prevCount);
    }
    prevLe = le;
    prevCount = count;
  }
  return prevLe;
}
