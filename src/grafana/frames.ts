import type { WireFrame } from './schema.ts';

/**
 * Turns `/api/ds/query` frames (schema + column-major values) into the `snapshotData` a
 * snapshot panel embeds: Grafana's DataFrameDTO, one object per series, fields carrying
 * their values. A snapshot viewer then draws the panel without any data source.
 */
export interface SnapshotField {
  name: string;
  type: string;
  config: Record<string, unknown>;
  labels?: Record<string, string>;
  values: (number | string | null)[];
}

export interface SnapshotFrame {
  refId: string;
  name?: string;
  fields: SnapshotField[];
}

export function toSnapshotFrames(refId: string, frames: readonly WireFrame[], legendFormat?: string): SnapshotFrame[] {
  return frames.map((frame, i) => {
    const columns = frame.data?.values ?? [];
    const length = columns[0]?.length ?? 0;
    if (columns.some((c) => c.length !== length)) {
      throw new Error(`query ${refId} frame ${i}: columns have different lengths`);
    }
    const fields = frame.schema.fields.map((field, j): SnapshotField => {
      const labels = field.labels ?? undefined;
      const config: Record<string, unknown> = { ...(field.config ?? {}) };
      if (field.type === 'number' && legendFormat && labels) config.displayName = applyLegend(legendFormat, labels);
      else if (field.type === 'number' && legendFormat && !legendFormat.includes('{{')) config.displayName = legendFormat;
      return { name: field.name, type: field.type ?? 'other', config, ...(labels ? { labels } : {}), values: columns[j] ?? [] };
    });
    return { refId, ...(frame.schema.name ? { name: frame.schema.name } : {}), fields };
  });
}

/** Grafana's legend templates: `{{instance}}` → the label's value. */
export function applyLegend(template: string, labels: Record<string, string>): string {
  return template.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (_m, name: string) => labels[name] ?? '');
}
