import type { SyntaxNode, Tree } from '@lezer/common';
import { parser } from '@prometheus-io/lezer-promql';

/**
 * PromQL syntax, checked with Prometheus's own grammar (@prometheus-io/lezer-promql, the
 * lezer port of promql/parser/generated_parser.y that Prometheus's web UI uses). A lezer
 * parser recovers from errors instead of failing, so a query is wrong when its tree holds
 * an error node (⚠). Brackets are checked first: their message (which bracket, where it
 * opened) says more than the grammar's first error after them.
 */

export interface PromqlProblem {
  /** 1-based column in the query as written. */
  column: number;
  /** What is wrong and how to fix it. */
  message: string;
}

/** The placeholders the local bench fills in before a query reaches Prometheus (src/metrics/target-cpus.ts). */
const LOCAL_PLACEHOLDERS: readonly (readonly [name: string, value: string, kind: string])[] = [
  ['$TARGET_CPU_COUNT', '1', 'a number (the CPUs the target may use)'],
  ['$TARGET_CPUS', '0|1', 'a regular expression of CPU numbers such as 0|1'],
];

/** The placeholder written over [from, to) of the query (an error inside a filled-in value is the placeholder's), and where it starts. */
function placeholderAt(query: string, from: number, to: number): readonly [string, string, string, number] | undefined {
  for (const entry of LOCAL_PLACEHOLDERS) {
    for (let i = query.indexOf(entry[0]); i >= 0; i = query.indexOf(entry[0], i + 1)) {
      if (i <= Math.max(from, to - 1) && from < i + entry[0].length) return [...entry, i];
    }
  }
  return undefined;
}

const FUNCTIONS_DOC = 'https://prometheus.io/docs/prometheus/latest/querying/functions/';
const SYNTAX_DOC = 'https://prometheus.io/docs/prometheus/latest/querying/basics/';
/** Words the grammar reads before a parenthesis that are not function names. */
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset']);

/**
 * Replaces each placeholder by a value of its kind padded with spaces to its length, so
 * the grammar sees what Prometheus will and columns stay those of the query as written.
 */
function fillPlaceholders(query: string): string {
  let out = query;
  for (const [name, value] of LOCAL_PLACEHOLDERS) out = out.replaceAll(name, value.padEnd(name.length, ' '));
  return out;
}

const OPENS: Record<string, string> = { '(': ')', '[': ']', '{': '}' };
const CLOSES: Record<string, string> = { ')': '(', ']': '[', '}': '{' };

