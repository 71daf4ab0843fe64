import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { startFirewall } from './bench-firewall.ts';

/** A TCP service that answers every connection with one line. */
async function startService(): Promise<{ port: number; close(): Promise<void> }> {
  const server = createServer((socket) => socket.end('hello from the bench\n'));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((done) => server.close(() => done())) };
}

/** What a process of runner `runner` (its RUNNER_TEMP) reads from host:port: another process, as a job's step is. */
function readAs(runner: string, host: string, port: number): Promise<string> {
  const script = `const s = require('node:net').createConnection(${port}, '${host}'); let got = ''; s.on('data', (d) => (got += d)); s.on('close', () => process.stdout.write(got)); s.on('error', () => {});`;
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['-e', script], { env: { PATH: process.env.PATH, RUNNER_TEMP: runner }, timeout: 10_000 }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    ),
  );
}

test('two firewalls on one port, on their own loopback addresses, each admit only the runners a rule covers', async (t) => {
  const service = await startService();
  t.after(() => service.close());
  const addresses: Record<string, string> = { '/runner/admitted': '198.51.100.7', '/runner/other': '198.51.100.8' };
  const options = {
    target: { host: '127.0.0.1', port: service.port },
    addressOf: (runner: string) => addresses[runner] ?? '',
    admits: (address: string, port: number) => address === '198.51.100.7' && port === first.port,
  };
  const first = await startFirewall(options);
  t.after(() => first.close());
  const second = await startFirewall({ ...options, listen: { host: '127.0.0.2', port: first.port } });
  t.after(() => second.close());
  assert.equal(second.port, first.port);
  assert.equal(second.url, `http://127.0.0.2:${first.port}`);

  assert.equal(await readAs('/runner/admitted', '127.0.0.1', first.port), 'hello from the bench\n');
  assert.equal(await readAs('/runner/admitted', '127.0.0.2', first.port), 'hello from the bench\n');
  assert.equal(await readAs('/runner/other', '127.0.0.2', first.port), '', 'a runner no rule admits gets nothing');
  assert.deepEqual(
    second.seen.map((c) => c.runner),
    ['/runner/admitted'],
  );
  assert.deepEqual(second.refused, [{ address: '198.51.100.8', runner: '/runner/other' }]);
  assert.deepEqual(
    first.seen.map((c) => c.runner),
    ['/runner/admitted'],
  );
  assert.deepEqual(first.refused, []);
});
