import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareRuns } from '../../src/compare/compare-runs.ts';
import { tolerancesSchema } from '../../src/config/schema.ts';
import { decisionSection } from '../../src/report/decision-section.ts';
import { unbounded } from '../support/runs.ts';

const tol = tolerancesSchema.parse({});

test('the Decision section names the model, the rule, the runs and why it stopped, and what it could detect', () => {
  const { verdict } = compareRuns(
    [0, 1].map((i) => unbounded('1.0.0', 200, i)),
    [0, 1].map((i) => unbounded('1.1.0', 199, i)),
    tol,
  );
  const text = decisionSection(verdict);
  assert.match(text, /\*\*Noise model\*\*: assumed \(none configured\)/);
  assert.match(text, /sequential probability ratio test per check/);
  assert.match(text, /fails at most 1% of the time \(the budget is split over the 3 gating checks by weight/);
  assert.match(text, /\*\*Runs\*\*: 2 pairs per test \(minimum 1, at most 3\); every gating check crossed the pass bound by pair 2/);
  const users = verdict.decision.detectable.find((d) => d.metric === 'Supported users')!;
  // The default material change: twice the 5 % tolerance on the log scale.
  assert.equal(users.materialPct, 9.75);
  // The rates decide at once, so supported users gets almost all of the budget.
  assert.ok(users.alpha > 0.0095, String(users.alpha));
  assert.ok(users.probabilityFail! > users.failAtTolerance!, JSON.stringify(users));
  assert.match(text, /a 9\.75% loss of supported users \(unbounded\) would have failed with \d+% probability/);
  assert.match(text, /\| Supported users \| unbounded \| 1 \| /);
});

test('undecided at maxRepeats: the section says inconclusive and how many more pairs would likely decide it', () => {
  const noisy = tolerancesSchema.parse({ supportedUsers: { tolerancePct: 5, noiseFloorPct: 40 } });
  const { verdict } = compareRuns(
    [200, 240, 170].map((u, i) => unbounded('1.0.0', u, i)),
    [190, 215, 180].map((u, i) => unbounded('1.1.0', u, i)),
    noisy,
    { maxPairs: 3 },
  );
  const text = decisionSection(verdict);
  assert.match(text, new RegExp(`About ${verdict.decision.suggestedMorePairs} more pairs? would likely decide it`));
});
