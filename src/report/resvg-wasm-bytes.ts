import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

/**
 * The resvg WebAssembly module. From node_modules here; scripts/build.ts replaces this
 * module with the bytes themselves, so dist/loadgate.js needs no node_modules at run time.
 */
export async function resvgWasmBytes(): Promise<Uint8Array> {
  return readFile(createRequire(import.meta.url).resolve('@resvg/resvg-wasm/index_bg.wasm'));
}
