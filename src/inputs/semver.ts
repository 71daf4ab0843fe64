/**
 * A small semantic-version reader for release tags. It accepts the spellings release
 * tags use in practice (v1.2.3, 1.2.3-rc.1, 1.2.3-rc1, PyPI's 1.2.3rc1) and orders
 * pre-releases naturally, so rc10 sorts after rc9 (plain semver would compare "rc10" and
 * "rc9" as strings).
 */

export interface SemVer {
  /** The tag as written. */
  raw: string;
  major: number;
  minor: number;
  patch: number;
  /** Pre-release identifiers, split into letter and number runs; empty for a stable release. */
  prerelease: (string | number)[];
}

const SEMVER_TAG = /^v?([0-9]{1,9})\.([0-9]{1,9})\.([0-9]{1,9})(?:-?([0-9A-Za-z][0-9A-Za-z.-]{0,40}))?(?:\+[0-9A-Za-z.-]{1,40})?$/;

export function parseSemVer(tag: string): SemVer | null {
  const match = SEMVER_TAG.exec(tag);
  if (!match) return null;
  const [, major, minor, patch, pre] = match;
  return {
    raw: tag,
    major: Number(major),
    minor: Number(minor),
    patch: Number(patch),
    prerelease: pre ? splitIdentifiers(pre) : [],
  };
}

/** "rc.10" and "rc10" both become ["rc", 10]. */
function splitIdentifiers(pre: string): (string | number)[] {
  const parts: (string | number)[] = [];
  for (const run of pre.match(/[0-9]+|[A-Za-z]+/g) ?? []) {
    parts.push(/^[0-9]+$/.test(run) ? Number(run) : run.toLowerCase());
  }
  return parts;
}

export function isPrerelease(version: SemVer): boolean {
  return version.prerelease.length > 0;
}

/** Negative when a < b, positive when a > b, 0 when equal in precedence. */
export function compareSemVer(a: SemVer, b: SemVer): number {
  for (const key of ['major', 'minor', 'patch'] as const) {
    if (a[key] !== b[key]) return a[key] - b[key];
  }
  // A stable release outranks any pre-release of the same version.
  if (!a.prerelease.length || !b.prerelease.length) return b.prerelease.length - a.prerelease.length;
  const length = Math.min(a.prerelease.length, b.prerelease.length);
  for (let i = 0; i < length; i++) {
    const x = a.prerelease[i] as string | number;
    const y = b.prerelease[i] as string | number;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    // Numbers sort before words, as semver orders numeric identifiers first.
    if (typeof x === 'number') return -1;
    if (typeof y === 'number') return 1;
    return x < y ? -1 : 1;
  }
  return a.prerelease.length - b.prerelease.length;
}
