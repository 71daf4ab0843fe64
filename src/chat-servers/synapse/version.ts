import { InputError } from '../../util/errors.ts';

/**
 * Version labels reach pip and file paths, so they are checked twice: against the gate's
 * `target.versionPattern` (the user's rule) and against a fixed shape pip understands
 * (loadgate's rule), before anything else runs.
 */
const PIP_VERSION = /^[0-9]+(\.[0-9]+){1,3}((a|b|rc)[0-9]+)?$/;

/** Maps a label such as "v1.163.0-rc1" to the PyPI version "1.163.0rc1", or throws InputError. */
export function toPipVersion(label: string, versionPattern: string, flag: string): string {
  let pattern: RegExp;
  try {
    pattern = new RegExp(versionPattern);
  } catch {
    throw new InputError(`target.versionPattern is not a valid regular expression: ${versionPattern}`);
  }
  if (!pattern.test(label)) {
    throw new InputError(`${flag}: "${label}" does not match target.versionPattern ${versionPattern}; use a published Synapse version such as 1.163.2`);
  }
  const pip = label.replace(/^v/, '').replace(/-(a|b|rc)(\d+)$/, '$1$2');
  if (!PIP_VERSION.test(pip)) {
    throw new InputError(`${flag}: "${label}" is not a Synapse release version (expected digits and dots such as 1.163.2, optionally rcN)`);
  }
  return pip;
}

/** Orders two pip versions (numeric parts; a pre-release sorts before its release). */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const m = /^([0-9.]+)(?:(a|b|rc)([0-9]+))?$/.exec(v);
    const nums = (m?.[1] ?? v).split('.').map(Number);
    const pre = m?.[2] ? { a: 0, b: 1, rc: 2 }[m[2] as 'a' | 'b' | 'rc'] * 1000 + Number(m[3]) : Number.POSITIVE_INFINITY;
    return { nums, pre };
  };
  const pa = parse(a);
  const pb = parse(b);
  for (let i = 0; i < Math.max(pa.nums.length, pb.nums.length); i++) {
    const d = (pa.nums[i] ?? 0) - (pb.nums[i] ?? 0);
    if (d !== 0) return d;
  }
  return pa.pre === pb.pre ? 0 : pa.pre < pb.pre ? -1 : 1;
}
