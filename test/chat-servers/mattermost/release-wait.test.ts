import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitForReleases } from '../../../src/chat-servers/mattermost/release-wait.ts';
import { main } from '../../../src/cli/main.ts';
import { captureIO } from '../../../src/cli/io.ts';
import { InputError } from '../../../src/util/errors.ts';

/**
 * Finding 10: a loopback server that answers 404 for the first N requests and 200 after,
 * as a tarball published late. Time is a fake clock: sleeping advances it, nothing waits.
 */
async function lateServer(missesBeforePublished: number): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    res.writeHead(req.method === 'HEAD' && requests > missesBeforePublished ? 200 : 404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

function fakeClock() {
  let t = 0;
  return { now: () => t, sleep: async (ms: number) => void (t += ms), elapsed: () => t };
}

test('waits, logging each miss, until the tarball answers 200', async () => {
  const server = await lateServer(3);
  try {
    const clock = fakeClock();
    const log: string[] = [];
    await waitForReleases({ urls: [`${server.url}/11.0.1-rc2/mattermost.tar.gz`], timeoutSec: 1800, intervalSec: 30, log: (l) => log.push(l), ...clock });
    assert.equal(server.requests(), 4);
    assert.equal(clock.elapsed(), 90_000, 'three 30 s waits');
    assert.equal(log.filter((l) => l.startsWith('release tarball not published yet (attempt')).length, 3);
    assert.match(log.at(-1)!, /^release tarball published: /);
  } finally {
    await server.close();
  }
});

test('gives up at the bound with "release tarball not published" (InputError, exit 3), never waiting past it', async () => {
  const server = await lateServer(1_000_000);
  try {
    const clock = fakeClock();
    const log: string[] = [];
    await assert.rejects(
      waitForReleases({ urls: [`${server.url}/x.tar.gz`], timeoutSec: 300, intervalSec: 60, log: (l) => log.push(l), ...clock }),
      (e: unknown) =>
        e instanceof InputError && /^release tarball not published after 5m: .*x\.tar\.gz \(last answer: HTTP 404\); nothing was provisioned/.test(e.message),
    );
    assert.equal(clock.elapsed(), 300_000);
    assert.equal(server.requests(), 6, 'one attempt at start and one per minute');
  } finally {
    await server.close();
  }
});

test('loadgate wait-release: resolves the URLs from the gate config and exits 3 when the tarball never comes', async () => {
  const server = await lateServer(1_000_000);
  const dir = mkdtempSync(join(tmpdir(), 'loadgate-wait-'));
  try {
    const config = join(dir, 'gate.yml');
    writeFileSync(
      config,
      `version: 1\nname: mm\ntarget:\n  system: mattermost\n  downloadUrl: ${server.url}/{version}/mattermost-{version}-linux-amd64.tar.gz\n  releaseWait: 1s\nbench:\n  kind: aws\ntests:\n  - type: bounded\n    users: 10\n    rampUp: 1m\n    duration: 5m\n`,
    );
    const io = captureIO();
    assert.equal(await main(['wait-release', '--config', config, '--version', 'v11.0.1-rc2', '--interval', '1s'], io), 3);
    assert.match(io.stderr.join('\n'), /release tarball not published after 1s: .*\/11\.0\.1-rc2\/mattermost-11\.0\.1-rc2-linux-amd64\.tar\.gz/);
    assert.ok(server.requests() >= 1 && server.requests() <= 3, `bounded: ${server.requests()} requests`);
    const bad = captureIO();
    assert.equal(await main(['wait-release', '--config', config, '--version', '11.0; rm -rf /'], bad), 3);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
