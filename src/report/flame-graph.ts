import type { DiffNode, ProfileDiff } from '../results/profile.ts';
import { FONT_FAMILY, FONT_FILE, type RenderedGraph } from './graphs.ts';
import { svgToPng } from './resvg.ts';

/**
 * The differential flame graph of a profile diff, written as SVG here and rendered to PNG
 * by resvg. Root at the bottom, callees above their callers. A frame's width is its CPU
 * per request averaged over both sides (so code either side alone ran stays visible, and
 * callees never overflow their caller); its colour is the change of its own CPU (callees
 * left out, so the frame where the time changed stands out, not every caller on the way):
 * red grew, blue shrank, deeper the larger the change, relative to the largest one.
 */

const WIDTH = 1200;
const ROW = 17;
const PAD = 10;
const HEADER = 44;
const MAX_ROWS = 70;
/** DejaVu Sans at 11 px averages about this many pixels per character. */
const CHAR_PX = 6.4;
const MIN_LABEL_PX = 28;

/** Where a test's flame graph goes in the report directory (kept out of the graph grid's names). */
export function flameGraphFile(testName: string): string {
  return `graphs/${testName}.profile-diff.png`;
}

const escapeXml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** White to red (grew) or blue (shrank) with the size of the change, 0..1. */
function colour(delta: number, scale: number): string {
  const i = scale > 0 ? Math.min(1, Math.abs(delta) / scale) : 0;
  const low = Math.round(238 - i * 190);
  return delta >= 0 ? `rgb(250,${low},${low})` : `rgb(${low},${low},250)`;
}

function depthOf(n: DiffNode): number {
  return 1 + n.children.reduce((m, c) => Math.max(m, depthOf(c)), 0);
}

/** Candidate − baseline of a frame's own CPU: its total less its callees' (tiny callees pruned from the tree count as its own). */
function selfChange(n: DiffNode): number {
  return n.children.reduce((d, c) => d - (c.candidate - c.baseline), n.candidate - n.baseline);
}

function maxChange(n: DiffNode): number {
  return n.children.reduce((m, c) => Math.max(m, maxChange(c)), Math.abs(selfChange(n)));
}

/** The SVG document of the merged tree. */
export function flameGraphSvg(diff: ProfileDiff, title: string): string {
  const root = diff.tree;
  const rows = Math.min(MAX_ROWS, depthOf(root));
  const height = HEADER + rows * ROW + PAD;
  const perUnit = (WIDTH - 2 * PAD) / Math.max(1e-12, (root.baseline + root.candidate) / 2);
  const scale = maxChange(root);
  const rects: string[] = [];
  const draw = (n: DiffNode, x: number, depth: number): void => {
    if (depth >= rows) return;
    const w = ((n.baseline + n.candidate) / 2) * perUnit;
    if (w < 0.5) return;
    const y = height - PAD - (depth + 1) * ROW;
    const label = depth === 0 ? 'all' : n.name;
    const ms = (v: number) => v.toFixed(3);
    const tip = `${label}${n.file ? ` (${n.file})` : ''}: ${ms(n.baseline)} → ${ms(n.candidate)} CPU ms per request`;
    rects.push(
      `<g><title>${escapeXml(tip)}</title><rect x="${x.toFixed(2)}" y="${y}" width="${w.toFixed(2)}" height="${ROW - 1}" fill="${colour(selfChange(n), scale)}" stroke="#fff" stroke-width="0.5"/>`,
    );
    const fits = Math.floor((w - 6) / CHAR_PX);
    if (w >= MIN_LABEL_PX && fits >= 3) {
      const text = label.length > fits ? `${label.slice(0, fits - 2)}..` : label;
      rects.push(`<text x="${(x + 3).toFixed(2)}" y="${y + ROW - 5}" font-size="11">${escapeXml(text)}</text>`);
    }
    rects.push('</g>');
    let cx = x;
    for (const c of n.children) {
      draw(c, cx, depth + 1);
      cx += ((c.baseline + c.candidate) / 2) * perUnit;
    }
  };
  draw(root, PAD, 0);
  const legend =
    "Width: CPU per request, mean of both sides. Colour: change of a function's own CPU per request (red grew, blue shrank). Callees above their callers.";
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="${FONT_FAMILY}">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="${PAD}" y="18" font-size="14" font-weight="bold">${escapeXml(title)}</text>`,
    `<text x="${PAD}" y="35" font-size="11" fill="#444">${escapeXml(legend)}</text>`,
    ...rects,
    '</svg>',
  ].join('\n');
}

/** The PNG for the report. */
export async function renderFlameGraph(testName: string, diff: ProfileDiff): Promise<RenderedGraph> {
  const title = `Differential flame graph - ${testName}`;
  const png = await svgToPng(flameGraphSvg(diff, title), { zoom: 1, fontFile: FONT_FILE, fontFamily: FONT_FAMILY });
  return { file: flameGraphFile(testName), title, png };
}
