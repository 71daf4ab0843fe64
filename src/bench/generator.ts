import type { GeneratorRule } from './run-stage.ts';

export interface GeneratorMeasures {
  cpuPercentMax: number | undefined;
  droppedIterations: number;
  scriptErrors: number;
}

/** Whether the load generator, not the target, limited the run (GeneratorRule says when it did). */
export function judgeGenerator(o: GeneratorMeasures, rule: GeneratorRule): { saturated: boolean; problem?: string } {
  const saturated = (o.cpuPercentMax ?? 0) > rule.limitPercent || o.droppedIterations > 0;
  if (o.cpuPercentMax === undefined && rule.words.unmeasured) return { saturated, problem: rule.words.unmeasured };
  if (o.cpuPercentMax !== undefined && o.cpuPercentMax > rule.limitPercent) return { saturated, problem: rule.words.cpu(o.cpuPercentMax, rule.limitPercent) };
  if (o.droppedIterations > 0) return { saturated, problem: rule.words.dropped(o.droppedIterations) };
  if (o.scriptErrors > 0) return { saturated, problem: rule.words.scriptErrors(o.scriptErrors) };
  return { saturated };
}
