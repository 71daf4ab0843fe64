import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';

/**
 * The k6 binary the integration tests run: $LOADGATE_K6_BIN, the bench cache
 * (.cache/k6/v1.4.2/k6, filled by ensureK6), or `go install`'s $(go env GOPATH)/bin/k6.
 * Undefined when none exists; the tests then skip and say why (never under scripts/test.sh,
 * which sets $LOADGATE_K6_BIN).
 */
export function findK6(): string | undefined {
  // scripts/test.sh (and so CI) names the binary it built: a missing one is an error, not a skip.
  const named = process.env.LOADGATE_K6_BIN;
  if (named) {
    try {
      accessSync(named, constants.X_OK);
    } catch {
      throw new Error(`LOADGATE_K6_BIN=${named} is not an executable k6; run scripts/setup.sh, or unset it to let the k6 tests skip`);
    }
    return named;
  }
  const candidates = [join(process.cwd(), '.cache', 'k6', 'v1.4.2', 'k6')];
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
