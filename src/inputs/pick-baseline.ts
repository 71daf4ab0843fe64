import { InputError } from '../util/errors.ts';
import { VERSION_LABEL, MAX_VERSION_LENGTH, quoteForMessage } from './patterns.ts';
import { compareSemVer, isPrerelease, parseSemVer, type SemVer } from './semver.ts';
import { validateVersionLabel } from './validate.ts';

export interface BaselineChoice {
  candidate: string;
  baseline: string;
  /** One sentence saying why, printed in the log and written into the report. */
  reason: string;
  /** How many tags were looked at and why the others were passed over. */
  considered: number;
  skipped: { prerelease: number; notBelow: number; notVersion: number; patternMismatch: number };
}

/**
 * The newest stable release below the candidate, in semver order. Pre-releases (rc,
 * beta, ...) never serve as a baseline: a gate compares a candidate with what users run.
 * Tags that are not versions, or fail the strict label pattern or the gate's
 * versionPattern, are skipped, so a hostile tag name can never become the baseline.
 */
export function pickBaseline(candidateTag: string, tags: readonly string[], versionPattern?: string): BaselineChoice {
  validateVersionLabel(candidateTag, 'candidate', versionPattern);
  const candidate = parseSemVer(candidateTag);
  if (!candidate) throw new InputError(`candidate: ${quoteForMessage(candidateTag)} is not a semantic version`);
  const pattern = versionPattern === undefined ? undefined : new RegExp(versionPattern);
  const skipped = { prerelease: 0, notBelow: 0, notVersion: 0, patternMismatch: 0 };
  let best: SemVer | null = null;
  for (const tag of new Set(tags)) {
    if (tag === candidateTag) continue;
    const version = tag.length <= MAX_VERSION_LENGTH && VERSION_LABEL.test(tag) ? parseSemVer(tag) : null;
    if (!version) {
      skipped.notVersion++;
      continue;
    }
    if (isPrerelease(version)) {
      skipped.prerelease++;
      continue;
    }
    if (compareSemVer(version, candidate) >= 0) {
      skipped.notBelow++;
      continue;
    }
    if (pattern && !pattern.test(tag)) {
      skipped.patternMismatch++;
      continue;
    }
    // Equal precedence (v1.2.3 and 1.2.3 both tagged): keep the first, the order is the API's.
    if (!best || compareSemVer(version, best) > 0) best = version;
  }
  const considered = new Set(tags).size;
  if (!best) {
    throw new InputError(
      `baseline: no stable release tag below ${candidateTag} among ${considered} tag${considered === 1 ? '' : 's'} ` +
        `(${skipped.prerelease} pre-release, ${skipped.notBelow} not below the candidate, ${skipped.notVersion} not a version, ${skipped.patternMismatch} outside target.versionPattern); give the baseline input explicitly`,
    );
  }
  const reason =
    `${best.raw} is the newest stable release below ${candidateTag} in semver order ` +
    `(${considered} tags looked at; skipped ${skipped.prerelease} pre-release${skipped.prerelease === 1 ? '' : 's'}, ` +
    `${skipped.notBelow} at or above the candidate, ${skipped.notVersion + skipped.patternMismatch} not matching the version pattern)`;
  return { candidate: candidateTag, baseline: best.raw, reason, considered, skipped };
}
