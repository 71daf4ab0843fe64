import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runResultSchema } from '../../src/results/schema.ts';
import { findK6, NO_K6 } from '../engine/k6/k6-binary.ts';
import { buildProfilingBinaries } from '../support/profiling-standins.ts';
import { MACHINERY_TOLERANCES, readJson, runLoopbackGate, startLoopbackBench } from './aws/loopback-bench.ts';

/**
 * A Mattermost known cause, end to end on the loopback AWS bench (aws/loopback-bench.ts)
 * in a duet with `profile: on`: the candidate's server process is a build with extra CPU
 * in one function (test/support/mattermost-core, -tags knowncause: sanitizeMessage under
 * createPost), the baseline's the same code without it, both at once in their slots. The
 * bench's metrics node profiles both slots as on AWS (the Alloy stand-in running the
 * bench's config.alloy into the Pyroscope stand-in), and the gate reads each run's
 * profile over its measured window through Mattermost's profile capability, which the
 * bench attaches to each slot with bench.json's pyroscope_url and its timing's Alloy
 * interval. The report must name that function and its file.
 */

const k6 = findK6();
const prometheus = existsSync('/usr/bin/prometheus') && existsSync('/usr/bin/prometheus-node-exporter');
const skip =
  (!k6 && NO_K6) ||
  (!prometheus && 'prometheus and prometheus-node-exporter (Debian packages) are not installed') ||
  (process.env.LOADGATE_SKIP_INTEGRATION === '1' && 'LOADGATE_SKIP_INTEGRATION=1');

const CONFIG = `version: 1
name: aws-known-cause
mode: duet
dataset: Stand-in dataset, 40 users
target:
  system: mattermost
  versionPattern: '^v[0-9]+\\.[0-9]+\\.[0-9]+(-rc[0-9]+)?$'
bench:
  kind: aws
  aws: { preset: L.110, agentCount: 2, usersPerAgent: 20, maxEngineCpuPercent: 100 }
engine:
  kind: k6
  idle: { minimumMs: 100, averageMs: 300, rateMultiplier: 1 }
  actions: { SwitchChannel: 4, ScrollChannel: 2, CreatePost: 4, ViewThread: 1, UnreadCheck: 1 }
tests:
  - name: posting
    type: bounded
    users: 6
    rampUp: 4s
    duration: 34s
profile: on
maxRepeats: 1
${MACHINERY_TOLERANCES}`;

test(
  "a Mattermost build with extra CPU in one function: the report names that function and its file, from the bench's Pyroscope",
  { skip, timeout: 420_000 },
  async () => {
    const binDir = await mkdtemp(join(tmpdir(), 'loadgate-known-cause-'));
    const binaries = await buildProfilingBinaries(binDir);
    const bench = await startLoopbackBench(k6 as string, 40, { duet: true, profiling: { binaries, scrapeIntervalSec: 2, knownCauseVersions: ['11.0.1'] } });
    try {
      const { code, log, outDir } = await runLoopbackGate(bench, {
        config: CONFIG,
        baseline: 'v10.12.0',
        candidate: 'v11.0.1-rc2',
        timing: { profileScrapeIntervalSec: 2 },
      });
      assert.ok([0, 1, 2].includes(code), `exit code ${code}\n${log}`);

      const files = (await readdir(join(outDir, 'results'))).filter((f) => f.endsWith('.json'));
      const results = await Promise.all(files.map(async (f) => runResultSchema.parse(await readJson(join(outDir, 'results', f)))));
      assert.equal(results.length, 2);
      assert.deepEqual(results.map((r) => r.duet?.slot).sort(), ['a', 'b'], 'one run per slot, at once');
      // Each slot's profile is its own build's: the known cause dominates the candidate's only.
      const share = (r: (typeof results)[number]): number => {
        const p = r.profile!;
        const hot = p.stacks.filter((st) => p.frames[st.frames.at(-1) as number]?.name === 'main.sanitizeMessage').reduce((n, st) => n + st.samples, 0);
        return hot / p.stacks.reduce((n, st) => n + st.samples, 0);
      };
      for (const r of results) {
        assert.equal(r.status, 'completed', `${r.target.version}: ${r.problems.join('; ')}\n${log}`);
        const p = r.profile;
        assert.ok(p, `${r.target.version} carries its profile\n${log}`);
        assert.match(p.tool, /^Go pprof via Pyroscope \(\d+ profiles of 1 s, 1 node\(s\)\)$/);
        assert.equal(p.windowSec, r.stableWindow.endSec - r.stableWindow.startSec, "over the run's measured window");
        assert.ok(p.coveredSec > 0.3 * p.windowSec && p.coveredSec <= 0.6 * p.windowSec, `1 s of every 2 s covered: ${p.coveredSec} of ${p.windowSec}`);
      }
      const candidate = results.find((r) => r.target.version === 'v11.0.1-rc2')!;
      const baseline = results.find((r) => r.target.version === 'v10.12.0')!;
      assert.ok(
        share(candidate) > 0.5 && share(baseline) < 0.4,
        `sanitizeMessage's share: candidate (slot ${candidate.duet?.slot}) ${share(candidate)}, baseline (slot ${baseline.duet?.slot}) ${share(baseline)}`,
      );

      const report = await readFile(join(outDir, 'README.md'), 'utf8');
      const section = report.slice(report.indexOf('### Where the CPU went - posting'));
      assert.ok(report.includes('### Where the CPU went - posting'), `the report has the profile section\n${report}`);
      assert.match(section, /the most grown function is `main\.sanitizeMessage` in `loadgate\.test\/mattermost-core\/post\.go:\d+`/, section.slice(0, 1500));
      assert.match(section, /\| `main\.sanitizeMessage` \| `loadgate\.test\/mattermost-core\/post\.go:\d+` \|[^\n]*\| yes \|/);
    } finally {
      await bench.close();
      await rm(binDir, { recursive: true, force: true });
    }
  },
);
