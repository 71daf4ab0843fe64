import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expandQuery } from '../../src/metrics/target-cpus.ts';
import { notRun } from '../../src/run/gate.ts';
import { parseRunOptions, schedule } from '../../src/run/options.ts';
import { runResultSchema } from '../../src/results/schema.ts';

test('runs the gate never reached are crashed results that say why, so the verdict cannot pass', async () => {
  const o = await parseRunOptions(['--config', 'examples/local-synapse.yml', '--baseline', '1.162.0', '--candidate', '1.163.2', '--out', 'x']);
  const fingerprint = { kind: 'local' as const, host: { cpuModel: 'cpu', cores: 2, kernel: 'Linux', memoryBytes: 1 }, versions: {} };
  for (const run of schedule(o)) {
    const r = notRun(run, fingerprint, ['the bench stopped: postgres exited with code 1; see its log: /out/logs/postgres.log'], (q) => expandQuery(q, '0'));
    runResultSchema.parse(r);
    assert.equal(r.status, 'crashed');
    assert.equal(r.target.version, run.side.label);
    assert.equal(r.test.name, run.test.name);
    assert.deepEqual(r.problems, ['the bench stopped: postgres exited with code 1; see its log: /out/logs/postgres.log']);
    if (r.test.type === 'unbounded')
      assert.ok(
        r.test.health.every((h) => !h.query.includes('$TARGET')),
        'placeholders expanded',
      );
  }
});
