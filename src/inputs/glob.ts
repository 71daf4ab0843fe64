import { InputError } from '../util/errors.ts';
import { MAX_TAG_PATTERNS, TAG_GLOB, quoteForMessage } from './patterns.ts';

/**
 * GitHub's filter patterns (the `on.push.tags` syntax, "Filter pattern cheat sheet" in
 * GitHub's workflow syntax reference), compiled to anchored RegExps:
 *
 * - `*` any run of characters except `/`; `**` any run of characters;
 * - `?` zero or one, `+` one or more, of the preceding character or `[]` range;
 * - `[0-9a-z]` one character listed or in a range (ranges within a-z, A-Z or 0-9 only);
 * - `!` at the start negates the pattern (in a list, it excludes what earlier patterns
 *   included); anywhere else it is a literal `!`;
 * - `\` makes the next special character literal; everything else is literal.
 *
 * Only the plain ASCII characters in TAG_GLOB are accepted, so a pattern can never carry
 * shell or regular-expression syntax of its own.
 */

export interface FilterPattern {
  /** The pattern as written. */
  source: string;
  /** `!pattern`: a name it matches is excluded. */
  negated: boolean;
  regex: RegExp;
}

const CLASS_BODY = /^(?:[A-Za-z0-9](?:-[A-Za-z0-9])?)+$/;
const SAME_KIND = [/^[a-z]$/, /^[A-Z]$/, /^[0-9]$/];

function refuse(field: string, pattern: string, why: string): never {
  throw new InputError(
    `${field}: ${quoteForMessage(pattern)} is not an accepted tag pattern: ${why}. ` +
      'Use GitHub filter-pattern syntax, e.g. v*-rc* or v[0-9]+.[0-9]+.[0-9]+-rc[0-9]+',
  );
}

function compileClass(body: string, field: string, pattern: string): string {
  if (!CLASS_BODY.test(body)) refuse(field, pattern, `[${body}] may only list letters, digits and ranges such as 0-9`);
  for (const [, lo, hi] of body.matchAll(/([A-Za-z0-9])-([A-Za-z0-9])/g)) {
    const kind = SAME_KIND.find((k) => k.test(lo as string));
    if (!kind || !kind.test(hi as string) || (lo as string) > (hi as string)) refuse(field, pattern, `${lo}-${hi} is not a range within a-z, A-Z or 0-9`);
  }
  return `[${body}]`;
}

/** One pattern, with its leading `!` if any. */
export function parseFilterPattern(pattern: string, field = 'rc-pattern'): FilterPattern {
  if (!TAG_GLOB.test(pattern)) {
    refuse(field, pattern, 'use letters, digits, ".", "_", "-", "/" and the special characters * ** ? + [] ! \\ (at most 64 characters)');
  }
  const negated = pattern.startsWith('!');
  const body = negated ? pattern.slice(1) : pattern;
  if (!body) refuse(field, pattern, '"!" needs a pattern after it');
  let out = '';
  // Whether the last token was a single character or range that ? and + can repeat.
  let repeatable = false;
  for (let i = 0; i < body.length;) {
    const c = body[i] as string;
    if (c === '\\') {
      const next = body[i + 1];
      if (next === undefined) refuse(field, pattern, 'a trailing "\\" escapes nothing');
      out += /[A-Za-z0-9_/-]/.test(next) ? next : `\\${next}`;
      i += 2;
      repeatable = true;
    } else if (c === '*') {
      const double = body[i + 1] === '*';
      out += double ? '.*' : '[^/]*';
      i += double ? 2 : 1;
      repeatable = false;
    } else if (c === '?' || c === '+') {
      if (!repeatable) refuse(field, pattern, `"${c}" repeats the preceding character, and there is none to repeat at position ${i + 1}`);
      out += c;
      i += 1;
      repeatable = false;
    } else if (c === '[') {
      const end = body.indexOf(']', i + 1);
      if (end < 0) refuse(field, pattern, '"[" has no closing "]"');
      out += compileClass(body.slice(i + 1, end), field, pattern);
      i = end + 1;
      repeatable = true;
    } else if (c === ']') {
      refuse(field, pattern, '"]" has no opening "["');
    } else {
      out += c === '.' ? '\\.' : c;
      i += 1;
      repeatable = true;
    }
  }
  return { source: pattern, negated, regex: new RegExp(`^${out}$`) };
}

/**
 * A list of patterns, separated by commas (one env var holds what `on.push.tags` lists).
 * As on GitHub, the last pattern that matches a name decides: a positive one includes
 * it, a negated one excludes it; a list must start with a positive pattern.
 */
export function parseFilterPatterns(list: string, field = 'rc-pattern'): FilterPattern[] {
  const parts = list.split(',');
  if (parts.length > MAX_TAG_PATTERNS) throw new InputError(`${field}: ${parts.length} patterns; at most ${MAX_TAG_PATTERNS}, separated by commas`);
  const patterns = parts.map((p) => parseFilterPattern(p, field));
  if (patterns[0]?.negated) {
    throw new InputError(
      `${field}: ${quoteForMessage(list)} starts with a negated pattern, which can only exclude what an earlier pattern included; put a positive pattern first`,
    );
  }
  return patterns;
}

export function matchesFilterPatterns(name: string, patterns: readonly FilterPattern[]): boolean {
  let included = false;
  for (const p of patterns) if (p.regex.test(name)) included = !p.negated;
  return included;
}
