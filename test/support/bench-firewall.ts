import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * A security group in front of a loopback bench service, for workflow jobs under act.
 *
 * On GitHub every job runs on its own runner ("When the job begins, GitHub automatically
 * provisions a new VM for that job", docs "Using a GitHub-hosted runner") with its own
 * public address, and an EC2 security group admits a connection only when one of its
 * ingress rules covers the protocol, the port and the source address (Amazon VPC user
 * guide, "Security group rules"). Under act every job runs on this machine, so the
 * runner a connection comes from is told by the process that opened it: its RUNNER_TEMP
 * (act gives each job its own directory) names the runner, and `addressOf` gives that
 * runner's public address, the one `curl https://checkip.amazonaws.com` answers there.
 * A connection whose runner's address no rule admits is closed before a byte passes (a
 * real group drops it silently; either way the client gets nothing from the service).
 */
export interface Firewall {
  /** The port the service is reached on (and the port the group's rule must cover). */
  port: number;
  url: string;
  /** Connections refused, with the runner's address. */
  refused: { address: string | undefined; runner: string | undefined }[];
  /** Per connection admitted: the `keep` environment variables of the process that opened it. */
  seen: { runner: string; env: Record<string, string> }[];
  close(): Promise<void>;
}

/** An IPv4 address as /proc/net/tcp prints it: the 32-bit value in host (little-endian) byte order, in hex. */
function procAddress(ipv4: string): string {
  return ipv4
    .split('.')
    .reverse()
    .map((octet) => Number(octet).toString(16).padStart(2, '0'))
    .join('')
    .toUpperCase();
}

/**
 * The socket inode of the loopback TCP connection from `clientPort` to `server`
 * (/proc/net/tcp, proc(5)). The server's address counts too: two firewalls may share a
 * port on different loopback addresses, and a client port may repeat across them.
 */
function socketInode(clientPort: number, server: { host: string; port: number }): string | undefined {
  const serverAddress = procAddress(server.host);
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let lines: string[];
    try {
      lines = readFileSync(table, 'utf8').split('\n').slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const local = parseInt((f[1] as string).split(':')[1] as string, 16);
      const [remoteAddress, remotePort] = (f[2] as string).split(':') as [string, string];
      if (local === clientPort && parseInt(remotePort, 16) === server.port && remoteAddress.endsWith(serverAddress)) return f[9];
    }
  }
  return undefined;
}

/** The environment of the process holding socket `inode`, found through /proc/<pid>/fd. */
function environOfSocket(inode: string): Map<string, string> | undefined {
  const link = `socket:[${inode}]`;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      if (target !== link) continue;
      try {
        const env = readFileSync(`/proc/${pid}/environ`, 'utf8')
          .split('\0')
          .filter((e) => e.includes('='));
        return new Map(env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

export async function startFirewall(o: {
  /** Where the service really listens (127.0.0.1). */
  target: { host: string; port: number };
  /**
   * Where the group's side listens: 127.0.0.1 on a free port by default. Agents share one
   * API port on their own public addresses (outputs.tf's agent_api_port), so each agent's
   * firewall takes its own loopback address (127.0.0.2, ...) on the first one's port.
   */
  listen?: { host: string; port: number };
  /** The runner's public address, by its RUNNER_TEMP. */
  addressOf: (runner: string) => string;
  /** Whether the security group admits `address` on TCP `port`. */
  admits: (address: string, port: number) => boolean;
  /** Environment variables of the connecting process to record in `seen`. */
  keep?: string[];
}): Promise<Firewall> {
  const refused: Firewall['refused'] = [];
  const seen: Firewall['seen'] = [];
  const sockets = new Set<Socket>();
  const host = o.listen?.host ?? '127.0.0.1';
  let port = 0;
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    // The connecting process is still there while its connect() is answered.
    const inode = socketInode(client.remotePort ?? -1, { host, port });
    const env = inode ? environOfSocket(inode) : undefined;
    const runner = env?.get('RUNNER_TEMP') || undefined;
    const address = runner ? o.addressOf(runner) : undefined;
    if (!runner || !address || !o.admits(address, port)) {
      refused.push({ address, runner });
      client.destroy();
      return;
    }
    seen.push({ runner, env: Object.fromEntries((o.keep ?? []).filter((k) => env?.has(k)).map((k) => [k, env?.get(k) as string])) });
    const upstream = createConnection(o.target.port, o.target.host);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(o.listen?.port ?? 0, host, done);
  });
  port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://${host}:${port}`,
    refused,
    seen,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
