import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { checkLayers, formatViolation } from '../../scripts/check-layers.ts';
import { fileTree } from '../support/file-tree.ts';

const fixtureTree = (files: Record<string, string>): string => fileTree(files, 'check-layers-');

test('an import from a lower layer to a higher one is reported; downward and same-layer ones are not', (t) => {
  const dir = fixtureTree({
    'util/stats.ts': "import { render } from '../report/markdown.ts';\nexport const mean = 1;\n",
    'report/markdown.ts': "import { mean } from '../util/stats.ts';\nexport type { Check } from '../report/types.ts';\nexport const render = mean;\n",
    'report/types.ts': 'export type Check = string;\n',
    'run/gate.ts': "import { render } from '../report/markdown.ts';\nconst later = () => import('../util/stats.ts');\n",
    'chat-servers/server.ts': "import type { Clock } from '../coordinator/index.ts';\n",
    'coordinator/index.ts': 'export type Clock = number;\n',
  });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const report = checkLayers(dir, []);
  assert.deepEqual(report.violations.map(formatViolation), ['src/util/stats.ts → src/report/markdown.ts (util → report)']);
  assert.deepEqual(report.unplaced, []);
  const cli = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/check-layers.ts', dir], { encoding: 'utf8' });
  assert.equal(cli.status, 1);
  assert.match(cli.stderr, /src\/util\/stats\.ts → src\/report\/markdown\.ts \(util → report\)/);
});

test('an allowlisted upward import passes, and an allowlist entry that matches nothing is reported', (t) => {
  const dir = fixtureTree({
    'compare/stats.ts': "export * from '../run/options.ts';\n",
    'run/options.ts': 'export const x = 1;\n',
    'nowhere/thing.ts': "import '../util/x.ts';\n",
  });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const report = checkLayers(dir, [
    { from: 'compare/stats.ts', to: 'run/options.ts', why: 'test' },
    { from: 'report/a.ts', to: 'run/b.ts', why: 'gone' },
  ]);
  assert.deepEqual(report.violations, []);
  assert.equal(report.allowed.length, 1);
  assert.deepEqual(
    report.staleAllowances.map((a) => a.from),
    ['report/a.ts'],
  );
  assert.deepEqual(report.unplaced, ['nowhere']);
});

test('the real tree passes', () => {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/check-layers.ts'], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /layers: ok/);
});
