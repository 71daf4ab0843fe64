import { test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../../src/cli/main.ts';
import { captureIO } from '../../../src/cli/io.ts';
import { checkClientLicence, MattermostSeriesWatch, requireLicenceSecret } from '../../../src/chat-servers/mattermost/licence.ts';
import { InputError } from '../../../src/util/errors.ts';
import { spawn } from 'node:child_process';
import { AppNodes } from '../../../src/bench/aws/app-nodes.ts';
import { mattermostNodes } from '../../../src/chat-servers/mattermost/nodes.ts';
import type { RemoteShell } from '../../../src/bench/aws/remote-shell.ts';
import { MattermostStandIn } from './mattermost-stand-in.ts';

/** Finding 8: no licence, no metrics; a Mattermost gate on AWS refuses to start without one. */

test('plan refuses to write tfvars for a Mattermost gate without a licence secret, saying why', async () => {
  assert.throws(
    () => requireLicenceSecret('mattermost', undefined, '--license-secret-arn'),
    (e: unknown) => e instanceof InputError && /serves no \/metrics.*cannot run its app nodes as a cluster/.test(e.message),
  );
  assert.doesNotThrow(() => requireLicenceSecret('mattermost', 'arn:aws:secretsmanager:us-east-1:123456789012:secret:l-AbCdEf', '--license-secret-arn'));
  const io = captureIO();
  const code = await main(
    [
      'plan',
      '--config',
      'examples/aws-mattermost.yml',
      '--format',
      'tfvars',
      '--version',
      'v10.12.0',
      '--repository',
      'acme/chat',
      '--run-id',
      '1',
      '--run-attempt',
      '1',
      '--commit',
      'a'.repeat(40),
    ],
    io,
  );
  assert.equal(code, 3);
  assert.match(io.stderr.join('\n'), /--license-secret-arn: a Mattermost gate on AWS needs a licence: without a licence Mattermost serves no \/metrics/);
});

test('the stand-in behaves as Mattermost does: unlicensed, no metrics endpoint at all', async () => {
  const server = new MattermostStandIn();
  await server.start();
  try {
    server.licensed = false;
    const port = await server.startMetrics();
    assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 404);
    server.licensed = true;
    assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 200);
  } finally {
    await server.stopMetrics();
    await server.stop();
  }
});

/** SSM on an app node, on loopback: the script runs with bash, its Mattermost at `localUrl`. */
function nodeShell(localUrl: string): RemoteShell {
  return {
    async run(ids, script) {
      const outcome = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const child = spawn('bash', ['-c', script], { env: { PATH: process.env.PATH, LOADGATE_MATTERMOST_URL: localUrl } });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
      });
      return new Map(ids.map((id) => [id, { instanceId: id, status: outcome.code === 0 ? 'Success' : 'Failed', exitCode: outcome.code, ...outcome }]));
    },
  };
}

test('the AWS bench asks app node 0 for the licence over the remote shell, never a private address from the runner', async () => {
  const server = new MattermostStandIn();
  const url = await server.start();
  const nodes = (shell: RemoteShell) =>
    new AppNodes({ server: mattermostNodes, shell, nodes: [{ id: 'i-0aaaaaaaaaaaaaaa1', name: 'app0' }], firstStartTimeoutSec: 60, startTimeoutSec: 60 });
  try {
    await nodes(nodeShell(url)).requireLicence();
    assert.ok(server.received.some((r) => r.path === '/api/v4/license/client' && r.query.includes('format')));
    server.licensed = false;
    await assert.rejects(
      nodes(nodeShell(url)).requireLicence(),
      (e: unknown) => e instanceof InputError && /Mattermost at app0 \(i-0aaaaaaaaaaaaaaa1\) has no licence installed/.test(e.message),
    );
  } finally {
    await server.stop();
  }
  // Mattermost down on the node: the failure names the node and curl's reason.
  await assert.rejects(
    nodes(nodeShell('http://127.0.0.1:9')).requireLicence(),
    /ask Mattermost for its licence failed on 1 of 1 node\(s\):\n  app0 \(i-0aaaaaaaaaaaaaaa1\): Failed, exit code 7\n[^]*curl: \(7\)/,
  );
});

test('a run whose first minute shows no mattermost_* series is stopped with the reason, once', async () => {
  const counts: (number | undefined)[] = [undefined, 0, 0, 0];
  const watch = new MattermostSeriesWatch(async () => counts.shift());
  assert.equal(await watch.check(10), undefined, 'no data yet, inside the first minute');
  assert.equal(await watch.check(40), undefined);
  assert.match((await watch.check(61))!, /^no mattermost_\* series in Prometheus after 60 s of load: without a licence/);
  assert.equal(await watch.check(70), undefined, 'reported once');

  const healthy = new MattermostSeriesWatch(async () => 120);
  assert.equal(await healthy.check(5), undefined);
  assert.equal(await healthy.check(600), undefined, 'seen once: never stops the run');
  const failing = new MattermostSeriesWatch(async () => {
    throw new Error('prometheus down');
  });
  assert.match((await failing.check(60))!, /no mattermost_\* series/);
});

test('the stand-in loads licences as Mattermost does: the database licence wins over the file, an expired one is removed at start, too few seats are refused', async () => {
  const day = 24 * 3600 * 1000;
  const server = new MattermostStandIn();
  for (let i = 1; i <= 5; i++) server.addUser(`user${i}`, `pass-${i}`);
  const bench = { id: 'benchlicence00000000000000', expiresAtMs: Date.now() + 90 * day, users: 100 };
  const dumped = { id: 'dumplicence000000000000000', expiresAtMs: Date.parse('2022-03-01T00:00:00Z'), users: 100000 };
  const ask = async () => ((await (await fetch(`${server.baseUrl}/api/v4/license/client?format=old`)).json()) as { IsLicensed: string }).IsLicensed;
  try {
    // A dump's licence, long expired, sits in the database: it wins over the file, then the
    // start-up expiry check removes it, and the server runs unlicensed.
    server.licenceFile = bench;
    server.databaseLicence = dumped;
    await server.start();
    assert.equal(await ask(), 'false');
    assert.match(server.licenceLog.join('\n'), /past its grace period/);
    const active = () => server.databaseLicence;
    assert.equal(active(), undefined, 'RemoveLicense blanked the active licence');
    // Its next start finds no active licence and saves the file's.
    await server.stop();
    await server.start();
    assert.equal(await ask(), 'true');
    assert.equal(active()?.id, bench.id);
    // With the dump's rows cleared before the first start (as load-test-ng does), the file wins at once.
    await server.stop();
    server.databaseLicence = undefined;
    await server.start();
    assert.equal(await ask(), 'true');
    // Fewer seats than the database has users: SaveLicense refuses it.
    await server.stop();
    server.databaseLicence = undefined;
    server.licenceFile = { ...bench, users: 4 };
    await server.start();
    assert.equal(await ask(), 'false');
    assert.match(server.licenceLog.join('\n'), /unique_users.*Users: 4, Count: 5/);
    // The gate's refusal says what to check.
    const answer: unknown = await (await fetch(`${server.baseUrl}/api/v4/license/client?format=old`)).json();
    assert.throws(() => checkClientLicence(answer, server.baseUrl), /has no licence installed: .*whose user count is at least the dataset's users/);
  } finally {
    await server.stop();
  }
});
