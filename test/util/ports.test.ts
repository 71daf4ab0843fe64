import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { allocatePorts, assertPortFree, isListening, PortTakenError, LOOPBACK } from '../../src/util/ports.ts';

test('allocatePorts returns distinct free loopback ports', async () => {
  const ports = await allocatePorts(9);
  assert.equal(new Set(ports).size, 9);
  for (const p of ports) {
    assert.ok(p > 0 && p < 65536);
    await assertPortFree('probe', p);
  }
});

test('a taken port is reported by component name, and freed ports are not listening', async () => {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, LOOPBACK, () => r()));
  const port = (server.address() as { port: number }).port;
  try {
    assert.equal(await isListening(port), true);
    await assert.rejects(assertPortFree('nginx', port), (error: unknown) => {
      assert.ok(error instanceof PortTakenError);
      assert.match((error as Error).message, new RegExp(`^nginx: port 127\\.0\\.0\\.1:${port} is already taken`));
      return true;
    });
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
  assert.equal(await isListening(port), false);
  await assertPortFree('nginx', port);
});
