import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * moto's server mode (PyPI `moto[server]`, https://docs.getmoto.org/en/latest/docs/server_mode.html):
 * every AWS service on one port, here on 127.0.0.1 only. Started once per test
 * file and stopped by its process ID.
 */

export interface Moto {
  url: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startMoto(binary: string, log: (line: string) => void): Promise<Moto> {
  const port = await freePort();
  // AWS-managed IAM policies (AmazonSSMManagedInstanceCore) exist only when moto loads them.
  const child: ChildProcess = spawn(binary, ['-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, MOTO_IAM_LOAD_MANAGED_POLICIES: 'true' },
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.pid === undefined) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    process.kill(child.pid, 'SIGTERM');
    await exited;
  };
  // Bounded wait for the server: 60 polls, 0.5 s apart.
  for (let attempt = 0; attempt < 60; attempt++) {
    if (child.exitCode !== null) throw new Error(`moto_server exited with ${child.exitCode}: ${output.slice(-2000)}`);
    try {
      const response = await fetch(`${url}/moto-api/data.json`);
      if (response.ok) {
        log(`moto_server listening on ${url} (pid ${child.pid})`);
        return { url, stop };
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await stop();
  throw new Error(`moto_server did not answer on ${url} within 30 s: ${output.slice(-2000)}`);
}
