/**
 * Layering check: the folders under src/ depend one way, down the pipeline. A module may
 * import from its own layer or any layer below it, never from one above. Exits 1 on an
 * upward import that the allowlist below does not name, printing each one.
 *
 *   tsx scripts/check-layers.ts [src-dir]
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { sourceFiles } from './lib/source-files.ts';

/**
 * Top to bottom. Folders in one entry are peers: they may import each other. The
 * pipeline runs cli → run → bench → adapters → compare → report; what several stages
 * share (result and config schemas, maths, errors) sits below all of them.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ['cli'],
  // Publishing to GitHub (check runs, comments, outputs) and checking the action's
  // inputs: steps of the workflow around a run, called only from commands.
  ['github'],
  ['inputs'],
  ['run'],
  ['bench'],
  // AWS plumbing the AWS bench and `plan` use: Terraform values, costs, secrets.
  ['aws'],
  // What a bench drives: the chat servers, the load engines, the user-count search,
  // the metrics and dashboards it reads.
  ['chat-servers', 'engine', 'coordinator', 'metrics', 'grafana'],
  ['compare'],
  // The gate history: its records, the chains and series through them, Otava's change points.
  ['history'],
  // Noise models the decision reads; built from results, no knowledge of the decision.
  ['noise'],
  ['report'],
  // Shared schemas: a run's results and the verdict file, then the gate config and its
  // defaults.
  ['results'],
  ['config'],
  ['util'],
];

export interface AllowedImport {
  from: string;
  to: string;
  why: string;
}

/**
 * Upward imports tolerated for now, each with the reason it is not fixed yet (paths
 * relative to src/). There are none; an entry added here that matches no import is
 * reported, so the list cannot rot.
 */
export const ALLOWED: readonly AllowedImport[] = [];

export interface Violation {
  file: string;
  imported: string;
  fromLayer: string;
  toLayer: string;
}

export interface LayerReport {
  violations: Violation[];
  allowed: Violation[];
  staleAllowances: AllowedImport[];
  unplaced: string[];
}

function layerOf(path: string): { name: string; rank: number } | null {
  const folder = path.split('/')[0] ?? '';
  const rank = LAYERS.findIndex((layer) => layer.includes(folder));
  return rank === -1 ? null : { name: folder, rank };
}

/** Relative specifiers of every import, export-from, import() and require() in a file. */
export function importsOf(text: string): string[] {
  const info = ts.preProcessFile(text, true, true);
  return info.importedFiles.map((f) => f.fileName).filter((name) => name.startsWith('.'));
}

export function checkLayers(srcDir: string, allowed: readonly AllowedImport[] = ALLOWED): LayerReport {
  const report: LayerReport = { violations: [], allowed: [], staleAllowances: [], unplaced: [] };
  const used = new Set<AllowedImport>();
  const toPosix = (p: string) => p.split(sep).join('/');
  for (const path of sourceFiles(srcDir)) {
    const file = toPosix(relative(srcDir, path));
    const from = layerOf(file);
    if (!file.includes('/')) continue;
    if (!from) {
      if (!report.unplaced.includes(file.split('/')[0] as string)) report.unplaced.push(file.split('/')[0] as string);
      continue;
    }
    for (const specifier of importsOf(readFileSync(path, 'utf8'))) {
      const imported = toPosix(relative(srcDir, resolve(dirname(path), specifier)));
      if (imported.startsWith('..')) continue; // outside src/ (package.json)
      const to = layerOf(imported);
      if (!to || to.rank >= from.rank) continue;
      const violation = { file, imported, fromLayer: from.name, toLayer: to.name };
      const allowance = allowed.find((a) => a.from === file && a.to === imported);
      if (allowance) {
        used.add(allowance);
        report.allowed.push(violation);
      } else {
        report.violations.push(violation);
      }
    }
  }
  report.staleAllowances = allowed.filter((a) => !used.has(a));
  return report;
}

export function formatViolation(v: Violation): string {
  return `src/${v.file} → src/${v.imported} (${v.fromLayer} → ${v.toLayer})`;
}

function main(): void {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const srcDir = resolve(process.argv[2] ?? join(root, 'src'));
  const report = checkLayers(srcDir);
  let failed = false;
  if (report.unplaced.length) {
    failed = true;
    console.error(`Folders with no layer (add them to LAYERS in scripts/check-layers.ts): ${report.unplaced.join(', ')}`);
  }
  if (report.violations.length) {
    failed = true;
    console.error(`Upward imports (a lower layer importing a higher one; order: ${LAYERS.map((l) => l.join('/')).join(' → ')}):`);
    for (const v of report.violations) console.error(`  ${formatViolation(v)}`);
  }
  if (report.staleAllowances.length) {
    failed = true;
    console.error('Allowlist entries that match no import any more (remove them from ALLOWED):');
    for (const a of report.staleAllowances) console.error(`  src/${a.from} → src/${a.to}`);
  }
  if (failed) process.exit(1);
  console.log(`layers: ok (${report.allowed.length} allowlisted upward imports)`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) main();
