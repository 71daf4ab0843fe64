import { readFile } from 'node:fs/promises';
import { initWasm, Resvg } from '@resvg/resvg-wasm';
import { resvgWasmBytes } from './resvg-wasm-bytes.ts';

/**
 * SVG → PNG with resvg compiled to WebAssembly (@resvg/resvg-wasm, the same resvg 2.6.2
 * as the native @resvg/resvg-js it replaces): no native binding, so the bundle in dist/
 * is complete and a released action never runs `npm ci`. The font is passed as bytes
 * (WebAssembly has no file system), one fixed file, so output is byte-identical.
 */
let ready: Promise<void> | undefined;
const fonts = new Map<string, Promise<Uint8Array>>();

/** Loads the WebAssembly module once; `Resvg` from @resvg/resvg-wasm works after it. */
export function initResvg(): Promise<void> {
  ready ??= resvgWasmBytes().then((bytes) => initWasm(bytes));
  return ready;
}

function font(file: string): Promise<Uint8Array> {
  let bytes = fonts.get(file);
  if (!bytes) {
    bytes = readFile(file);
    fonts.set(file, bytes);
  }
  return bytes;
}

export async function svgToPng(svg: string, options: { zoom: number; fontFile: string; fontFamily: string }): Promise<Buffer> {
  const [, fontBytes] = await Promise.all([initResvg(), font(options.fontFile)]);
  const resvg = new Resvg(svg, { fitTo: { mode: 'zoom', value: options.zoom }, font: { fontBuffers: [fontBytes], defaultFontFamily: options.fontFamily } });
  try {
    const image = resvg.render();
    try {
      return Buffer.from(image.asPng());
    } finally {
      image.free();
    }
  } finally {
    resvg.free();
  }
}
