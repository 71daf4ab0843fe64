import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { ProcessSupervisor, type ManagedProcess } from '../../../src/util/process.ts';
import { allocatePort, allocatePorts } from '../../../src/util/ports.ts';
import { httpOk, waitUntilReady } from '../../../src/util/readiness.ts';
import type { CommandResult, CommandRunner } from '../../../src/util/command-runner.ts';
import type { RemoteResult, RemoteShell } from '../../../src/bench/aws/remote-shell.ts';
import { AwsGateBench, readBenchFile, type AwsTiming } from '../../../src/bench/aws/aws-gate-bench.ts';
import { Progress } from '../../../src/bench/progress.ts';
import { runGateOn } from '../../../src/run/gate.ts';
import { parseRunOptions } from '../../../src/run/options.ts';
import { MattermostStandIn, type StandInLicence } from '../../chat-servers/mattermost/mattermost-stand-in.ts';
import { GrafanaStandIn } from '../../grafana/stand-in.ts';
import { renderAlloyConfig, startAlloy, startCore, startPyroscope, type CoreProcess, type ProfilingBinaries } from '../../support/profiling-standins.ts';

/**
 * The AWS bench on loopback, for the end-to-end test of `loadgate run` on bench.kind aws:
 *
 * - "app0": the Mattermost stand-in, with its metrics listener (Mattermost's :8067);
 * - "agent0", "agent1": real k6 processes running the real Mattermost scenario, started by
 *   the real `loadgate-agent start-k6` script, each with the real agent exporter
 *   (infra/aws/modules/bench/files/k6-exporter.py) beside it;
 * - "metrics0": a real Prometheus (Debian package) whose jobs and instance labels are those
 *   of metrics.sh.tftpl (mattermost app0:8067, node agent*:9100, loadtest agent*:6566),
 *   plus node_exporter standing in for every agent's; the Grafana stand-in; the Secrets
 *   Manager answer for the Grafana token.
 * - The RemoteShell stand-in runs every script the gate sends with bash, as SSM would,
 *   each node with its own LOADGATE_HOME; the on-instance helpers (loadgate-mattermost,
 *   loadgate-dataset, loadgate-agent, cloud-init, psql) are shims that post their arguments and
 *   stdin to this process, which acts on the local processes. So quoting, uploads and
 *   payload encoding are exercised for real; only what the helpers do inside an EC2
 *   instance (systemctl, downloads, psql) is stood in for.
 * Everything listens on 127.0.0.1; close() stops every process and removes the temp dir.
 */

const K6_EXPORTER = fileURLToPath(new URL('../../../infra/aws/modules/bench/files/k6-exporter.py', import.meta.url));
export const GRAFANA_TOKEN = 'glsa_loopback_token_0123456789abcdef';
const TOKEN_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:lg-loop-1/grafana-token-AbCdEf';
export const APP_ID = 'i-0aaaaaaaaaaaaaaa1';
export const AGENT_IDS = ['i-0bbbbbbbbbbbbbbb1', 'i-0bbbbbbbbbbbbbbb2'];
const METRICS_ID = 'i-0cccccccccccccccc';
const AGENT_PUBLIC_IPS = ['203.0.113.31', '203.0.113.32'];
const K6_API_PORT = 6565;

export interface HelperCall {
  node: string;
  cmd: string;
  args: string[];
  stdin: string;
  /** When the helper was called (Date.now()). */
  atMs?: number;
}

export interface LoopbackBench {
  dir: string;
  /** The bench's private entry point (proxy_url): refused from the controller. */
  privateUrl: string;
  benchFile: string;
  usersFile: string;
  prometheusUrl: string;
  shell: RemoteShell;
  aws: CommandRunner;
  endpoint: (host: string, port: number) => string;
  /**
   * Where each agent's k6 API really listens, in agent order: a `loadgate run` in another
   * process (a workflow under act) has no `endpoint` mapping, so a test puts something at
   * the agents' public addresses that forwards here (test/support/bench-firewall.ts).
   */
  agentApiUrls: string[];
  /** Slot a's stand-in (the only one on a sequential bench). */
  mattermost: MattermostStandIn;
  /** Every slot's stand-in: a, and b on a duet bench. */
  standIns: Partial<Record<Slot, MattermostStandIn>>;
  prometheusUrls: Partial<Record<Slot, string>>;
  grafana: GrafanaStandIn;
  /** Every helper call the scripts made, in order. */
  calls: HelperCall[];
  /** Every `aws ...` command line the gate ran. */
  awsCalls: string[];
  /** Every ExpiresAt the gate tagged the instances with (ec2 create-tags), in order. */
  expiryTags: { atMs: number; resources: string[]; value: string }[];
  /** The `terraform output -json` of this bench, as infra/aws/outputs.tf would print it. */
  terraformOutputs: Record<string, { sensitive: boolean; type: string; value: unknown }>;
  /** k6 processes started by loadgate-agent and still running. */
  runningK6(): number;
  close(): Promise<void>;
}

