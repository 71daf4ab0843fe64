import type { TestContext } from 'node:test';
import { startAwsCliStandin, type AwsCliStandin } from './aws-cli-standin.ts';
import { startFirewall, type Firewall } from './bench-firewall.ts';
import { GrafanaStandIn } from '../grafana/stand-in.ts';
import { startLoopbackBench, type LoopbackBench } from '../bench/aws/loopback-bench.ts';

/**
 * The AWS bench as the reusable workflow's jobs see it under act, on loopback: the
 * loopback bench in duet (two Mattermost stand-ins, a real k6 agent and Prometheus per
 * slot, its nodes reached through the stood-in SSM), `terraform`, `aws` and `curl` stood in
 * on PATH (aws-cli-standin.ts), each controller port behind its security group
 * (bench-firewall.ts: a connection from a runner whose address no rule admits is refused,
 * as EC2 would drop it), the agents on their own public addresses (127.0.0.1 and
 * 127.0.0.2, one API port), and the user's own Grafana that keeps the snapshots. One bench
 * serves any number of gates in a row: each provisions, runs and tears down around it.
 */
export interface AwsActBench {
  bench: LoopbackBench;
  tools: AwsCliStandin;
  firewalls: { prometheusA: Firewall; prometheusB: Firewall; grafana: Firewall; agent0: Firewall; agent1: Firewall; all: Firewall[] };
  userGrafana: GrafanaStandIn;
  /** PATH with the stood-in tools first. */
  env: NodeJS.ProcessEnv;
}

/** The agents' public addresses: one API port on each (outputs.tf's agent_public_ips, agent_api_port). */
const AGENT_PUBLIC_IPS = ['127.0.0.1', '127.0.0.2'];
export const GRAFANA_SECRET = 'glsa_actGrafanaToken0123456789abcdef_01234567';
const METRICS_SG = 'sg-0a1b2c3d4e5f60718';
const AGENT_SG = 'sg-0f1e2d3c4b5a69788';

export async function startAwsActBench(
  t: TestContext,
  k6: string,
  o: { users?: number; bootSeconds?: number; keepEnv?: string[]; admin?: { email: string; password: string } } = {},
): Promise<AwsActBench> {
  const bench = await startLoopbackBench(k6, o.users ?? 40, { duet: true, bootSeconds: o.bootSeconds ?? 10, ...(o.admin ? { admin: o.admin } : {}) });
  t.after(() => bench.close());
  const late: { tools?: AwsCliStandin } = {};
  const guard = (target: string, listen?: { host: string; port: number }) =>
    startFirewall({
      target: { host: '127.0.0.1', port: Number(new URL(target).port) },
      ...(listen ? { listen } : {}),
      addressOf: (runner) => (late.tools as AwsCliStandin).addressOf(runner),
      admits: (address, port) => (late.tools as AwsCliStandin).admits(address, port),
      keep: o.keepEnv ?? [],
    });
  const outputs = bench.terraformOutputs;
  const [prometheusA, prometheusB, grafana, agent0] = await Promise.all([
    guard(bench.prometheusUrls.a as string),
    guard(bench.prometheusUrls.b as string),
    guard(bench.grafana.baseUrl),
    guard(bench.agentApiUrls[0] as string),
  ]);
  const agent1 = await guard(bench.agentApiUrls[1] as string, { host: AGENT_PUBLIC_IPS[1] as string, port: agent0.port });
  const all = [prometheusA, prometheusB, grafana, agent0, agent1];
  t.after(() => Promise.all(all.map((f) => f.close())));
  const out = (value: unknown) => ({ sensitive: false, type: 'string', value });
  const slots = outputs.duet_slots?.value as { slot: 'a' | 'b'; prometheus_url: string }[];
  const slotPrometheus = { a: prometheusA, b: prometheusB };
  const terraformOutputs = {
    ...outputs,
    prometheus_url: out(prometheusA.url),
    grafana_url: out(grafana.url),
    agent_public_ips: out(AGENT_PUBLIC_IPS),
    agent_api_port: out(agent0.port),
    duet_slots: out(slots.map((s) => ({ ...s, prometheus_url: slotPrometheus[s.slot].url }))),
    controller_ingress: out([
      {
        security_group_id: METRICS_SG,
        ip_protocol: 'tcp',
        from_port: prometheusA.port,
        to_port: prometheusA.port,
        description: 'Prometheus API for the controller',
      },
      {
        security_group_id: METRICS_SG,
        ip_protocol: 'tcp',
        from_port: prometheusB.port,
        to_port: prometheusB.port,
        description: "Slot b's Prometheus API for the controller",
      },
      { security_group_id: METRICS_SG, ip_protocol: 'tcp', from_port: grafana.port, to_port: grafana.port, description: 'Grafana API for the controller' },
      { security_group_id: AGENT_SG, ip_protocol: 'tcp', from_port: agent0.port, to_port: agent0.port, description: 'Agent control API for the controller' },
    ]),
  };
  // The user's own Grafana, which keeps the snapshots (served under its own root_url).
  const userGrafana = new GrafanaStandIn({ editor: GRAFANA_SECRET }, 'https://grafana.chat-server.example/');
  await userGrafana.start();
  t.after(() => userGrafana.stop());
  const tools = await startAwsCliStandin({ shell: bench.shell, secrets: bench.aws, terraformOutputs });
  late.tools = tools;
  t.after(() => tools.close());
  return {
    bench,
    tools,
    firewalls: { prometheusA, prometheusB, grafana, agent0, agent1, all },
    userGrafana,
    env: { ...process.env, PATH: `${tools.binDir}:${process.env.PATH ?? ''}` },
  };
}

/**
 * The secrets and variables a product sets for an AWS gate, under the names docs/github.md
 * gives them: the repository's secrets (only the shipped caller reads and passes them on)
 * and the bench environment's variables (act has no environments: act variables).
 */
export function awsGateSettings(b: AwsActBench, login: { email: string; password: string }): string[] {
  return [
    '-s',
    'LOADGATE_AWS_ROLE_ARN=arn:aws:iam::123456789012:role/loadgate-bench',
    '-s',
    'LOADGATE_LICENSE_SECRET_ARN=arn:aws:secretsmanager:us-east-1:123456789012:secret:mattermost-licence-AbCdEf',
    '-s',
    `LOADGATE_ADMIN_EMAIL=${login.email}`,
    '-s',
    `LOADGATE_ADMIN_PASSWORD=${login.password}`,
    '-s',
    `LOADGATE_GRAFANA_TOKEN=${GRAFANA_SECRET}`,
    '--var',
    'LOADGATE_TF_STATE_BUCKET=loadgate-act-state',
    '--var',
    'LOADGATE_USERS_FILE=.github/loadgate-users.txt',
    '--var',
    `LOADGATE_GRAFANA_URL=${b.userGrafana.baseUrl}`,
    // The release tarballs are on releases.mattermost.com: nothing may leave the machine.
    '--env',
    'LG_RELEASE_WAIT=off',
  ];
}
