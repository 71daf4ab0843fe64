import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GRAPHS, chartSpec, rampUpEndMinute } from '../../src/report/graphs.ts';
import { bounded, unbounded } from '../support/runs.ts';

test('the time-series graphs shade the ramp-up: from the start to the earliest measured window', () => {
  const runs = [bounded('1.0.0'), bounded('1.1.0')];
  const start = Math.min(...runs.map((r) => r.stableWindow.startSec));
  assert.ok(start > 0, 'the support runs have a ramp-up');
  assert.equal(rampUpEndMinute(runs), start / 60);
  const spec = chartSpec(GRAPHS[0]!, 'bounded', [runs[0]!], [runs[1]!]) as unknown as {
    layer: { mark: { type: string }; data: { values: Record<string, unknown>[] } }[];
  };
  const band = spec.layer.find((l) => l.mark.type === 'rect');
  assert.deepEqual(band?.data.values[0], { from: 0, to: start / 60, label: 'ramp-up' });
  // The band is drawn first, under the lines.
  assert.equal(spec.layer[0], band);
  assert.equal(spec.layer.at(-1)?.mark.type, 'line');
  // An unbounded run's ramp-up is the search before its stability window.
  const u = [unbounded('1.0.0', 200), unbounded('1.1.0', 200)];
  assert.equal(rampUpEndMinute(u), Math.min(...u.map((r) => r.stableWindow.startSec)) / 60);
  const none = [{ ...runs[0]!, stableWindow: { startSec: 0, endSec: 60 } }];
  assert.equal(rampUpEndMinute(none), undefined);
});
