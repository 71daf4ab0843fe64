/**
 * The load-test-ng releases loadgate supports. Declared here, below the config schema and
 * the engine, because both need them: the schema for its default, the engine for its
 * per-release validation rules (engine/loadtest-ng/rules.ts).
 */

/** Release tags the validation rules were transcribed from and checked against, oldest first. */
export const SUPPORTED_LOADTEST_NG_VERSIONS = ['v1.29.0', 'v1.30.0', 'v1.31.0', 'v1.32.0', 'v1.33.0-rc2'] as const;
export type LoadTestNgVersion = (typeof SUPPORTED_LOADTEST_NG_VERSIONS)[number];

/** The release loadgate installs by default: the newest non-candidate release of the range. */
export const DEFAULT_LOADTEST_NG_VERSION: LoadTestNgVersion = 'v1.32.0';

export function isSupportedLoadTestNgVersion(v: string): v is LoadTestNgVersion {
  return (SUPPORTED_LOADTEST_NG_VERSIONS as readonly string[]).includes(v);
}
