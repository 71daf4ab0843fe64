#!/usr/bin/env node
// In a checkout (after `npm ci`) the CLI runs from its TypeScript sources through tsx, so
// `npx loadgate` there runs what you edit. The published package holds no sources and no
// dependencies: it runs the self-contained bundle, dist/loadgate.js, as the actions do.
import { existsSync } from 'node:fs';

const source = new URL('../src/cli/main.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import(source.href);
  process.exitCode = await main(process.argv.slice(2));
} else {
  await import('../dist/loadgate.js');
}
