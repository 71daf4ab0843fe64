import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { checkLongFunctions, functionsOf } from '../../scripts/long-functions.ts';
import { fileTree } from '../support/file-tree.ts';

const fixtureTree = (files: Record<string, string>): string => fileTree(files, 'long-functions-');

/** A function declaration of exactly `lines` lines. */
const declaration = (name: string, lines: number): string => `export function ${name}(): number {\n${'  void 0;\n'.repeat(lines - 3)}  return 1;\n}\n`;

test('each function is measured from its first to its last line, named after its declaration, variable, property or method', () => {
  const text = [
    'export function outer(a: number,', // 1
    '  b: number): number {',
    '  const inner = (x: number) => {', // 3
    '    return x;',
    '  };', // 5
    '  return inner(a + b);',
    '}', // 7
    'const table = { pick: function () { return 1; } };', // 8
    'class Box {',
    '  open(): void {', // 10
    '    void 0;',
    '  }', // 12
    '  constructor() {}',
    '}',
    'export default () => 2;', // 15
    'declare function bare(): void;',
  ].join('\n');
  const found = functionsOf(text, 'x/y.ts').map(({ name, line, lines }) => `${name}@${line}:${lines}`);
  assert.deepEqual(found, ['outer@1:7', 'inner@3:3', 'pick@8:1', 'open@10:3', 'constructor@13:1', 'default@15:1']);
});

test('a function over the limit is a violation unless allowlisted; an allowlist entry that matches nothing is reported', (t) => {
  const dir = fixtureTree({
    'run/gate.ts': `${declaration('runGate', 81)}${declaration('short', 80)}`,
    'bench/run.ts': declaration('executeRun', 120),
    'engine/k6/scenario.js': 'export default function () {\n' + '  void 0;\n'.repeat(90) + '}\n',
  });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const report = checkLongFunctions(dir, 80, [
    { file: 'bench/run.ts', name: 'executeRun', why: 'test' },
    { file: 'bench/run.ts', name: 'split', why: 'gone' },
  ]);
  assert.deepEqual(
    report.violations.map((f) => `${f.file} ${f.name} ${f.lines}`),
    ['engine/k6/scenario.js (anonymous) 92', 'run/gate.ts runGate 81'],
  );
  assert.deepEqual(
    report.allowed.map((f) => f.name),
    ['executeRun'],
  );
  assert.deepEqual(
    report.staleAllowances.map((a) => a.name),
    ['split'],
  );
  const cli = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/long-functions.ts', '--check', dir], { encoding: 'utf8' });
  assert.equal(cli.status, 1);
  assert.match(cli.stderr, /81 {2}runGate {2}src\/run\/gate\.ts:1/);
  assert.match(cli.stderr, /120 {2}executeRun/);
});

test('the real tree passes', () => {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/long-functions.ts', '--check'], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /long functions: ok/);
});
