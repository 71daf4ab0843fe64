/**
 * The strict shapes every workflow input and tag must have before loadgate uses it.
 * Values reach branch names, file paths, check runs and (through env vars) shell steps,
 * so each pattern is an allow-list of plain ASCII: no shell metacharacters, no path
 * separators, no whitespace, no look-alike Unicode. `[0-9]` rather than `\d` keeps the
 * intent obvious (JS `\d` is ASCII-only either way).
 */

export const MAX_VERSION_LENGTH = 40;

/** 1.2.3, v1.2.3, v1.2.3-rc1, v1.2.3-rc.1, 1.99.0rc1 (PyPI spelling). */
export const VERSION_LABEL = /^v?(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})(-?rc\.?[0-9]{1,4})?$/;

/** Test names as the gate config spells them (src/config/schema.ts). */
export const TEST_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;
export const MAX_TESTS = 20;

export const REPEATS = /^[0-9]{1,2}$/;
export const MAX_REPEATS = 20;
/** runner-limit-minutes: whole minutes, digits only (the range is runnerLimitSchema's, which reads the same digits). */
export const RUNNER_LIMIT_MINUTES = /^[0-9]{1,6}$/;

export const BENCH_KINDS = ['local', 'aws'] as const;
export type BenchKind = (typeof BENCH_KINDS)[number];

/** A repository-relative YAML path, no `..` segment (checked separately), no leading slash. */
export const CONFIG_PATH = /^[A-Za-z0-9_.][A-Za-z0-9._/-]{0,199}\.ya?ml$/;

/** A check run name: shown in branch protection and rulesets, so short and plain. */
export const CHECK_NAME = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/;

/**
 * One GitHub filter pattern for release-candidate tags, e.g. `v*-rc*` or
 * `v[0-9]+.[0-9]+.[0-9]+-rc[0-9]+` (src/inputs/glob.ts gives the meaning).
 */
export const TAG_GLOB = /^[A-Za-z0-9._/*?+[\]!\\-]{1,64}$/;
export const MAX_TAG_PATTERNS = 10;

/** The AWS bench's budget in US dollars: digits with up to two decimals, e.g. 80 or 79.50. */
export const MAX_COST = /^[0-9]{1,6}(\.[0-9]{1,2})?$/;

/** A commit SHA: SHA-1 (40 hex) or SHA-256 (64 hex) repositories. */
export const COMMIT_SHA = /^([0-9a-f]{40}|[0-9a-f]{64})$/;

/** owner/name as GitHub allows them. */
export const REPOSITORY = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/;

/** Quotes a rejected value for an error message: escapes control characters and cuts it short,
 * so a hostile value can neither break the log line nor inject `::workflow-commands::`. */
export function quoteForMessage(value: string, max = 60): string {
  const cut = value.length > max ? `${value.slice(0, max)}…` : value;
  const escaped = JSON.stringify(cut).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `${escaped}${value.length > max ? ` (${value.length} characters)` : ''}`;
}
