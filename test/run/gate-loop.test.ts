import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GateBench } from '../../src/run/gate-bench.ts';
import { runGateOn } from '../../src/run/gate.ts';
import { parseRunOptions } from '../../src/run/options.ts';
import { runResultSchema, type BenchFingerprint, type RunResult } from '../../src/results/schema.ts';

/** The shared gate loop with a bench that fails: what every bench gets for free. */
class BrokenBench implements GateBench {
  readonly system = 'mattermost' as const;
  tornDown = 0;
  executed = 0;
  constructor(private readonly failAt: 'setUp' | 'stop') {}
  expandHealthQuery(q: string): string {
    return q.replace('$X', 'expanded');
  }
  handleSignals(): void {}
  async setUp(): Promise<void> {
    if (this.failAt === 'setUp') throw new Error('app node set-up failed on 1 of 2 node(s):\n  app1 (i-0aaaaaaaaaaaaaaa2): Failed, exit code 1');
  }
  fingerprint(): BenchFingerprint {
    return { kind: 'aws', instances: { app: '2 x c7i.2xlarge' }, versions: {} };
  }
  async execute(): Promise<RunResult> {
    this.executed++;
    throw new Error('not reached in these tests');
  }
  stopReason(): string | undefined {
    return undefined;
  }
  async tearDown(): Promise<string[]> {
    this.tornDown++;
    return ['could not stop k6 on agent3'];
  }
  tornDownMessage(): string {
    return 'torn down';
  }
  notes(fatal: readonly string[]): string[] {
    return fatal.map((f) => `stopped: ${f}`);
  }
}

test('a bench that cannot be set up: every run is a crashed result saying why, teardown still runs, the verdict is inconclusive', async () => {
  const out = await mkdtemp(join(tmpdir(), 'lg-gate-'));
  try {
    const o = await parseRunOptions(['--config', 'examples/aws-mattermost.yml', '--baseline', 'v10.12.0', '--candidate', 'v11.0.1-rc2', '--out', out, '--bench-file', 'b.json', '--users-file', 'u.txt']);
    const bench = new BrokenBench('setUp');
    const lines: string[] = [];
    const code = await runGateOn(bench, o, { out: (l) => lines.push(l), err: (l) => lines.push(l) });
    assert.equal(code, 2, lines.join('\n'));
    assert.equal(bench.tornDown, 1);
    assert.equal(bench.executed, 0);
    assert.ok(lines.some((l) => l.includes('could not stop k6 on agent3')), 'tear-down problems are warnings in the log');
    const files = (await readdir(join(out, 'results'))).filter((f) => f.endsWith('.json'));
    assert.equal(files.length, 4);
    for (const f of files) {
      const r = runResultSchema.parse(JSON.parse(await readFile(join(out, 'results', f), 'utf8')));
      assert.equal(r.status, 'crashed');
      assert.equal(r.target.system, 'mattermost');
      assert.match(r.problems[0] ?? '', /app node set-up failed on 1 of 2 node\(s\)/);
    }
    assert.match(await readFile(join(out, 'README.md'), 'utf8'), /stopped: app node set-up failed/);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});
