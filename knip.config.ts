// knip: unused files, exports, types and dependencies. `npm run knip` runs it twice:
//   knip               every entry point, tests included: what nothing uses;
//   knip --production  only the product's entry points (the `!` ones): exports that only the
//                      tests use, i.e. code kept alive by its tests. An export that exists for
//                      the tests on purpose says so with an `@internal` tag in its doc comment.
import type { KnipConfig } from 'knip';

const production = process.argv.includes('--production');

/**
 * Findings in files other work is changing at the moment; each is to be fixed there, and the
 * entry removed with it (knip then checks the file like any other).
 */
const PENDING: Record<string, ('exports' | 'types')[]> = {};

const config: KnipConfig = {
  entry: [
    'bin/*.js!',
    'src/cli/main.ts!',
    'scripts/**/*.{ts,js}!',
    // Run by path: k6 runs the scenarios, src/util/process.ts spawns the watchdog.
    'src/engine/k6/scenarios/*.js!',
    'src/util/watchdog-child.mjs!',
    'test/**/*.test.ts',
    // Run by path: the skip guard's test runs these suites, test/aws/actions-aws.test.ts this CLI,
    // test/github/release-workflow.test.ts the npm stand-in.
    'test/fixtures/skip-guard/*.fixture.ts',
    'test/support/aws-account-cli.ts',
    'test/support/npm-standin.mjs',
  ],
  project: ['bin/**/*.js!', 'src/**/*.{ts,js,mjs}!', 'scripts/**/*.{ts,js}!', 'test/**/*.{ts,js,mjs}'],
  // A type used in its own file's exported signatures is part of that file's API. In the
  // production pass an export the file itself uses is not reported: what is left there is
  // code only the tests call.
  ignoreExportsUsedInFile: production ? true : { interface: true, type: true },
  ignoreIssues: PENDING,
  // System tools the tests run, found on PATH (scripts/setup.sh and the Debian packages).
  ignoreBinaries: ['jq', 'nginx', 'runuser', 'psql', 'go'],
  ignoreDependencies: [
    // k6's built-in modules (k6/http, k6/metrics), resolved by k6 itself.
    'k6',
  ],
};

export default config;
