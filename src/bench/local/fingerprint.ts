import { readFile } from 'node:fs/promises';
import { cpus, release, totalmem } from 'node:os';
import type { BenchFingerprint } from '../../results/schema.ts';

/** The host half of the bench fingerprint: what a reader needs to judge comparability. */
export async function hostFingerprint(): Promise<NonNullable<BenchFingerprint['host']>> {
  let cpuModel = cpus()[0]?.model?.trim() ?? '';
  if (!cpuModel) {
    const info = await readFile('/proc/cpuinfo', 'utf8').catch(() => '');
    cpuModel = /^model name\s*:\s*(.+)$/m.exec(info)?.[1]?.trim() ?? 'unknown';
  }
  return { cpuModel, cores: Math.max(1, cpus().length), kernel: `Linux ${release()}`, memoryBytes: totalmem() };
}
