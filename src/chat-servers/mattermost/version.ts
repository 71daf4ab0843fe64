import { InputError } from '../../util/errors.ts';

/**
 * Version labels come from tags and workflow inputs and end up in URLs, file names and
 * shell commands on the bench, so each is checked before any use: first against a fixed
 * safe alphabet (no `/`, `..`, whitespace or shell metacharacters, whatever the pattern
 * allows), then against the gate's `target.versionPattern`.
 */
const SAFE_LABEL = /^[A-Za-z0-9][A-Za-z0-9.+_-]{0,63}$/;

export function validateVersionLabel(label: string, versionPattern: string, field = 'version'): string {
  if (typeof label !== 'string' || label.length === 0) throw new InputError(`${field}: a version label is required, such as v10.12.0`);
  const shown = JSON.stringify(label.length > 80 ? `${label.slice(0, 80)}…` : label);
  if (label.includes('..')) throw new InputError(`${field}: ${shown} contains "..", which is not allowed in a version label`);
  if (!SAFE_LABEL.test(label)) {
    throw new InputError(
      `${field}: ${shown} is not a safe version label; use letters, digits, ".", "-", "+" and "_" only (no "/", spaces or shell characters), such as v10.12.0 or v11.0.1-rc2`,
    );
  }
  let pattern: RegExp;
  try {
    pattern = new RegExp(versionPattern);
  } catch {
    throw new InputError(`target.versionPattern: ${JSON.stringify(versionPattern)} is not a valid regular expression`);
  }
  if (!pattern.test(label)) throw new InputError(`${field}: ${shown} does not match target.versionPattern ${versionPattern}`);
  return label;
}

/** "v10.12.0" → "10.12.0": release artifacts are named without the leading v. */
export function stripLeadingV(label: string): string {
  return label.startsWith('v') || label.startsWith('V') ? label.slice(1) : label;
}
