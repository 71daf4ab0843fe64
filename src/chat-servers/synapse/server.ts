import { mkdir, writeFile, access } from 'node:fs/promises';
import { join } from 'node:path';
import type { ManagedProcess, ProcessSupervisor } from '../../util/process.ts';
import { runTool } from '../../util/run-tool.ts';
import { LOOPBACK, assertPortFree } from '../../util/ports.ts';
import { httpOk, waitUntilReady } from '../../util/readiness.ts';
import type { SynapseInstall } from './install.ts';
import { synapseConfigYaml, synapseLogConfig, type SynapseConfigInput } from './config.ts';

/**
 * Starts one Synapse version on the bench and waits until it answers `/health`. The
 * first start on a restored dump may migrate the schema forward (the dataset is built
 * with the older version), which is why readiness allows a few minutes.
 */
export interface StartSynapseOptions {
  supervisor: ProcessSupervisor;
  install: SynapseInstall;
  /** Per-run dir: homeserver.yaml, log config, pid file, media store. */
  dir: string;
  logFile: string;
  cpus?: string;
  config: Omit<SynapseConfigInput, 'dir' | 'logConfigPath'>;
  readyTimeoutMs?: number;
}

export interface RunningSynapse {
  readonly process: ManagedProcess;
  readonly clientUrl: string;
  readonly metricsUrl: string;
  readonly configFile: string;
  stop(): Promise<void>;
}

/** Synapse reads a few environment variables that would change what is measured. */
function synapseEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith('SYNAPSE_')) delete env[key];
  return { ...env, PYTHONUNBUFFERED: '1' };
}

/** Generates an ed25519 signing key with Synapse's own tool (offline). */
export async function generateSigningKey(install: SynapseInstall, file: string): Promise<void> {
  const tool = join(install.venvDir, 'bin', 'generate_signing_key');
  await runTool(tool, ['-o', file], { timeoutMs: 60_000 });
}

export async function startSynapse(o: StartSynapseOptions): Promise<RunningSynapse> {
  await mkdir(o.dir, { recursive: true });
  const logConfigPath = join(o.dir, 'log.yaml');
  await writeFile(logConfigPath, synapseLogConfig());
  const configFile = join(o.dir, 'homeserver.yaml');
  await writeFile(configFile, synapseConfigYaml({ ...o.config, dir: o.dir, logConfigPath }), { mode: 0o600 });
  await access(o.config.signingKeyPath);

  const name = `synapse ${o.install.version}`;
  await assertPortFree(`${name} (client listener)`, o.config.clientPort);
  await assertPortFree(`${name} (metrics listener)`, o.config.metricsPort);
  const proc = await o.supervisor.spawn({
    name,
    command: o.install.python,
    args: ['-m', 'synapse.app.homeserver', '--config-path', configFile],
    logFile: o.logFile,
    cwd: o.dir,
    env: synapseEnv(),
    cpus: o.cpus,
    stopSignal: 'SIGTERM',
    stopTimeoutMs: 20_000,
  });
  const clientUrl = `http://${LOOPBACK}:${o.config.clientPort}`;
  const metricsUrl = `http://${LOOPBACK}:${o.config.metricsPort}/_synapse/metrics`;
  await waitUntilReady(() => httpOk(`${clientUrl}/health`, (s, body) => s === 200 && body.trim() === 'OK'), {
    component: name,
    process: proc,
    timeoutMs: o.readyTimeoutMs ?? 300_000,
    intervalMs: 500,
    what: `answering ${clientUrl}/health`,
  });
  await waitUntilReady(() => httpOk(metricsUrl), { component: `${name} metrics listener`, process: proc, timeoutMs: 30_000, what: `serving ${metricsUrl}` });
  return {
    process: proc,
    clientUrl,
    metricsUrl,
    configFile,
    async stop() {
      await proc.stop();
    },
  };
}
