import type { VerdictFile } from '../compare/verdict-schema.ts';

/**
 * The report's "Decision" section: how much the verdict is worth. The noise model used,
 * the rule in one sentence, the pairs used and why the gate stopped, what it could detect.
 */
export function decisionSection(v: VerdictFile): string {
  const d = v.decision;
  const m = d.noiseModel;
  const lines: string[] = [];
  const source = m.path ? `\`${m.path}\`` : 'none configured';
  if (m.kind === 'measured') {
    const assumed = m.assumed.length ? `; assumed, not measured: ${m.assumed.join(', ')}` : '';
    lines.push(`- **Noise model**: measured (${source}, ${m.n ?? '?'} runs, ${m.measuredAt ?? 'date unknown'})${assumed}.`);
  } else {
    lines.push(`- **Noise model**: assumed (${source}): the run-to-run noise is taken from the tolerances' noise floors, not measured on this bench. Run \`loadgate calibrate\` to measure it.`);
  }
  lines.push(
    `- **Rule**: after each baseline/candidate pair, a sequential probability ratio test per check weighs "no change" against "the material regression"; ` +
      `the gate fails as soon as one gating check has the evidence, passes once every gating check has, and otherwise adds a pair, up to ${d.maxRepeats}. ` +
      `An unchanged release fails at most ${pct(d.alpha)} of the time (${pct(d.alphaPerCheck)} per check over ${d.gatingChecks} gating checks), and a material regression passes a check at most ${pct(d.beta)} of the time. ` +
      `Those rates hold at the noise model's noise, so from the second pair on the gate also checks that its own runs fit the model, and stops as inconclusive when they do not.`,
  );
  lines.push(`- **Runs**: ${d.pairs} pair${d.pairs === 1 ? '' : 's'} per test (minimum ${d.minRepeats}, at most ${d.maxRepeats}); ${d.stopReason}.`);
  for (const n of d.noisy ?? []) {
    lines.push(
      `- **Noisier than the model**: ${n.metric} (${n.test}) varied ${n.sdPct}% per run in its pair differences (${n.df} degrees of freedom), where the model allows ${n.modelSdPct}% (χ² p = ${n.p}, below ${n.level}). ` +
        'At this noise neither a pass nor a fail can be trusted: find what disturbed the bench (other load on the host, a noisy neighbour), or recalibrate with `loadgate calibrate` if this is its usual noise.',
    );
  }
  for (const c of v.checks) {
    if (c.speed?.adjusted) {
      const s = c.speed;
      const probe = (s.candidateProbeMs / s.baselineProbeMs - 1) * 100;
      lines.push(
        `- **Machine speed**: ${c.metric} (${c.test}) is judged at one machine speed. The CPU probe took ${s.baselineProbeMs} ms in the baseline's runs and ${s.candidateProbeMs} ms in the candidate's (geometric means, ${fmtSigned(probe, 1)}); ` +
          `the noise model has ${c.metric.toLowerCase()} moving ${fmtSigned(s.slope)} per 1% of probe time, so the measured ${fmtSigned(s.rawDeltaPct)} is ${c.deltaPct === null ? 'not computable' : fmtSigned(c.deltaPct)} at equal speed, judged at ${s.sdPct}% per run (the noise model's around its fit, pooled with these runs' own spread). The Checks table shows it at one speed too.`,
      );
    } else if (c.speed && c.gating) {
      lines.push(`- **Machine speed**: ${c.metric} (${c.test}) is judged as measured, at the model's unadjusted noise: ${c.speed.why}.`);
    }
  }
  if (v.next === 'repeat') lines.push('- **Next**: undecided so far; another pair is needed (a resumed run adds it).');
  if (d.suggestedMorePairs !== undefined) {
    lines.push(`- **Inconclusive**: the runs could not tell the candidate from the baseline. About ${d.suggestedMorePairs} more pair${d.suggestedMorePairs === 1 ? '' : 's'} would likely decide it: raise maxRepeats and resume, or lower the bench's noise.`);
  }
  const users = d.detectable.find((x) => x.metric === 'Supported users');
  if (users) lines.push(`- **Could detect**: a ${users.materialPct}% loss of supported users (${users.test}) would have failed with ${probability(users.probabilityFail)} probability.`);
  const rows = d.detectable.map((x) => `| ${x.metric} | ${x.test} | ${x.metric === 'Supported users' ? '−' : '+'}${x.materialPct}% | ${probability(x.probabilityFail)} |`);
  const table = rows.length ? `\n\nChance that a material regression of one metric fails the gate within ${d.maxRepeats} pairs, at this noise model:\n\n| Metric | Test | Material change | Fails with |\n| --- | --- | --- | --- |\n${rows.join('\n')}` : '';
  return `## Decision\n\n${lines.join('\n')}${table}`;
}

/** Simulated with 1000 trials: 100 % would claim more than the simulation shows. */
function probability(p: number): string {
  return p >= 0.995 ? '> 99%' : `${Math.round(p * 100)}%`;
}

function fmtSigned(p: number, digits = 2): string {
  const shown = Math.abs(p).toFixed(digits);
  return `${Number(shown) === 0 ? '' : p > 0 ? '+' : '−'}${shown}%`;
}

function pct(x: number): string {
  const p = x * 100;
  return `${p >= 0.1 ? Number(p.toFixed(2)) : Number(p.toPrecision(2))}%`;
}