export interface LoopbackOptions {
  /** A system admin in the dataset (both slots), as the seed dump holds one; the run's login check logs it in. */
  admin?: { email: string; password: string };
  /**
   * The nodes' user data (the dataset load on EC2) is still running for this long after
   * the first `cloud-init status --wait`, which waits for it as it does on an instance.
   */
  bootSeconds?: number;
  /**
   * A bench provisioned with duet slots: app0 runs a second Mattermost stand-in (slot b,
   * :8165 on EC2), the metrics node a second Prometheus (slot b's mattermost and loadtest
   * jobs), agent0 loads slot a and agent1 slot b, as modules/bench lays them out.
   */
  duet?: boolean;
  /**
   * An injected cost: the stand-in running a release with these numbers (e.g. "11.0.1")
   * slows every request by this many ms per open websocket (default 2).
   */
  latencyPerUserMs?: Record<string, number>;
  /**
   * The licence rows the dataset's dump carries (Systems.ActiveLicenseId and Licenses), in
   * the pristine copy and in the database the servers user data started run on; default: an
   * expired licence, as the seed dumps from 2021-22 hold, left in place. User data clears
   * them before the pristine copy (app.sh.tftpl, run against PostgreSQL in
   * aws-dataset.test.ts); here they stay, so the gate is shown not to depend on that (a
   * bench built before it did, a snapshot taken elsewhere). `null`: none.
   */
  dumpLicence?: StandInLicence | null;
  /** The bench's licence file (default: valid for a year, 1000 seats). */
  licenceFile?: StandInLicence;
  /**
   * The metrics node's profiling, as metrics.sh.tftpl sets it up: each slot's stand-in has
   * a Go process do its requests' work (test/support/mattermost-core, the knowncause build
   * for these release numbers), which the Alloy stand-in, running the bench's own
   * config.alloy every scrapeIntervalSec, scrapes into the Pyroscope stand-in under the
   * slot's labels; pyroscope_url points there.
   */
  profiling?: { binaries: ProfilingBinaries; scrapeIntervalSec: number; knownCauseVersions?: string[] };
}

/** An Enterprise licence of the kind the seed dumps carry: expired long ago. */
const EXPIRED_DUMP_LICENCE: StandInLicence = { id: 'dumplicence000000000000000', expiresAtMs: Date.parse('2022-03-01T00:00:00Z'), users: 100_000 };

type Slot = 'a' | 'b';
const SLOT_APP_PORTS: Record<Slot, number> = { a: 8065, b: 8165 };
const SLOT_METRICS_PORTS: Record<Slot, number> = { a: 8067, b: 8167 };

