/**
 * Input the user can fix (a config file, a results file, a flag). The CLI prints the
 * message as-is and exits 3, so messages must name the file or field and the fix.
 */
export class InputError extends Error {
  constructor(
    message: string,
    readonly problems: readonly string[] = [],
  ) {
    super(message);
    this.name = 'InputError';
  }
}

/** Formats zod issues as `path: message`, one per line, with array indices as `[n]`. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out || '(root)';
}
