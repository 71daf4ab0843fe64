import { z } from 'zod';

const UNIT_SECONDS = { s: 1, m: 60, h: 3600 } as const;

/**
 * A duration written the way people write it in a config file: `2s`, `90m`, `1h30m`.
 * Plain numbers are seconds, as YAML numbers or as digits in a string (`"90"`: a flag,
 * a workflow input). Parsed to whole seconds at the boundary.
 */
export const durationSchema = z
  .union(
    [
      z.number().int().nonnegative(),
      z
        .string()
        .regex(/^(\d+|(\d+h)?(\d+m)?(\d+s)?)$/, 'expected a duration such as "90s", "15m" or "1h30m"')
        .refine((s) => s.length > 0, 'expected a duration such as "90s", "15m" or "1h30m"'),
    ],
    {
      // zod's own union message is a bare "Invalid input": say what is missing or expected.
      error: (issue) =>
        issue.input === undefined
          ? 'required: a duration such as "90s", "15m" or "1h30m", or a number of seconds'
          : 'expected a duration such as "90s", "15m" or "1h30m", or a number of seconds',
    },
  )
  .transform((value) => (typeof value === 'number' ? value : parseDuration(value)));

/** Seconds in a duration string durationSchema accepts; plain digits are seconds. */
function parseDuration(text: string): number {
  if (/^\d+$/.test(text)) return Number(text);
  let total = 0;
  for (const match of text.matchAll(/(\d+)([hms])/g)) {
    total += Number(match[1]) * UNIT_SECONDS[match[2] as keyof typeof UNIT_SECONDS];
  }
  return total;
}

export function formatDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = Math.round(seconds % 60);
  const parts = [h ? `${h}h` : '', m ? `${m}m` : '', s ? `${s}s` : ''].filter(Boolean);
  return parts.length ? parts.join('') : '0s';
}

/** Human form for reports: "90 minutes", "45 seconds", "2 hours". */
export function describeDuration(seconds: number): string {
  if (seconds % 3600 === 0 && seconds >= 7200) return `${seconds / 3600} hours`;
  if (seconds % 60 === 0 && seconds >= 60) return `${seconds / 60} minute${seconds === 60 ? '' : 's'}`;
  return `${seconds} seconds`;
}
