import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';

/**
 * The k6 binary the integration tests run: $LOADGATE_K6_BIN, the bench cache
 * (.cache/k6/v1.4.2/k6, filled by ensureK6), or `go install`'s $(go env GOPATH)/bin/k6.
 * Undefined when none exists; the tests then skip and say why.
 */
export function findK6(): string | undefined {
  const candidates = [process.env.LOADGATE_K6_BIN, join(process.cwd(), '.cache', 'k6', 'v1.4.2', 'k6')];
  try {
    const gopath = execFileSync('go', ['env', 'GOPATH'], { encoding: 'utf8', timeout: 10_000 }).trim();
    if (gopath) candidates.push(join(gopath, 'bin', 'k6'));
  } catch {
    /* no Go toolchain */
  }
  for (const candidate of candidates) {
    if (!candidate) continue;
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      /* next */
    }
  }
  return undefined;
}

export const NO_K6 = 'no k6 binary: set LOADGATE_K6_BIN or run `go install go.k6.io/k6@v1.4.2`';
