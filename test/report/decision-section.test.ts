import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareRuns } from '../../src/compare/compare.ts';
import { tolerancesSchema } from '../../src/config/schema.ts';
import { decisionSection } from '../../src/report/decision-section.ts';
import { unbounded } from '../support/runs.ts';

const tol = tolerancesSchema.parse({});

test('the Decision section names the model, the rule, the runs and why it stopped, and what it could detect', () => {
  const { verdict } = compareRuns([unbounded('1.0.0', 200)], [unbounded('1.1.0', 199)], tol);
  const text = decisionSection(verdict);
  assert.match(text, /\*\*Noise model\*\*: assumed \(none configured\)/);
  assert.match(text, /sequential probability ratio test per check/);
  assert.match(text, /fails at most 1% of the time \(0\.33% per check over 3 gating checks\)/);
  assert.match(text, /\*\*Runs\*\*: 1 pair per test \(minimum 1, at most 3\); every gating check crossed the pass bound by pair 1/);
  const users = verdict.decision.detectable.find((d) => d.metric === 'Supported users')!;
  assert.equal(users.materialPct, 10);
  assert.ok(users.probabilityFail >= 0.95, String(users.probabilityFail));
  assert.match(text, /a 10% loss of supported users \(unbounded\) would have failed with (> 99|9\d)% probability/);
});

test('undecided at maxRepeats: the section says inconclusive and how many more pairs would likely decide it', () => {
  const noisy = tolerancesSchema.parse({ supportedUsers: { tolerancePct: 5, noiseFloorPct: 40 } });
  const { verdict } = compareRuns([200, 240, 170].map((u, i) => unbounded('1.0.0', u, i)), [190, 215, 180].map((u, i) => unbounded('1.1.0', u, i)), noisy, { maxPairs: 3 });
  const text = decisionSection(verdict);
  assert.match(text, new RegExp(`About ${verdict.decision.suggestedMorePairs} more pairs? would likely decide it`));
});