/** An unclosed or stray bracket outside string literals, with where it is. */
function bracketProblem(query: string): PromqlProblem | undefined {
  const open: { char: string; at: number }[] = [];
  let quote: string | undefined;
  for (let i = 0; i < query.length; i++) {
    const c = query[i] as string;
    if (quote) {
      if (c === '\\' && quote !== '`') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') quote = c;
    else if (c === '#') {
      // A comment runs to the end of the line.
      const end = query.indexOf('\n', i);
      i = end < 0 ? query.length : end;
    } else if (OPENS[c]) open.push({ char: c, at: i });
    else if (CLOSES[c]) {
      const last = open.pop();
      if (!last) return { column: i + 1, message: `"${c}" closes nothing: remove it, or add the "${CLOSES[c]}" it closes` };
      if (last.char !== CLOSES[c]) {
        return {
          column: i + 1,
          message: `"${c}" cannot close the "${last.char}" opened at column ${last.at + 1}: close that one with "${OPENS[last.char]}" first`,
        };
      }
    }
  }
  if (quote) return { column: query.length + 1, message: `a string opened with ${quote} is never closed: add the closing ${quote}` };
  const last = open.pop();
  if (last) return { column: last.at + 1, message: `the "${last.char}" opened at column ${last.at + 1} is never closed: add "${OPENS[last.char]}"` };
  return undefined;
}

/** The first error node of the grammar's tree, as [from, to]. */
function firstErrorNode(tree: Tree): [number, number] | undefined {
  let found: [number, number] | undefined;
  tree.iterate({
    enter(node) {
      if (found) return false;
      if (node.type.isError) {
        found = [node.from, node.to];
        return false;
      }
      return undefined;
    },
  });
  return found;
}

/** The text at an error, for the message: the error node's span, else the token that starts there. */
function tokenAt(query: string, from: number, to: number): { at: number; text: string } {
  let at = from;
  while (at < query.length && /\s/.test(query[at] as string)) at++;
  const token = /^(\$?\w+|\S)/.exec(query.slice(at))?.[0] ?? '';
  const span = to > at && !token.startsWith('$') ? query.slice(at, to) : token;
  return { at, text: span.length > 24 ? `${span.slice(0, 24)}…` : span };
}

function grammarProblem(written: string, tree: Tree, localBench: boolean): PromqlProblem | undefined {
  const error = firstErrorNode(tree);
  if (!error) return undefined;
  const { at, text } = tokenAt(written, error[0], error[1]);
  const column = at + 1;
  if (at >= written.length)
    return { column, message: `the query ends early, after "${written.trimEnd().slice(-24)}": complete the expression (${SYNTAX_DOC})` };
  const placeholder = placeholderAt(written, at, error[1]);
  if (placeholder) {
    const [name, , kind] = placeholder;
    if (!localBench)
      return { column: placeholder[3] + 1, message: `${name} is a placeholder only the local bench fills in; on this bench write the value itself` };
    return {
      column: placeholder[3] + 1,
      message: `${name} becomes ${kind}, which cannot stand there${name === '$TARGET_CPUS' ? ': write it inside a label matcher\'s quotes (cpu=~"$TARGET_CPUS")' : ''}`,
    };
  }
  if (text.startsWith('$'))
    return {
      column,
      message: `"${text}" is not PromQL; the placeholders are ${LOCAL_PLACEHOLDERS.map(([name]) => name).join(' and ')}, filled in on the local bench`,
    };
  const called = /([A-Za-z_][A-Za-z0-9_]*)\s*$/.exec(written.slice(0, at))?.[1];
  if (written[at] === '(' && called && !KEYWORDS.has(called.toLowerCase())) {
    return { column: at - called.length + 1, message: `"${called}" is not a PromQL function: check its spelling against ${FUNCTIONS_DOC}` };
  }
  return { column, message: `unexpected "${text}": check the operator or term there against the PromQL syntax (${SYNTAX_DOC})` };
}

/**
 * The argument that must be a range vector, by function: the functions whose ArgTypes hold
 * ValueTypeMatrix in Prometheus's promql/parser/functions.go, and that argument's index.
 */
const RANGE_ARGUMENT: Readonly<Record<string, number>> = {
  ...Object.fromEntries(
    [
      'absent_over_time',
      'avg_over_time',
      'changes',
      'count_over_time',
      'delta',
      'deriv',
      'double_exponential_smoothing',
      'first_over_time',
      'idelta',
      'increase',
      'integral',
      'irate',
      'last_over_time',
      'mad_over_time',
      'max_over_time',
      'min_over_time',
      'predict_linear',
      'present_over_time',
      'rate',
      'resets',
      'stddev_over_time',
      'stdvar_over_time',
      'sum_over_time',
      'ts_of_first_over_time',
      'ts_of_last_over_time',
      'ts_of_max_over_time',
      'ts_of_min_over_time',
    ].map((name) => [name, 0]),
  ),
  quantile_over_time: 1,
};

/** Nodes that keep their operand's type: parentheses, offset and @. */
const TYPE_KEEPING = new Set(['ParenExpr', 'OffsetExpr', 'StepInvariantExpr']);
const isRange = (node: SyntaxNode) => node.name === 'MatrixSelector' || node.name === 'SubqueryExpr';

function unwrap(node: SyntaxNode): SyntaxNode {
  let n = node;
  while (TYPE_KEEPING.has(n.name) && n.firstChild) n = n.firstChild;
  return n;
}

function children(node: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (let c = node.firstChild; c; c = c.nextSibling) out.push(c);
  return out;
}

/** The function a FunctionCallBody belongs to, if it is a function call's (an aggregation's body has none). */
function calledFunction(query: string, body: SyntaxNode): string | undefined {
  const id = body.parent?.name === 'FunctionCall' ? body.parent.getChild('FunctionIdentifier') : null;
  return id ? query.slice(id.from, id.to) : undefined;
}

const shown = (query: string, node: SyntaxNode) => {
  const text = query.slice(node.from, node.to);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
};

/** A range vector (x[1m], a subquery) where Prometheus's type check wants an instant one, or the reverse (promql/parser/parse.go checkAST). */
function rangeProblem(query: string, node: SyntaxNode): PromqlProblem | undefined {
  if (node.name === 'FunctionCallBody') {
    const name = calledFunction(query, node);
    const index = name === undefined ? undefined : RANGE_ARGUMENT[name];
    const arg = index === undefined ? undefined : children(node)[index];
    if (arg && !isRange(unwrap(arg))) {
      return {
        column: arg.from + 1,
        message: `${name}() takes a range vector, not "${shown(query, arg)}": give the selector a range such as [1m] (or make it a subquery, [5m:30s])`,
      };
    }
    return undefined;
  }
  if (!isRange(node)) return undefined;
  let outer = node;
  while (outer.parent && TYPE_KEEPING.has(outer.parent.name)) outer = outer.parent;
  const parent = outer.parent;
  if (parent?.name === 'FunctionCallBody') {
    const name = calledFunction(query, parent);
    if (name !== undefined && RANGE_ARGUMENT[name] === children(parent).findIndex((c) => c.from === outer.from && c.to === outer.to)) return undefined;
  }
  const text = shown(query, node);
  const where = parent?.name === 'PromQL' ? 'which the query would return instead of a number' : 'which only a function over time takes';
  return { column: node.from + 1, message: `"${text}" is a range vector, ${where}: pass it to one, e.g. rate(${text}) or avg_over_time(${text})` };
}

function typeProblem(query: string, tree: Tree): PromqlProblem | undefined {
  let found: PromqlProblem | undefined;
  tree.iterate({
    enter(ref) {
      if (found) return false;
      found = rangeProblem(query, ref.node);
      return undefined;
    },
  });
  return found;
}

/**
 * Why Prometheus would refuse `query` as PromQL, or undefined when it parses: its syntax,
 * then where range vectors may stand. `localBench`: the local bench's placeholders are
 * filled in first, as the bench does.
 */
export function promqlProblem(query: string, options: { localBench: boolean }): PromqlProblem | undefined {
  if (query.trim() === '') return { column: 1, message: 'the query is empty' };
  const brackets = bracketProblem(query);
  if (brackets) return brackets;
  const parsed = options.localBench ? fillPlaceholders(query) : query;
  const tree = parser.parse(parsed);
  return grammarProblem(query, tree, options.localBench) ?? typeProblem(parsed, tree);
}
