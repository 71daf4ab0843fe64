import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, type WriteStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';

/**
 * Starts and stops every process loadgate runs on the local bench. Each process gets
 * its own process group (so a shell wrapper's children die with it), its output goes to
 * a log file kept in the run dir, and `stopAll` is called on success, failure and on
 * SIGINT/SIGTERM, so nothing is left running.
 */
export interface SpawnOptions {
  /** Component name, used in messages: "postgres", "synapse 1.163.2", "k6". */
  name: string;
  command: string;
  args: readonly string[];
  logFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** CPU list for `taskset -c` (e.g. "0"), to keep the target and the load engine apart. */
  cpus?: string;
  /** Signal for a graceful stop; SIGKILL follows after `stopTimeoutMs`. */
  stopSignal?: NodeJS.Signals;
  stopTimeoutMs?: number;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** How long a process's pipes may stay open after it exits before its log is closed. */
const PIPE_GRACE_MS = 2000;

export class ManagedProcess {
  readonly exited: Promise<ExitInfo>;
  private exitInfo: ExitInfo | undefined;
  private stopping = false;

  constructor(
    readonly name: string,
    readonly logFile: string,
    private readonly child: ChildProcess,
    private readonly log: WriteStream,
    private readonly stopSignal: NodeJS.Signals,
    private readonly stopTimeoutMs: number,
  ) {
    // 'close' comes once the child's pipes are closed; they can outlive 'exit' (buffered
    // output, or children of the process that still hold them).
    const pipesClosed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
      child.once('error', (error) => {
        log.write(`\n[loadgate] could not start: ${error.message}\n`);
        this.exitInfo = { code: -1, signal: null };
        resolve(this.exitInfo);
      });
    }).then(async (info) => {
      // The last lines of a crash are the useful ones: wait briefly for the pipes, then detach
      // them so that output arriving later is dropped instead of written to an ended log.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([pipesClosed, new Promise<void>((r) => (timer = setTimeout(r, PIPE_GRACE_MS)))]);
      clearTimeout(timer);
      for (const pipe of [child.stdout, child.stderr]) pipe?.unpipe(log).resume();
      await new Promise<void>((r) => log.end(r));
      return info as ExitInfo;
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** True while the process runs; false once it exited (for any reason). */
  get running(): boolean {
    return this.exitInfo === undefined;
  }

  /** True when it exited without being asked to: a crash from the bench's point of view. */
  get crashed(): boolean {
    return this.exitInfo !== undefined && !this.stopping;
  }

  describeExit(): string {
    const info = this.exitInfo;
    if (!info) return `${this.name} is running`;
    const how = info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`;
    return `${this.name} ${how}; see its log: ${this.logFile}`;
  }

  async stop(): Promise<ExitInfo> {
    if (this.exitInfo) return this.exitInfo;
    this.stopping = true;
    this.signalGroup(this.stopSignal);
    const timer = setTimeout(() => this.signalGroup('SIGKILL'), this.stopTimeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal); // the whole group: wrappers and their children
    } catch {
      try {
        this.child.kill(signal);
      } catch {
        /* already gone */
      }
    }
  }
}

const WATCHDOG_SCRIPT = fileURLToPath(new URL('./watchdog-child.mjs', import.meta.url));

/**
 * A helper process that outlives a killed loadgate (SIGKILL cannot be handled): it gets
 * the process groups and data dirs over a pipe and, when the pipe closes, stops the
 * groups and removes the dirs. See watchdog-child.mjs.
 */
class Watchdog {
  private readonly child: ChildProcess;
  constructor() {
    this.child = spawn(process.execPath, [WATCHDOG_SCRIPT], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true, // not in our process group: a terminal's Ctrl-C must not stop it first
    });
    this.child.on('error', () => {});
    this.child.stdin?.on('error', () => {});
    this.child.unref();
    (this.child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  }
  send(line: string): void {
    if (this.child.stdin?.writable) this.child.stdin.write(`${line}\n`);
  }
  close(): void {
    this.child.stdin?.end();
  }
}

export interface SupervisorOptions {
  /** Start a watchdog so even a SIGKILLed loadgate leaves no process or data dir behind. */
  watchdog?: boolean;
}

export class ProcessSupervisor {
  private readonly processes: ManagedProcess[] = [];
  private readonly cleanups: Array<{ name: string; run: () => Promise<void> | void }> = [];
  private signalHandler: ((signal: NodeJS.Signals) => void) | undefined;
  private readonly watchdog: Watchdog | undefined;

  constructor(options: SupervisorOptions = {}) {
    // A bundle that did not ship the watchdog script runs without it (signals are still handled).
    this.watchdog = options.watchdog && existsSync(WATCHDOG_SCRIPT) ? new Watchdog() : undefined;
  }

  /** Has the watchdog remove `path` if loadgate dies without cleaning up (no-op without watchdog). */
  watchDir(path: string): void {
    this.watchdog?.send(`dir ${path}`);
  }

  /**
   * Installs SIGINT/SIGTERM handlers that stop everything, then exit with 130/143.
   * Call once per run; `dispose` removes them.
   */
  handleSignals(onSignal?: (signal: NodeJS.Signals) => void): void {
    if (this.signalHandler) return;
    this.signalHandler = (signal) => {
      onSignal?.(signal);
      void this.stopAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    };
    process.once('SIGINT', this.signalHandler);
    process.once('SIGTERM', this.signalHandler);
  }

  async spawn(options: SpawnOptions): Promise<ManagedProcess> {
    const log = createWriteStream(options.logFile, { flags: 'a' });
    await once(log, 'open');
    const [command, args] = options.cpus ? ['taskset', ['-c', options.cpus, options.command, ...options.args]] : [options.command, [...options.args]];
    log.write(`[loadgate] $ ${[command, ...args].join(' ')}\n`);
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // own process group, so stop() reaches grandchildren
    });
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    const managed = new ManagedProcess(options.name, options.logFile, child, log, options.stopSignal ?? 'SIGTERM', options.stopTimeoutMs ?? 10_000);
    this.processes.push(managed);
    const pid = child.pid;
    if (pid !== undefined && this.watchdog) {
      this.watchdog.send(`group ${pid}`);
      void managed.exited.then(() => this.watchdog?.send(`forget ${pid}`));
    }
    return managed;
  }

  /** Registers a clean-up step (remove a temp dir, close a server), run in reverse order. */
  onCleanup(name: string, run: () => Promise<void> | void): void {
    this.cleanups.push({ name, run });
  }

  /** The first managed process that died without being asked to, if any. */
  firstCrash(): ManagedProcess | undefined {
    return this.processes.find((p) => p.crashed);
  }

  /** Stops processes newest first (the target before its database), then runs clean-ups. */
  async stopAll(): Promise<string[]> {
    const problems: string[] = [];
    for (const proc of [...this.processes].reverse()) {
      try {
        await proc.stop();
      } catch (error) {
        problems.push(`could not stop ${proc.name}: ${(error as Error).message}`);
      }
    }
    this.processes.length = 0;
    for (const step of this.cleanups.reverse()) {
      try {
        await step.run();
      } catch (error) {
        problems.push(`clean-up "${step.name}" failed: ${(error as Error).message}`);
      }
    }
    this.cleanups.length = 0;
    return problems;
  }

  dispose(): void {
    this.watchdog?.close();
    if (this.signalHandler) {
      process.removeListener('SIGINT', this.signalHandler);
      process.removeListener('SIGTERM', this.signalHandler);
      this.signalHandler = undefined;
    }
  }
}
