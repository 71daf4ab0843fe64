import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { findK6, NO_K6 } from '../engine/k6/k6-binary.ts';
import { MACHINERY_TOLERANCES, runLoopbackGate, startLoopbackBench } from './aws/loopback-bench.ts';

/**
 * The first run job on the loopback AWS bench with a users file whose first account the
 * dataset refuses: the gate stops as soon as Mattermost answers, before any test, naming
 * the users file and the fix; no agent load is started and no run completes.
 */

const k6 = findK6();
const prometheus = existsSync('/usr/bin/prometheus') && existsSync('/usr/bin/prometheus-node-exporter');

const CONFIG = `version: 1
name: aws-accounts
target:
  system: mattermost
  versionPattern: '^v[0-9]+\\.[0-9]+\\.[0-9]+(-rc[0-9]+)?$'
bench:
  kind: aws
  aws: { preset: L.110, agentCount: 2, usersPerAgent: 20, maxEngineCpuPercent: 100 }
engine:
  kind: k6
  idle: { minimumMs: 200, averageMs: 600, rateMultiplier: 1 }
tests:
  - type: bounded
    users: 6
    rampUp: 3s
    duration: 12s
maxRepeats: 1
${MACHINERY_TOLERANCES}`;

test(
  'a users file the dataset refuses stops the first run before any test, naming the file and the fix',
  { skip: (!k6 && NO_K6) || (!prometheus && 'prometheus and prometheus-node-exporter (Debian packages) are not installed'), timeout: 180_000 },
  async () => {
    const bench = await startLoopbackBench(k6 as string);
    try {
      // The dataset has user1 with pass-1; the file says otherwise.
      const users = (await readFile(bench.usersFile, 'utf8')).replace(/^user1 pass-1$/m, 'user1 a-guess');
      await writeFile(bench.usersFile, users);
      const { code, log, outDir } = await runLoopbackGate(bench, { config: CONFIG, baseline: 'v10.12.0', candidate: 'v11.0.1-rc2' });
      assert.notEqual(code, 0, log);
      assert.match(
        log,
        /users file \S*users\.txt: Mattermost on app0 refused user1, the users file's first account \(HTTP 401, api\.user\.login\.invalid_credentials_email_username\): either the dataset has no such account or the password differs, and engine\.kind k6 only logs in/,
      );
      // Stopped before the first test: k6 never started on an agent, no run result was kept.
      assert.equal(bench.runningK6(), 0);
      assert.doesNotMatch(log, /starting k6 on/);
      for (const file of (await readdir(join(outDir, 'results'))).filter((f) => f.endsWith('.json'))) {
        const result = JSON.parse(await readFile(join(outDir, 'results', file), 'utf8')) as { status: string; totals: { requests: number } };
        assert.equal(result.status, 'crashed', file);
        assert.equal(result.totals.requests, 0, file);
      }
      // The gate cannot judge, and says why.
      assert.match(log, /verdict: INCONCLUSIVE: Cannot judge: v10\.12\.0 bounded #0 crashed: users file/);
    } finally {
      await bench.close();
    }
  },
);
