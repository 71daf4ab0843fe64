#!/usr/bin/env node
// Runs the TypeScript CLI through tsx so `npx loadgate` works straight after `npm ci`
// with no build step; the GitHub Actions use the esbuild bundle in dist/ instead.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
