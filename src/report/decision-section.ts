import type { VerdictFile } from '../results/verdict-schema.ts';
import { chance } from './fail-lines.ts';

/**
 * The report's statistics section, "How the gate decided": how much the verdict is worth. The noise model used,
 * the rule in one sentence, the pairs used and why the gate stopped, what it could detect.
 */
export function decisionSection(v: VerdictFile): string {
  const d = v.decision;
  const m = d.noiseModel;
  const lines: string[] = [];
  const source = m.path ? `\`${m.path}\`` : 'none configured';
  if (m.kind === 'measured') {
    const missing = new Set(m.notInModel ?? []);
    const assumedEntries = m.assumed.filter((a) => !missing.has(a));
    const assumed =
      (assumedEntries.length ? `; assumed, not measured: ${assumedEntries.join(', ')}` : '') +
      (missing.size
        ? `; not in the model (checks added since it was measured), judged under the assumed prior: ${[...missing].join(', ')} (\`loadgate calibrate\` measures them)`
        : '');
    lines.push(`- **Noise model**: measured (${source}, ${m.n ?? '?'} runs, ${m.measuredAt ?? 'date unknown'})${assumed}.`);
  } else {
    lines.push(
      `- **Noise model**: assumed (${source}): the run-to-run noise is taken from the tolerances' noise floors, not measured on this bench. Run \`loadgate calibrate\` to measure it.`,
    );
  }
  lines.push(
    `- **Rule**: after each baseline/candidate pair, a sequential probability ratio test per check weighs "no change" against "the material regression"; ` +
      `the gate fails as soon as one gating check has the evidence, passes once every gating check has, and otherwise adds a pair, up to ${d.maxRepeats}. ` +
      `An unchanged release fails at most ${pct(d.alpha)} of the time (the budget is split over the ${d.gatingChecks} gating checks by weight: the table below), and a material regression passes a check at most ${pct(d.beta)} of the time. ` +
      `The noise model is a prior on each check's noise, updated by the gate's own pair differences (a Student-t likelihood ratio), so a bench noisier than its model leaves a check undecided rather than deciding at the wrong noise.`,
  );
  lines.push(`- **Runs**: ${d.pairs} pair${d.pairs === 1 ? '' : 's'} per test (minimum ${d.minRepeats}, at most ${d.maxRepeats}); ${d.stopReason}.`);
  for (const c of v.checks) {
    if (c.speed?.adjusted) {
      const s = c.speed;
      const probe = (s.candidateProbeMs / s.baselineProbeMs - 1) * 100;
      lines.push(
        `- **Machine speed**: ${c.metric} (${c.test}) is judged at one machine speed. The CPU probe took ${s.baselineProbeMs} ms in the baseline's runs and ${s.candidateProbeMs} ms in the candidate's (geometric means, ${fmtSigned(probe, 1)}); ` +
          `the noise model has ${c.metric.toLowerCase()} moving ${fmtSigned(s.slope)} per 1% of probe time, so the measured ${fmtSigned(s.rawDeltaPct)} is ${c.deltaPct === null ? 'not computable' : fmtSigned(c.deltaPct)} at equal speed, judged at ${s.sdPct}% per run (the noise model's around its fit, updated by these runs' own pair differences). The Checks table shows it at one speed too.`,
      );
    } else if (c.speed && c.gating) {
      lines.push(`- **Machine speed**: ${c.metric} (${c.test}) is judged as measured, at the model's unadjusted noise: ${c.speed.why}.`);
    }
  }
  if (v.next === 'repeat') lines.push('- **Next**: undecided so far; another pair is needed (a resumed run adds it).');
  if (d.suggestedMorePairs !== undefined) {
    lines.push(
      `- **Inconclusive**: the runs could not tell the candidate from the baseline. About ${d.suggestedMorePairs} more pair${d.suggestedMorePairs === 1 ? '' : 's'} would likely decide it: raise maxRepeats and resume, or lower the bench's noise.`,
    );
  }
  const users = d.detectable.find((x) => x.metric === 'Supported users' && x.probabilityFail !== undefined);
  if (users?.probabilityFail !== undefined)
    lines.push(
      `- **Could detect**: a ${users.materialPct}% loss of supported users (${users.test}) would have failed with ${chance(users.probabilityFail)} probability.`,
    );
  const sign = (metric: string) => (metric === 'Supported users' ? '−' : '+');
  const undecided = (x: (typeof d.detectable)[number]) =>
    x.failAtTolerance === undefined || x.passAtTolerance === undefined ? '—' : chance(Math.max(0, 1 - x.failAtTolerance - x.passAtTolerance));
  const rows = d.detectable.map(
    (x) =>
      `| ${x.metric} | ${x.test} | ${x.weight} | ${pct(x.alpha)} | ${sign(x.metric)}${x.tolerancePct}% | ${x.failAtTolerance === undefined ? '—' : chance(x.failAtTolerance)} | ${undecided(x)} | ${sign(x.metric)}${x.materialPct}% | ${x.probabilityFail === undefined ? 'at once (a rate)' : chance(x.probabilityFail)} |`,
  );
  const table = rows.length
    ? `\n\nEach gating check's share of the false-fail budget, and what happens within ${d.maxRepeats} pairs at a true change of its tolerance (the indifference point: it rarely fails there and mostly ends inconclusive) and of its material change (the change it is built to fail), at the noise model's noise (as if it were the only gating check):\n\n| Metric | Test | Weight | False-fail share | Tolerance | Fails there | Inconclusive there | Material change | Fails there |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n${rows.join('\n')}`
    : '';
  return `## How the gate decided (statistics)\n\n${lines.join('\n')}${table}`;
}

function fmtSigned(p: number, digits = 2): string {
  const shown = Math.abs(p).toFixed(digits);
  return `${Number(shown) === 0 ? '' : p > 0 ? '+' : '−'}${shown}%`;
}

function pct(x: number): string {
  const p = x * 100;
  return `${p >= 0.1 ? Number(p.toFixed(2)) : Number(p.toPrecision(2))}%`;
}
