import { formatDuration } from '../util/duration.ts';

/**
 * Progress for long work: one line per event and, while a phase runs, a status line at
 * most every `intervalMs` (phase, version, repeat, users, health values, time left).
 * Inside GitHub Actions (`GITHUB_ACTIONS=true`) each phase is a collapsible log group.
 */
export interface ProgressSink {
  (line: string): void;
}

export interface StatusFields {
  version?: string;
  repeat?: number;
  users?: number;
  health?: ReadonlyArray<{ name: string; value: number | null; threshold: number }>;
  /** Seconds left in the phase, when known. */
  leftSec?: number;
  detail?: string;
}

export class Progress {
  private phase: string | undefined;
  private lastStatus = Number.NEGATIVE_INFINITY;
  private readonly grouped: boolean;

  constructor(
    private readonly sink: ProgressSink,
    opts: { githubActions?: boolean; intervalMs?: number; now?: () => number } = {},
  ) {
    this.grouped = opts.githubActions ?? process.env.GITHUB_ACTIONS === 'true';
    this.intervalMs = opts.intervalMs ?? 5000;
    this.now = opts.now ?? Date.now;
    this.started = this.now();
  }

  private readonly started: number;

  private readonly intervalMs: number;
  private readonly now: () => number;

  /** Starts a phase (and a log group in GitHub Actions), closing the previous one. */
  begin(phase: string): void {
    this.end();
    this.phase = phase;
    this.lastStatus = Number.NEGATIVE_INFINITY;
    const at = `[+${formatDuration(Math.round((this.now() - this.started) / 1000))}]`;
    this.sink(this.grouped ? `::group::${phase} ${at}` : `== ${phase} ${at}`);
  }

  end(): void {
    if (this.phase !== undefined && this.grouped) this.sink('::endgroup::');
    this.phase = undefined;
  }

  info(message: string): void {
    this.sink(message);
  }

  /** A status line, throttled to one per interval unless `force`. */
  status(fields: StatusFields, force = false): void {
    const t = this.now();
    if (!force && t - this.lastStatus < this.intervalMs) return;
    this.lastStatus = t;
    this.sink(formatStatus(this.phase, fields));
  }

  /** A GitHub Actions warning/error annotation, or a plain line elsewhere. */
  problem(message: string, level: 'warning' | 'error' = 'error'): void {
    this.sink(this.grouped ? `::${level}::${message.replace(/\n/g, '%0A')}` : `${level}: ${message}`);
  }
}

export function formatStatus(phase: string | undefined, f: StatusFields): string {
  const parts: string[] = [];
  if (phase) parts.push(phase);
  if (f.version) parts.push(`version ${f.version}`);
  if (f.repeat !== undefined) parts.push(`repeat ${f.repeat + 1}`);
  if (f.users !== undefined) parts.push(`users ${f.users}`);
  for (const h of f.health ?? []) {
    const v = h.value === null ? 'n/a' : formatNumber(h.value);
    parts.push(`${h.name} ${v}${h.value !== null && h.value > h.threshold ? ` (> ${h.threshold}!)` : ''}`);
  }
  if (f.detail) parts.push(f.detail);
  if (f.leftSec !== undefined) parts.push(`${formatDuration(Math.max(0, Math.round(f.leftSec)))} left`);
  return parts.join(' | ');
}

function formatNumber(x: number): string {
  if (Math.abs(x) >= 100) return x.toFixed(0);
  if (Math.abs(x) >= 1) return x.toFixed(2);
  return x.toPrecision(2);
}
