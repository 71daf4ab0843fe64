/**
 * Writes reports/examples/: run results reconstructed from a seed comparison report,
 * and the report loadgate makes from them. Run with `npm run examples`.
 * Headline numbers (supported users, error counts, heap and stack changes) are the
 * reports'; the rest is generated around them (see scripts/lib/synthetic-runs.ts).
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { compareAndReport } from '../src/compare/compare-and-report.ts';
import { runResultSchema, type RunResultInput } from '../src/results/schema.ts';
import { syntheticRun, type BoundedSpec, type CommonSpec, type UnboundedSpec } from './lib/synthetic-runs.ts';

type Spec = Omit<BoundedSpec, 'version' | 'repeat' | 'seed'> | Omit<UnboundedSpec, 'version' | 'repeat' | 'seed'>;

export interface ExampleComparison {
  dir: string;
  baseline: string;
  candidate: string;
  common: CommonSpec;
  tests: { baseline: Spec; candidate: Spec }[];
}

const HOUR = 3600;

export const EXAMPLES: ExampleComparison[] = [
  {
    dir: 'v10.12.0-vs-v11.0.1-rc2',
    baseline: 'v10.12.0',
    candidate: 'v11.0.1-rc2',
    common: {
      system: 'mattermost',
      provenance: {
        kind: 'reconstructed',
        note: "from the seed report perf-comparison-v10.12.0-vs-v11.0.1-rc2.md: supported users 17272 vs 17040 and the bounded p99 spike at the end of the ramp-up are the report's; series, handler timings and error counts are illustrative",
      },
      bench: {
        kind: 'aws',
        instances: {
          'App instances': '2 x c7i.2xlarge',
          'Agent instances': '11 x c7i.xlarge',
          'Proxy instance': '1 x c7i.xlarge',
          'DB instances': '2 x db.r7g.2xlarge',
        },
        versions: { 'Load-test version': 'v1.29.0', Database: 'Aurora PostgreSQL' },
        dataset: 'Dump from v6.1.0, 12M posts',
      },
      startedAt: '2025-09-22T09:00:00Z',
    },
    tests: [
      {
        baseline: { type: 'bounded', name: 'postgresql-bounded', users: 7500, rampUpSec: 900, durationSec: 90 * 60, errors: 5912 },
        candidate: {
          type: 'bounded',
          name: 'postgresql-bounded',
          users: 7500,
          rampUpSec: 900,
          durationSec: 90 * 60,
          errors: 5871,
          rampUpP99Spike: 3,
          handlerFactors: { login: 1.35, createUser: 1.6 },
        },
      },
      {
        baseline: {
          type: 'unbounded',
          name: 'postgresql-unbounded',
          maxUsers: 20000,
          supportedUsers: 17272,
          stabilityWindowSec: 1800,
          durationSec: 3 * HOUR,
          errors: 268120,
        },
        candidate: {
          type: 'unbounded',
          name: 'postgresql-unbounded',
          maxUsers: 20000,
          supportedUsers: 17040,
          stabilityWindowSec: 1800,
          durationSec: 3 * HOUR,
          errors: 259904,
        },
      },
    ],
  },
  {
    dir: 'v8.0.1-vs-v8.1.0-rc1',
    baseline: 'v8.0.1',
    candidate: 'v8.1.0-rc1',
    common: {
      system: 'mattermost',
      provenance: {
        kind: 'reconstructed',
        note: "from the seed report perf-comparison-v8.0.1-vs-v8.1.0-rc1.md: supported users, error counts and the heap/stack changes are the report's; series shapes, handler timings and request counts are illustrative",
      },
      bench: {
        kind: 'aws',
        instances: {
          'App instances': '2 x c5.2xlarge',
          'Agent instances': '11 x c5.xlarge',
          'Proxy instance': '1 x c5.xlarge',
          'DB instances': '2 x db.r6g.2xlarge',
        },
        versions: { 'Load-test version': 'branch perf.comp.v8.1, commit b006b72', Database: 'Aurora MySQL and Aurora PostgreSQL' },
        dataset: 'DB dump from v6.1.0 with 12M posts',
      },
      startedAt: '2023-08-10T09:00:00Z',
    },
    tests: [
      {
        baseline: { type: 'bounded', name: 'mysql-bounded', users: 5000, rampUpSec: 900, durationSec: 90 * 60, errors: 5073 },
        candidate: {
          type: 'bounded',
          name: 'mysql-bounded',
          users: 5000,
          rampUpSec: 900,
          durationSec: 90 * 60,
          errors: 5177,
          heapFactor: 1.000361,
          stackFactor: 1.09,
        },
      },
      {
        baseline: { type: 'bounded', name: 'postgresql-bounded', users: 7500, rampUpSec: 900, durationSec: 90 * 60, errors: 5850 },
        candidate: {
          type: 'bounded',
          name: 'postgresql-bounded',
          users: 7500,
          rampUpSec: 900,
          durationSec: 90 * 60,
          errors: 5838,
          heapFactor: 1.00213,
          stackFactor: 0.935,
        },
      },
      {
        baseline: {
          type: 'unbounded',
          name: 'mysql-unbounded',
          maxUsers: 20000,
          supportedUsers: 18158,
          stabilityWindowSec: 1800,
          durationSec: 3 * HOUR,
          errors: 219488,
        },
        candidate: {
          type: 'unbounded',
          name: 'mysql-unbounded',
          maxUsers: 20000,
          supportedUsers: 18266,
          stabilityWindowSec: 1800,
          durationSec: 3 * HOUR,
          errors: 232991,
          stackFactor: 1.09,
        },
      },
      {
        baseline: {
          type: 'unbounded',
          name: 'postgresql-unbounded',
          maxUsers: 20000,
          supportedUsers: 19906,
          stabilityWindowSec: 1800,
          durationSec: 3 * HOUR,
          errors: 279670,
        },
        candidate: {
          type: 'unbounded',
          name: 'postgresql-unbounded',
          maxUsers: 20000,
          supportedUsers: 19904,
          stabilityWindowSec: 1800,
          durationSec: 3 * HOUR,
          errors: 262349,
          stackFactor: 0.935,
        },
      },
    ],
  },
];

/** The run results of one example, validated, as written to disk. */
export function exampleRuns(example: ExampleComparison): { baseline: RunResultInput[]; candidate: RunResultInput[] } {
  const make = (spec: Spec, version: string) =>
    runResultSchema.parse(syntheticRun(example.common, { ...spec, version, repeat: 0, seed: example.dir } as BoundedSpec | UnboundedSpec)) as RunResultInput;
  return {
    baseline: example.tests.map((t) => make(t.baseline, example.baseline)),
    candidate: example.tests.map((t) => make(t.candidate, example.candidate)),
  };
}

