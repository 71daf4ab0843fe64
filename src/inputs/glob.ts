import { InputError } from '../util/errors.ts';
import { TAG_GLOB, quoteForMessage } from './patterns.ts';

/**
 * Turns a GitHub filter-pattern glob (the `on.push.tags` syntax: `*` matches any run of
 * characters except `/`, `?` one character, everything else literal) into an anchored
 * RegExp. Only the plain subset in TAG_GLOB is accepted.
 */
export function globToRegExp(glob: string, field = 'rc-pattern'): RegExp {
  if (!TAG_GLOB.test(glob)) {
    throw new InputError(
      `${field}: ${quoteForMessage(glob)} is not an accepted tag pattern; use letters, digits, ".", "-", "_", "+" and the wildcards "*" and "?" (for example v*-rc*)`,
    );
  }
  const body = glob.replace(/[.+]/g, (c) => `\\${c}`).replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]');
  return new RegExp(`^${body}$`);
}
