// loadgate's watchdog: a tiny process that outlives a killed `loadgate run`. The parent
// writes "group <pgid>", "forget <pgid>", "dir <path>" and "undir <path>" lines on our
// stdin; when stdin closes (the parent exited, even by SIGKILL) we SIGTERM every group
// still registered, SIGKILL them after a grace period, and remove the registered dirs.
// Plain JavaScript so it starts without a TypeScript loader.
import { rmSync } from 'node:fs';

const groups = new Set();
const dirs = new Set();
let buffer = '';

// Ctrl-C in a terminal signals the whole foreground group; we stay until the parent is gone.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});
process.on('SIGHUP', () => {});

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  let nl;
  while ((nl = buffer.indexOf('\n')) >= 0) {
    const line = buffer.slice(0, nl);
    buffer = buffer.slice(nl + 1);
    const space = line.indexOf(' ');
    const verb = line.slice(0, space);
    const arg = line.slice(space + 1);
    if (verb === 'group' && /^\d+$/.test(arg)) groups.add(Number(arg));
    else if (verb === 'forget') groups.delete(Number(arg));
    else if (verb === 'dir' && arg.startsWith('/')) dirs.add(arg);
    else if (verb === 'undir') dirs.delete(arg);
  }
});

function signalAll(signal) {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, signal);
    } catch {
      groups.delete(pgid); // already gone
    }
  }
}

process.stdin.on('end', () => {
  signalAll('SIGTERM');
  const deadline = Date.now() + 10000;
  const timer = setInterval(() => {
    signalAll(0);
    if (groups.size === 0 || Date.now() > deadline) {
      clearInterval(timer);
      signalAll('SIGKILL');
      // Give the kernel a moment to reap, then remove the data dirs.
      setTimeout(() => {
        for (const dir of dirs) {
          try {
            rmSync(dir, { recursive: true, force: true });
          } catch {
            /* best effort */
          }
        }
        process.exit(0);
      }, 300);
    }
  }, 200);
});