/**
 * The comparison written to disk: the sample report the README, docs/how-it-decides.md
 * and the tests read. The other seed comparison is judged in memory only
 * (test/compare/seed-decisions.test.ts), so its files would be read by nothing.
 */
const WRITTEN_EXAMPLES = ['v10.12.0-vs-v11.0.1-rc2'];

async function main(): Promise<void> {
  const root = join(import.meta.dirname, '..', 'reports', 'examples');
  for (const example of EXAMPLES.filter((e) => WRITTEN_EXAMPLES.includes(e.dir))) {
    const dir = join(root, example.dir);
    await rm(dir, { recursive: true, force: true });
    await mkdir(join(dir, 'runs'), { recursive: true });
    const runs = exampleRuns(example);
    for (const [side, list] of Object.entries(runs)) {
      for (const run of list) {
        await writeFile(
          join(dir, 'runs', `${side}-${run.test.name}.json`),
          `${JSON.stringify({ $schema: '../../../../schema/run-result.schema.json', ...run }, null, 2)}\n`,
        );
      }
    }
    const verdict = await compareAndReport({
      baseline: runs.baseline.map((r) => runResultSchema.parse(r)),
      candidate: runs.candidate.map((r) => runResultSchema.parse(r)),
      outDir: join(dir, 'report'),
      notes: [`Run results reconstructed from the seed report for ${example.baseline} vs ${example.candidate}; see Setup → Provenance.`],
    });
    console.log(`${example.dir}: ${verdict.verdict} (${verdict.summary})`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
