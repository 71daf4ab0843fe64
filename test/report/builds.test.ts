import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildRows } from '../../src/report/builds.ts';
import { sideBuild, sideSchema } from '../../src/results/verdict-schema.ts';

const SHA = 'ab'.repeat(32);

test('the verdict records the build each side ran, and the report names it with its hash or URL', () => {
  const wheel = { kind: 'wheel' as const, path: '/w/matrix_synapse-1.163.2-cp310-abi3-manylinux_2_28_x86_64.whl', sha256: SHA, version: '1.163.2' };
  const runs = [{ target: { system: 'synapse', version: `1.163.2+whl.${SHA.slice(0, 12)}`, build: wheel } }];
  const candidate = sideSchema.parse({ version: runs[0]?.target.version, runs: 1, ...sideBuild(runs) });
  assert.deepEqual(candidate.build, wheel);
  const baseline = sideSchema.parse({ version: '1.162.0', runs: 1, ...sideBuild([{ target: { system: 'synapse', version: '1.162.0' } }]) });
  assert.equal(baseline.build, undefined, 'a release has no build');
  assert.deepEqual(buildRows({ baseline, candidate }), [['Candidate build', `wheel \`${wheel.path}\`, SHA-256 \`${SHA}\``]]);
  const url = { kind: 'url' as const, url: 'https://builds.example.com/a/mattermost-enterprise-linux-amd64.tar.gz', sha256: SHA };
  assert.deepEqual(buildRows({ baseline: { ...baseline, build: url }, candidate: { ...baseline } }), [['Baseline build', `build ${url.url}`]]);
  assert.throws(() => sideSchema.parse({ version: 'x', runs: 1, build: { kind: 'wheel', path: '/w', sha256: 'short', version: '1' } }), /SHA-256/);
});

test('compare records in verdict.json the build each side ran, from its runs', async () => {
  const { compareRuns } = await import('../../src/compare/compare-runs.ts');
  const { tolerancesSchema } = await import('../../src/config/schema.ts');
  const { unbounded } = await import('../support/runs.ts');
  const wheel = { kind: 'wheel' as const, path: '/w/matrix_synapse-1.163.2-cp310-abi3-manylinux_2_28_x86_64.whl', sha256: SHA, version: '1.163.2' };
  const built = (r: ReturnType<typeof unbounded>) => ({ ...r, target: { ...r.target, version: `1.163.2+whl.${SHA.slice(0, 12)}`, build: wheel } });
  const baseline = [unbounded('1.162.0', 60, 0), unbounded('1.162.0', 60, 1)];
  const candidate = [built(unbounded('1.163.2', 60, 0)), built(unbounded('1.163.2', 60, 1))];
  const { verdict } = compareRuns(baseline, candidate, tolerancesSchema.parse({}), { mode: 'sequential', minPairs: 1, maxPairs: 3 });
  assert.deepEqual(verdict.candidate.build, wheel);
  assert.equal(verdict.baseline.build, undefined);
});

test("the report's setup table names a wheel-built candidate's wheel and its SHA-256", async () => {
  const { compareRuns } = await import('../../src/compare/compare-runs.ts');
  const { tolerancesSchema } = await import('../../src/config/schema.ts');
  const { renderMarkdown } = await import('../../src/report/markdown.ts');
  const { unbounded } = await import('../support/runs.ts');
  const wheel = { kind: 'wheel' as const, path: '/w/matrix_synapse-1.163.2-cp310-abi3-manylinux_2_28_x86_64.whl', sha256: SHA, version: '1.163.2' };
  const built = (r: ReturnType<typeof unbounded>) => ({ ...r, target: { ...r.target, version: `1.163.2+whl.${SHA.slice(0, 12)}`, build: wheel } });
  const tolerances = tolerancesSchema.parse({});
  const comparison = compareRuns([unbounded('1.162.0', 60, 0)], [built(unbounded('1.163.2', 60, 0))], tolerances, {
    mode: 'sequential',
    minPairs: 1,
    maxPairs: 3,
  });
  const setup = renderMarkdown(comparison, [], tolerances.listing).split('## Setup')[1]?.split('## Results')[0] ?? '';
  assert.match(setup, new RegExp(`\\| Candidate build \\| wheel \`${wheel.path.replace(/\./g, '\\.')}\`, SHA-256 \`${SHA}\` \\|`));
  assert.doesNotMatch(setup, /Baseline build/, 'a released baseline has no build row');
});