export async function startLoopbackBench(k6Path: string, users = 40, options: LoopbackOptions = {}): Promise<LoopbackBench> {
  const agentIds = AGENT_IDS;
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-aws-loop-'));
  const supervisor = new ProcessSupervisor();
  const logs = join(dir, 'logs');
  await mkdir(logs, { recursive: true });
  const homes: Record<string, string> = {};
  const nodeNames: Record<string, string> = { [APP_ID]: 'app0', [METRICS_ID]: 'metrics0' };
  agentIds.forEach((id, i) => (nodeNames[id] = `agent${i}`));
  for (const [id, name] of Object.entries(nodeNames)) {
    homes[id] = join(dir, 'nodes', name);
    await mkdir(homes[id] as string, { recursive: true });
  }

  const slots: Slot[] = options.duet ? ['a', 'b'] : ['a'];
  // Each slot's database is a copy of the same dataset: the same accounts in both.
  const credentials: string[] = [];
  for (let i = 1; i <= users; i++) credentials.push(`user${i} pass-${i}`);
  const usersFile = join(dir, 'users.txt');
  await writeFile(usersFile, `${credentials.join('\n')}\n`);
  const standIns = {} as Record<Slot, MattermostStandIn>;
  const standInPorts = {} as Record<Slot, number>;
  const metricsPorts = {} as Record<Slot, number>;
  // The bench's entry point (the proxy, or the single app node) has a private VPC address,
  // which a GitHub runner cannot reach: here a port nothing listens on, so the controller's
  // every attempt is refused. Inside the "VPC" (the agents' k6, scripts on app nodes) it
  // routes to the stand-in.
  const privateUrls = {} as Record<Slot, string>;
  // The dump's licence rows are in the pristine copy; the servers user data started run on
  // that data, and each restore copies it again until the gate's SQL clears them.
  const dumpLicence = options.dumpLicence === undefined ? EXPIRED_DUMP_LICENCE : (options.dumpLicence ?? undefined);
  const licenceFile = options.licenceFile ?? { id: 'benchlicence00000000000000', expiresAtMs: Date.now() + 365 * 24 * 3600 * 1000, users: 1000 };
  for (const slot of slots) {
    const standIn = new MattermostStandIn();
    standIn.latencyPerUserMs = 2;
    for (let i = 1; i <= users; i++) standIn.addUser(`user${i}`, `pass-${i}`);
    if (options.admin) standIn.addUser(options.admin.email, options.admin.password, true);
    standIn.licenceFile = licenceFile;
    standIn.databaseLicence = dumpLicence;
    await standIn.start();
    standIns[slot] = standIn;
    standInPorts[slot] = Number(new URL(standIn.baseUrl).port);
    metricsPorts[slot] = await standIn.startMetrics();
    privateUrls[slot] = `http://127.0.0.1:${await allocatePort()}`;
  }
  const mattermost = standIns.a;
  const privateUrl = privateUrls.a;
  const [prometheusPort, prometheusPortB, nodePort, api0, api1, exp0, exp1] = (await allocatePorts(7)) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const apiPorts = [api0, api1];
  const exporterPorts = [exp0, exp1];

  const grafana = new GrafanaStandIn({ editor: GRAFANA_TOKEN });
  // metrics.sh.tftpl provisions slot b's Prometheus as a second data source, uid prometheus-b.
  // Each holds its own slot's Mattermost, under the instance names of its scrape config.
  for (const slot of slots) {
    const uid = slot === 'a' ? 'prometheus' : 'prometheus-b';
    grafana.datasources.add(uid);
    grafana.instances.set(uid, [`app0:${SLOT_METRICS_PORTS[slot]}`]);
  }
  await grafana.start();

  const profiling = options.profiling ? await startProfiling(supervisor, options.profiling, standIns, slots, logs) : undefined;

  const started: ManagedProcess[] = [];
  for (const [i, id] of agentIds.entries()) {
    started.push(
      await supervisor.spawn({
        name: `k6 exporter agent${i}`,
        command: 'python3',
        args: [K6_EXPORTER, '--listen', `127.0.0.1:${exporterPorts[i]}`, '--k6', `127.0.0.1:${apiPorts[i]}`, '--pid-file', join(homes[id] as string, 'k6.pid')],
        logFile: join(logs, `exporter-agent${i}.log`),
      }),
    );
  }
  await supervisor.spawn({
    name: 'node_exporter',
    command: 'prometheus-node-exporter',
    args: ['--collector.disable-defaults', '--collector.cpu', `--web.listen-address=127.0.0.1:${nodePort}`],
    logFile: join(logs, 'node_exporter.log'),
  });

  // metrics.sh.tftpl's jobs and instance names, pointed at loopback ports; in a duet, one
  // Prometheus per slot with that slot's Mattermost and agent group, and every node.
  const target = (port: number, instance: string) => ({ targets: [`127.0.0.1:${port}`], labels: { instance } });
  const prometheusUrls = {} as Record<Slot, string>;
  for (const slot of slots) {
    const groupAgents = agentIds.map((_, i) => i).filter((i) => !options.duet || (slot === 'a' ? i === 0 : i === 1));
    const prometheusConfig = {
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
      scrape_configs: [
        { job_name: 'mattermost', static_configs: [target(metricsPorts[slot], `app0:${SLOT_METRICS_PORTS[slot]}`)] },
        { job_name: 'node', static_configs: [target(nodePort, 'app0:9100'), ...agentIds.map((_, i) => target(nodePort, `agent${i}:9100`))] },
        { job_name: 'loadtest', static_configs: groupAgents.map((i) => target(exporterPorts[i] as number, `agent${i}:6566`)) },
      ],
    };
    const home = join(dir, `prometheus-${slot}`);
    await mkdir(join(home, 'data'), { recursive: true });
    await writeFile(join(home, 'prometheus.yml'), stringify(prometheusConfig));
    const port = slot === 'a' ? prometheusPort : prometheusPortB;
    const prometheus = await supervisor.spawn({
      name: `prometheus ${slot}`,
      command: 'prometheus',
      args: [
        `--config.file=${join(home, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(home, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      logFile: join(logs, `prometheus-${slot}.log`),
    });
    prometheusUrls[slot] = `http://127.0.0.1:${port}`;
    await waitUntilReady(() => httpOk(`${prometheusUrls[slot]}/-/ready`), {
      component: `prometheus ${slot}`,
      process: prometheus,
      timeoutMs: 60_000,
      what: 'ready',
    });
  }
  const prometheusUrl = prometheusUrls.a;

  // The helpers' stand-ins: the test process acts for them.
  const calls: HelperCall[] = [];
  let restores: Promise<void> = Promise.resolve();
  let bootDoneMs: number | undefined;
  const k6ByAgent = new Map<string, ManagedProcess>();
  const helper = async (call: HelperCall): Promise<{ code: number; stdout: string; stderr: string }> => {
    calls.push({ ...call, atMs: Date.now() });
    const ok = (stdout = '') => ({ code: 0, stdout, stderr: '' });
    const fail = (stderr: string) => ({ code: 1, stdout: '', stderr });
    if (call.cmd === 'cloud-init') {
      bootDoneMs ??= Date.now() + (options.bootSeconds ?? 0) * 1000;
      const left = bootDoneMs - Date.now();
      if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
      return ok('status: done\n');
    }
    // app.sh.tftpl's helpers take `--slot a|b` first; slot b exists only on a duet bench.
    const slotted = call.cmd === 'loadgate-dataset' || call.cmd === 'loadgate-mattermost';
    let args = call.args;
    let slot: Slot = 'a';
    if (slotted && args[0] === '--slot') {
      if (args[1] !== 'a' && args[1] !== 'b') return fail(`${call.cmd}: --slot takes a or b`);
      slot = args[1];
      args = args.slice(2);
    }
    const standIn = standIns[slot];
    if (slotted && !standIn) return { code: 2, stdout: '', stderr: `${call.cmd}: this bench was built without duet (bench variable duet = false)` };
    if (call.cmd === 'loadgate-dataset') {
      if (args[0] !== 'restore') return fail('usage');
      // The helper takes one lock over both slots' restores (CREATE DATABASE ... TEMPLATE
      // fails while another session copies the same template), so they run one at a time.
      const restored = restores.then(() => {
        standIn!.resetData();
        standIn!.databaseLicence = dumpLicence;
      });
      restores = restored;
      await restored;
      return ok(`restored slot ${slot}\n`);
    }
    // The SQL the gate runs on the restored database; its effect is tested against a real
    // PostgreSQL (aws-dataset.test.ts). Here: load-test-ng's ClearLicensesData statements
    // remove the database's licence rows.
    if (call.cmd === 'psql') {
      const target = ({ 'postgres://loopback/mattermost': 'a', 'postgres://loopback/mattermost_b': 'b' } as Record<string, Slot>)[call.args[0] ?? ''];
      if (!target || !call.args.includes('ON_ERROR_STOP=1') || !standIns[target]) return fail(`psql ${call.args.join(' ')}: not the helpers' connection`);
      if (call.stdin.includes("DELETE FROM Systems WHERE Name = 'ActiveLicenseId'") && call.stdin.includes('DELETE FROM Licenses'))
        standIns[target].databaseLicence = undefined;
      return ok();
    }
    if (call.cmd === 'loadgate-mattermost') {
      const mm = standIn as MattermostStandIn;
      const [sub, arg] = args;
      if (sub === 'install') {
        const m = /\/(\d+\.\d+\.\d+)(-[A-Za-z0-9]+)?\/mattermost-/.exec(arg ?? '');
        if (!m || !(arg ?? '').startsWith('https://')) return fail(`not a release URL: ${arg}`);
        await mm.stop();
        // Mattermost's X-Version-Id carries the release's numbers only, RCs included.
        mm.version = m[1] as string;
        mm.latencyPerUserMs = options.latencyPerUserMs?.[mm.version] ?? 2;
        await profiling?.install(slot, mm.version);
        return ok();
      }
      if (sub === 'configure') {
        const patch = JSON.parse(call.stdin) as unknown;
        return typeof patch === 'object' && patch !== null && !Array.isArray(patch) ? ok() : fail('not a JSON object');
      }
      if (sub === 'start') {
        if (!mm.running) await mm.start(standInPorts[slot]);
        return ok(`mattermost ${mm.version} is up\n`);
      }
      if (sub === 'stop') return (await mm.stop(), ok());
      if (sub === 'version') return mm.running ? ok(`${mm.version}.0.standin.false\n`) : fail('not running');
      return fail(`unknown subcommand ${sub}`);
    }
    if (call.cmd === 'loadgate-agent') {
      const index = Number(call.node.replace('agent', ''));
      const home = Object.entries(nodeNames).find(([, n]) => n === call.node)?.[0];
      const nodeHome = home ? (homes[home] as string) : '';
      const stopK6 = async () => {
        await k6ByAgent.get(call.node)?.stop();
        k6ByAgent.delete(call.node);
        await rm(join(nodeHome, 'k6.pid'), { force: true });
      };
      if (call.args[0] === 'stop-k6') return (await stopK6(), ok());
      if (call.args[0] === 'start-k6') {
        const scenario = call.args[1] ?? '';
        if (!scenario.startsWith(`${nodeHome}/`) || !scenario.endsWith('.js')) return fail(`the scenario must be a .js file under ${nodeHome}`);
        await stopK6();
        // The same KEY='value' lines systemd reads as an EnvironmentFile.
        const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: nodeHome };
        for (const line of call.stdin.split('\n').filter(Boolean)) {
          const m = /^((?:LOADGATE|K6)_[A-Z0-9_]+)='([^']*)'$/.exec(line);
          if (!m) return fail(`bad environment line: ${line}`);
          const routed = slots.find((sl) => m[1] === 'LOADGATE_BASE_URL' && m[2] === privateUrls[sl]);
          env[m[1] as string] = routed ? standIns[routed].baseUrl : m[2];
        }
        const k6 = await supervisor.spawn({
          name: `k6 ${call.node}`,
          command: k6Path,
          args: [
            'run',
            '--quiet',
            '--no-color',
            '--no-usage-report',
            '--no-thresholds',
            '--include-system-env-vars',
            '--address',
            `127.0.0.1:${apiPorts[index]}`,
            scenario,
          ],
          env,
          cwd: nodeHome,
          logFile: join(logs, `k6-${call.node}.log`),
          stopTimeoutMs: 5000,
        });
        k6ByAgent.set(call.node, k6);
        await writeFile(join(nodeHome, 'k6.pid'), `${k6.pid}\n`);
        return ok();
      }
    }
    return fail(`no stand-in for ${call.cmd} ${call.args.join(' ')}`);
  };
  const control: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { node: string; cmd: string; args: string[]; stdin: string };
      helper({ ...body, stdin: Buffer.from(body.stdin, 'base64').toString('utf8') })
        .catch((error: Error) => ({ code: 1, stdout: '', stderr: error.message }))
        .then((answer) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer)));
    });
  });
  await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
  const controlUrl = `http://127.0.0.1:${(control.address() as AddressInfo).port}`;
  const shims = join(dir, 'shims');
  await mkdir(shims);
  const shim = `#!/bin/bash
set -euo pipefail
stdin=$(base64 -w0)
# Each argument base64-encoded on its own line: any byte survives.
args=$(for a in "$@"; do printf '%s' "$a" | base64 -w0; echo; done | jq -Rsc 'split("\\n") | .[:-1] | map(@base64d)')
body=$(jq -nc --arg node "$LOADGATE_NODE" --arg cmd "$(basename "$0")" --arg stdin "$stdin" --argjson args "$args" '{node: $node, cmd: $cmd, stdin: $stdin, args: $args}')
answer=$(curl -fsS -H 'Content-Type: application/json' --data-binary "$body" "$LOADGATE_STANDIN/exec")
printf '%s' "$(jq -r .stdout <<< "$answer")"
printf '%s' "$(jq -r .stderr <<< "$answer")" >&2
exit "$(jq -r .code <<< "$answer")"
`;
  // The helpers' connection (/etc/loadgate/db.env on an app node).
  const dbEnv = join(dir, 'db.env');
  await writeFile(dbEnv, "PSQL_URL='postgres://loopback/mattermost'\nPSQL_URL_B='postgres://loopback/mattermost_b'\n");
  for (const name of ['cloud-init', 'loadgate-mattermost', 'loadgate-dataset', 'loadgate-agent', 'psql']) {
    await writeFile(join(shims, name), shim);
    await chmod(join(shims, name), 0o755);
  }

  const shell: RemoteShell = {
    async run(instanceIds, script) {
      const results = new Map<string, RemoteResult>();
      await Promise.all(
        instanceIds.map(async (id) => {
          const name = nodeNames[id];
          if (!name) {
            results.set(id, { instanceId: id, status: 'Undeliverable', exitCode: null, stdout: '', stderr: 'no such instance' });
            return;
          }
          const env: NodeJS.ProcessEnv = {
            PATH: `${shims}:/usr/local/bin:/usr/bin:/bin`,
            LOADGATE_HOME: homes[id] as string,
            LOADGATE_NODE: name,
            LOADGATE_STANDIN: controlUrl,
          };
          // An app node reaches its own Mattermost on localhost (:8065 on EC2).
          if (name.startsWith('app'))
            Object.assign(env, {
              LOADGATE_MATTERMOST_URL: mattermost.baseUrl,
              LOADGATE_DB_ENV: dbEnv,
              ...(standIns.b ? { [`LOADGATE_MATTERMOST_URL_${SLOT_APP_PORTS.b}`]: standIns.b.baseUrl } : {}),
            });
          const outcome = await bash(script, env);
          results.set(id, {
            instanceId: id,
            status: outcome.code === 0 ? 'Success' : 'Failed',
            exitCode: outcome.code,
            stdout: outcome.stdout,
            stderr: outcome.stderr,
          });
        }),
      );
      return results;
    },
  };

  const awsCalls: string[] = [];
  const expiryTags: LoopbackBench['expiryTags'] = [];
  const aws: CommandRunner = {
    async run(command, args): Promise<CommandResult> {
      awsCalls.push([command, ...args].join(' '));
      // ec2 create-tags (EC2 API CreateTags): prints nothing on success; every resource must exist.
      if (command === 'aws' && args[0] === 'ec2' && args[1] === 'create-tags') {
        const resources = args.slice(args.indexOf('--resources') + 1, args.indexOf('--tags'));
        const tag = /^Key=ExpiresAt,Value=(.+)$/.exec(args[args.indexOf('--tags') + 1] ?? '');
        const unknown = resources.filter((id) => !nodeNames[id]);
        if (unknown.length || !tag)
          return {
            code: 254,
            stdout: '',
            stderr: `An error occurred (InvalidInstanceID.NotFound) when calling the CreateTags operation: ${unknown.join(', ')}`,
          };
        expiryTags.push({ atMs: Date.now(), resources, value: tag[1] as string });
        return { code: 0, stdout: '', stderr: '' };
      }
      // scheduler list-schedules: a loopback bench has no Aurora, so no database expiry
      // schedules (infra/aws/modules/expiry) and no group of them, as EventBridge Scheduler says it.
      if (command === 'aws' && args[0] === 'scheduler' && args[1] === 'list-schedules') {
        return {
          code: 254,
          stdout: '',
          stderr: `An error occurred (ResourceNotFoundException) when calling the ListSchedules operation: Schedule group ${args[args.indexOf('--group-name') + 1]} does not exist.`,
        };
      }
      if (command === 'aws' && args[0] === 'secretsmanager' && args[1] === 'get-secret-value' && args.includes(TOKEN_ARN)) {
        return { code: 0, stdout: JSON.stringify({ ARN: TOKEN_ARN, Name: 'lg-loop-1/grafana-token', SecretString: GRAFANA_TOKEN }), stderr: '' };
      }
      return { code: 254, stdout: '', stderr: `An error occurred (AccessDeniedException): not stood in: ${args.slice(0, 2).join(' ')}` };
    },
  };

  const out = (value: unknown) => ({ sensitive: false, type: 'string', value });
  // modules/bench's duet_slots: agent0 in slot a, agent1 in slot b.
  const duetSlots = options.duet
    ? slots.map((slot, i) => ({
        slot,
        proxy_url: privateUrls[slot],
        prometheus_url: prometheusUrls[slot],
        app_port: SLOT_APP_PORTS[slot],
        metrics_port: SLOT_METRICS_PORTS[slot],
        agent_indices: [i],
      }))
    : [];
  const benchFile = join(dir, 'bench.json');
  const { parseTerraformOutputs } = await import('../../../src/aws/terraform-outputs.ts');
  const terraformOutputs = {
    bench_name: out('lg-loop-1'),
    region: out('us-east-1'),
    vpc_id: out('vpc-0a18f1a4cdf62d256'),
    proxy_url: out(privateUrl),
    proxy_instance_id: out(null),
    app_private_ips: out(['10.42.100.11']),
    app_instance_ids: out([APP_ID]),
    agent_private_ips: out(['10.42.0.31', '10.42.1.32']),
    agent_public_ips: out(AGENT_PUBLIC_IPS),
    agent_instance_ids: out(agentIds),
    agent_api_port: out(K6_API_PORT),
    load_engine: out('k6'),
    metrics_instance_id: out(METRICS_ID),
    metrics_private_ip: out('10.42.0.10'),
    metrics_public_ip: out('203.0.113.10'),
    prometheus_url: out(prometheusUrl),
    grafana_url: out(grafana.baseUrl),
    pyroscope_url: out(profiling?.url ?? 'http://203.0.113.10:4040'),
    grafana_token_secret_arn: out(TOKEN_ARN),
    db_cluster_identifier: out('lg-loop-1'),
    db_writer_endpoint: out('lg-loop-1.cluster-abc.us-east-1.rds.amazonaws.com'),
    db_reader_endpoint: out('lg-loop-1.cluster-ro-abc.us-east-1.rds.amazonaws.com'),
    db_port: out(5432),
    db_name: out('mattermost'),
    db_secret_arn: out('arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!cluster-1234-AbCdEf'),
    opensearch_endpoint: out(null),
    instances: out({ app: '1 x c7i.large', agent: `${agentIds.length} x c7i.xlarge`, metrics: '1 x m7i.xlarge', db: '1 x db.r7g.large' }),
    duet_slots: out(duetSlots),
  };
  const description = parseTerraformOutputs(terraformOutputs, 'loopback outputs');
  await writeFile(benchFile, `${JSON.stringify(description, null, 2)}\n`);

  return {
    dir,
    privateUrl,
    benchFile,
    usersFile,
    prometheusUrl,
    shell,
    aws,
    // The agents' public addresses, "routed" to their loopback k6 APIs.
    endpoint: (host, port) => {
      const i = AGENT_PUBLIC_IPS.indexOf(host);
      if (i < 0 || port !== K6_API_PORT) throw new Error(`no route to ${host}:${port} on the loopback bench`);
      return `http://127.0.0.1:${apiPorts[i]}`;
    },
    agentApiUrls: agentIds.map((_, i) => `http://127.0.0.1:${apiPorts[i]}`),
    mattermost,
    standIns,
    prometheusUrls,
    grafana,
    calls,
    awsCalls,
    expiryTags,
    terraformOutputs,
    runningK6: () => k6ByAgent.size,
    async close() {
      await supervisor.stopAll();
      supervisor.dispose();
      control.closeAllConnections();
      await new Promise<void>((resolve) => control.close(() => resolve()));
      for (const standIn of Object.values(standIns)) {
        await standIn.stop();
        await standIn.stopMetrics();
      }
      await grafana.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The profiling processes of LoopbackOptions.profiling; `install` swaps a slot's build for a release's. */
async function startProfiling(
  supervisor: ProcessSupervisor,
  o: NonNullable<LoopbackOptions['profiling']>,
  standIns: Record<Slot, MattermostStandIn>,
  slots: Slot[],
  logs: string,
) {
  const cores = {} as Record<Slot, CoreProcess>;
  const ports = {} as Record<Slot, [number, number]>;
  const start = async (slot: Slot, version?: string) => {
    const knownCause = version !== undefined && (o.knownCauseVersions ?? []).includes(version);
    cores[slot] = await startCore(supervisor, knownCause ? o.binaries.knownCause : o.binaries.core, {
      name: `mattermost-core ${slot}${knownCause ? ' (known cause)' : ''}`,
      logFile: join(logs, `core-${slot}.log`),
      ports: ports[slot],
    });
  };
  for (const slot of slots) {
    ports[slot] = (await allocatePorts(2)) as [number, number];
    await start(slot);
    // A request's work, while the slot's process is up (a version switch restarts it).
    standIns[slot].work = async (handler) => {
      await fetch(`${cores[slot].appUrl}/api/v4/handlers/${handler}`, { method: 'POST' }).then(
        (r) => r.arrayBuffer(),
        () => undefined,
      );
    };
  }
  const pyroscope = await startPyroscope(supervisor, o.binaries.standins, join(logs, 'pyroscope.log'));
  // The metrics node's own config.alloy for this bench (one app node, duet or not).
  const resolve: Record<string, string> = { '127.0.0.1:4040': pyroscope.url.replace('http://', '') };
  for (const slot of slots) resolve[`app0:${SLOT_METRICS_PORTS[slot]}`] = cores[slot].metrics;
  await startAlloy(supervisor, o.binaries.standins, {
    config: await renderAlloyConfig({ appCount: 1, duet: slots.includes('b') }),
    resolve,
    scrapeIntervalSec: o.scrapeIntervalSec,
    dir: logs,
    logFile: join(logs, 'alloy.log'),
  });
  return {
    url: pyroscope.url,
    async install(slot: Slot, version: string): Promise<void> {
      await cores[slot].process.stop();
      await start(slot, version);
    },
  };
}

function bash(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/** The AWS bench's timing, shortened for loopback: a 1 s scrape, a 5 s rate window, 30 s start-up limits. */
const LOOPBACK_TIMING: Partial<AwsTiming> = {
  scrapeIntervalSec: 1,
  rateWindowSec: 5,
  firstStartTimeoutSec: 30,
  startTimeoutSec: 30,
  agentReadyTimeoutSec: 60,
  readinessTimeoutSec: 30,
  watchIntervalSec: 2,
};

/**
 * `loadgate run` on the loopback bench as the CLI runs it on AWS: the config written into the
 * bench's folder, the bench and users files it wrote, and the AWS bench over its shell, AWS
 * API and endpoint stand-ins. Returns the exit code, everything the gate printed, and its out dir.
 */
export async function runLoopbackGate(
  bench: LoopbackBench,
  gate: { config: string; baseline: string; candidate: string; args?: string[]; timing?: Partial<AwsTiming> },
): Promise<{ code: number; log: string; outDir: string }> {
  const configFile = join(bench.dir, 'gate.yml');
  await writeFile(configFile, gate.config);
  const outDir = join(bench.dir, 'report');
  const files = ['--bench-file', bench.benchFile, '--users-file', bench.usersFile];
  const o = await parseRunOptions([
    '--config',
    configFile,
    '--baseline',
    gate.baseline,
    '--candidate',
    gate.candidate,
    '--out',
    outDir,
    ...files,
    ...(gate.args ?? []),
  ]);
  const lines: string[] = [];
  const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
  const progress = new Progress(io.out, { githubActions: false, intervalMs: 60_000 });
  const gateBench = new AwsGateBench(o, progress, join(outDir, 'logs'), await readBenchFile(bench.benchFile), {
    shell: bench.shell,
    aws: bench.aws,
    endpoint: bench.endpoint,
    timing: { ...LOOPBACK_TIMING, ...gate.timing },
  });
  const code = await runGateOn(gateBench, o, io, progress);
  return { code, log: lines.join('\n'), outDir };
}

export async function readJson<T>(file: string): Promise<T> {
  return JSON.parse(await readFile(file, 'utf8')) as T;
}

/** Gate-config tolerances for seconds-long loopback runs: they check the machinery, not performance. */
export const MACHINERY_TOLERANCES = `tolerances:
  supportedUsers: { tolerancePct: 100, noiseFloorPct: 100 }
  apiAvg: { tolerancePct: 100, noiseFloorPct: 100 }
  apiP99: { tolerancePct: 100, noiseFloorPct: 100, gating: false }
  storeAvg: { tolerancePct: 100, noiseFloorPct: 100 }
  storeP99: { tolerancePct: 100, noiseFloorPct: 100, gating: false }
  cpu: { tolerancePct: 100, noiseFloorPct: 100, gating: false }
  heap: { tolerancePct: 100, noiseFloorPct: 100 }
`;
