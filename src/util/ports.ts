import { connect, createServer } from 'node:net';

/**
 * Loopback ports for the bench's components. Every component listens on 127.0.0.1
 * only; ports are picked by the kernel (listen on port 0) so parallel runs and other
 * engineers' processes never collide, and a port that is taken is reported by name.
 */
export const LOOPBACK = '127.0.0.1';

/**
 * Asks the kernel for a free loopback port. It is free now; the caller binds it soon after.
 * @internal For the tests' servers; the benches take theirs together (allocatePorts).
 */
export async function allocatePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => resolve());
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!address || typeof address === 'string') throw new Error('could not read the allocated port');
  return address.port;
}

/** Allocates `n` distinct free ports (held open together so the kernel cannot hand one out twice). */
export async function allocatePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, async () => {
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, LOOPBACK, () => resolve());
      });
      return server;
    }),
  );
  const ports = servers.map((s) => {
    const address = s.address();
    if (!address || typeof address === 'string') throw new Error('could not read the allocated port');
    return address.port;
  });
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  return ports;
}

/**
 * True when something accepts TCP connections on 127.0.0.1:port.
 * @internal For the tests, which check that a bench's ports are open and then closed.
 */
export function isListening(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: LOOPBACK, port });
    const done = (result: boolean) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export class PortTakenError extends Error {
  constructor(
    readonly component: string,
    readonly port: number,
  ) {
    super(`${component}: port ${LOOPBACK}:${port} is already taken by another process; stop it or let loadgate pick another port`);
    this.name = 'PortTakenError';
  }
}

/** Throws PortTakenError when the port is in use, before a component is started on it. */
export async function assertPortFree(component: string, port: number): Promise<void> {
  const server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, LOOPBACK, () => resolve());
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new PortTakenError(component, port);
    throw error;
  } finally {
    await new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  }
}
