import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { InputError, formatIssuePath } from '../util/errors.ts';
import { promqlProblem } from './promql.ts';
import { gateConfigSchema, type GateConfig } from './schema.ts';
import { CHAT_SERVER_BENCHES, serversOf } from './chat-servers.ts';

/** Turns zod issues into `path: message` lines, expanding unknown keys to their own path. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        lines.push(`${formatIssuePath([...issue.path, key])}: unknown key (check its spelling against the config reference)`);
      }
    } else {
      lines.push(`${formatIssuePath(issue.path)}: ${issue.message.replace(/^Invalid input: /, '')}`);
    }
  }
  return lines;
}

/** Every PromQL string of the config, by its path, parsed with Prometheus's grammar. */
function promqlProblems(config: GateConfig): string[] {
  const localBench = config.bench.kind === 'local';
  const queries: [string, string][] = config.tests.flatMap((test, i) => {
    if (test.type === 'bounded') return test.earlyStop ? [[`tests[${i}].earlyStop.query`, test.earlyStop.query] as [string, string]] : [];
    return test.health.map((h, j) => [`tests[${i}].health[${j}].query`, h.query] as [string, string]);
  });
  return queries.flatMap(([path, query]) => {
    const problem = promqlProblem(query, { localBench });
    return problem ? [`${path}: not valid PromQL at column ${problem.column}: ${problem.message}`] : [];
  });
}

/** Cross-field rules zod's shape cannot say. */
function semanticProblems(config: GateConfig): string[] {
  const problems: string[] = [];
  const seen = new Map<string, number>();
  config.tests.forEach((test, i) => {
    const first = seen.get(test.name);
    if (first !== undefined) problems.push(`tests[${i}].name: "${test.name}" is already used by tests[${first}]; give each test its own name`);
    else seen.set(test.name, i);
    if (test.type === 'bounded' && test.rampUp >= test.duration) {
      problems.push(`tests[${i}].rampUp: must be shorter than duration, or nothing is measured`);
    }
    if (test.type === 'unbounded') {
      if (test.stabilityWindow >= test.maxDuration) {
        problems.push(`tests[${i}].stabilityWindow: must be shorter than maxDuration`);
      }
      const names = new Set<string>();
      test.health.forEach((q, j) => {
        if (names.has(q.name)) problems.push(`tests[${i}].health[${j}].name: duplicate health query name "${q.name}"`);
        names.add(q.name);
      });
    }
  });
  if (config.maxRepeats < config.repeats)
    problems.push(`maxRepeats: ${config.maxRepeats} is below repeats (${config.repeats}), the minimum number of pairs; raise maxRepeats`);
  try {
    new RegExp(config.target.versionPattern);
  } catch {
    problems.push('target.versionPattern: not a valid regular expression');
  }
  // The run refuses this too (src/run/options.ts), but only once it starts.
  const runsOn = CHAT_SERVER_BENCHES[config.target.system];
  if (runsOn !== config.bench.kind) {
    problems.push(
      `bench.kind: target.system "${config.target.system}" runs on the ${runsOn} bench (bench.kind: ${runsOn}); the ${config.bench.kind} bench runs ${serversOf(config.bench.kind).join(', ')}`,
    );
  }
  if (config.bench.kind === 'local' && config.engine.kind !== 'k6') {
    problems.push(`engine.kind: "${config.engine.kind}" cannot run on the local bench, which drives its server with k6 (engine.kind: k6)`);
  }
  return [...problems, ...promqlProblems(config)];
}

/** Parses already-loaded YAML/JSON data; `source` names the file in messages. */
export function parseGateConfig(data: unknown, source: string): GateConfig {
  const result = gateConfigSchema.safeParse(data);
  if (!result.success) {
    const lines = describeIssues(result.error.issues);
    throw new InputError(`${source} is not a valid gate config:\n${lines.join('\n')}`, lines);
  }
  const problems = semanticProblems(result.data);
  if (problems.length) throw new InputError(`${source} is not a valid gate config:\n${problems.join('\n')}`, problems);
  return result.data;
}

/** YAML errors shown at most: a file that is not YAML at all would give thousands. */
const MAX_YAML_ERRORS = 10;

/**
 * The file as text, or why it is not: a NUL byte or bytes that are not UTF-8 mean a
 * binary file, whose bytes must never reach the terminal in an error message.
 */
async function readConfigText(path: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new InputError(`cannot read gate config ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const binary = (what: string) =>
    new InputError(`${path} is not a text file: it holds ${what}; a gate config is YAML text (e.g. .github/loadgate.yml)`, [
      `not a text file (a gate config is YAML text): it holds ${what}`,
    ]);
  const nul = bytes.indexOf(0);
  if (nul >= 0) throw binary(`a NUL byte at offset ${nul}`);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw binary('bytes that are not UTF-8');
  }
}

export async function loadGateConfig(path: string): Promise<GateConfig> {
  const text = await readConfigText(path);
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length) {
    const shown = doc.errors.slice(0, MAX_YAML_ERRORS).map((e) => `line ${e.linePos?.[0]?.line ?? '?'}: ${e.message.split('\n')[0]}`);
    const lines = doc.errors.length > MAX_YAML_ERRORS ? [...shown, `and ${doc.errors.length - MAX_YAML_ERRORS} more YAML errors`] : shown;
    throw new InputError(`${path} is not valid YAML:\n${lines.join('\n')}`, lines);
  }
  return parseGateConfig(doc.toJS(), path);
}
