import { z } from 'zod';
import { InputError, formatIssuePath } from '../util/errors.ts';

/**
 * `terraform output -json` of infra/aws, parsed into the bench description the
 * gate uses (addresses, endpoints, instance IDs). Every output is checked: a
 * missing one means the state does not come from this version of infra/aws.
 */

/** Terraform's format: { name: { sensitive, type, value } }. */
const rawOutputsSchema = z.record(z.string(), z.object({ sensitive: z.boolean(), type: z.unknown(), value: z.unknown() }));

const ipv4 = z.string().regex(/^(\d{1,3}\.){3}\d{1,3}$/, 'expected an IPv4 address');
const url = z.string().regex(/^https?:\/\/\S+$/, 'expected an http(s) URL');
const host = z.string().min(1, 'expected a host name');
const instanceId = z.string().regex(/^i-[0-9a-f]{8,17}$/, 'expected an EC2 instance ID');
const arn = z.string().regex(/^arn:aws[a-z-]*:/, 'expected an ARN');
const port = z.number().int().min(1).max(65535);

/** Each output's value schema; the key is the Terraform output name. */
const OUTPUT_SCHEMAS = {
  bench_name: z.string().min(1),
  region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'expected an AWS region'),
  vpc_id: z.string().regex(/^vpc-[0-9a-f]+$/, 'expected a VPC ID'),
  proxy_url: url,
  proxy_instance_id: instanceId.nullable(),
  app_private_ips: z.array(ipv4).min(1),
  app_instance_ids: z.array(instanceId).min(1),
  agent_private_ips: z.array(ipv4).min(1),
  agent_public_ips: z.array(ipv4).min(1),
  agent_instance_ids: z.array(instanceId).min(1),
  agent_api_port: port,
  load_engine: z.enum(['k6', 'load-test-ng']),
  metrics_instance_id: instanceId,
  metrics_private_ip: ipv4,
  metrics_public_ip: ipv4,
  prometheus_url: url,
  grafana_url: url,
  pyroscope_url: url,
  grafana_token_secret_arn: arn,
  db_cluster_identifier: z.string().min(1),
  db_writer_endpoint: host,
  db_reader_endpoint: host,
  db_port: port,
  db_name: z.string().min(1),
  db_secret_arn: arn,
  opensearch_endpoint: host.nullable(),
  instances: z.record(z.string(), z.string().regex(/^\d+ x \S+$/, 'expected "count x type"')),
  duet_slots: z.array(
    z.strictObject({
      slot: z.enum(['a', 'b']),
      proxy_url: url,
      prometheus_url: url,
      app_port: port,
      metrics_port: port,
      agent_indices: z.array(z.number().int().min(0)).min(1),
    }),
  ),
} as const;

type OutputName = keyof typeof OUTPUT_SCHEMAS;
type OutputValues = { [K in OutputName]: z.output<(typeof OUTPUT_SCHEMAS)[K]> };

/** Outputs Terraform leaves out when their value is null. */
const NULLABLE_OUTPUTS: ReadonlySet<OutputName> = new Set(['opensearch_endpoint', 'proxy_instance_id']);

export const OUTPUT_NAMES = Object.keys(OUTPUT_SCHEMAS) as OutputName[];

/**
 * The bench description `loadgate tf-outputs` prints (bench.json) and `loadgate run
 * --bench-file` reads back: checked again on the way in, since the file crosses a
 * job boundary.
 */
export const awsBenchDescriptionSchema = z.strictObject({
  kind: z.literal('aws'),
  benchName: z.string().min(1),
  region: OUTPUT_SCHEMAS.region,
  vpcId: OUTPUT_SCHEMAS.vpc_id,
  /** The entry point: the proxy, or the single app node when there is no proxy (instanceId null). */
  proxy: z.strictObject({ url, instanceId: instanceId.nullable() }),
  app: z.strictObject({ privateIps: z.array(ipv4).min(1), instanceIds: z.array(instanceId).min(1) }),
  agents: z.strictObject({
    privateIps: z.array(ipv4).min(1),
    publicIps: z.array(ipv4).min(1),
    instanceIds: z.array(instanceId).min(1),
    apiPort: port,
    engine: z.enum(['k6', 'load-test-ng']),
  }),
  metrics: z.strictObject({
    instanceId,
    privateIp: ipv4,
    publicIp: ipv4,
    prometheusUrl: url,
    grafanaUrl: url,
    pyroscopeUrl: url,
    grafanaTokenSecretArn: arn,
  }),
  database: z.strictObject({
    clusterIdentifier: z.string().min(1),
    writerEndpoint: host,
    readerEndpoint: host,
    port,
    name: z.string().min(1),
    secretArn: arn,
  }),
  openSearchEndpoint: host.nullable(),
  /** Role to "count x type", for run results' bench fingerprint. */
  instances: OUTPUT_SCHEMAS.instances,
  /**
   * A bench built for duets (bench variable duet): slots a and b, each with its own
   * Mattermost service on every app node, entry point, Prometheus and agent group. Empty
   * on a sequential bench.
   */
  duetSlots: z
    .array(
      z.strictObject({
        slot: z.enum(['a', 'b']),
        proxyUrl: url,
        prometheusUrl: url,
        appPort: port,
        metricsPort: port,
        agentIndices: z.array(z.number().int().min(0)).min(1),
      }),
    )
    .default([]),
});
export type AwsBenchDescription = z.output<typeof awsBenchDescriptionSchema>;

const suffixPath = (path: readonly PropertyKey[]): string => path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('');

/** Parses already-decoded JSON; `source` names the file in messages. */
export function parseTerraformOutputs(data: unknown, source: string): AwsBenchDescription {
  const v = outputValues(data, source);
  checkCounts(v, source);
  return describeBench(v);
}

/** Each output's value, checked against its schema; every missing or malformed output is named at once. */
function outputValues(data: unknown, source: string): OutputValues {
  const raw = rawOutputsSchema.safeParse(data);
  if (!raw.success) {
    const lines = raw.error.issues.map((i) => `${formatIssuePath(i.path)}: ${i.message}`);
    throw new InputError(`${source} is not the output of \`terraform output -json\`:\n${lines.join('\n')}`, lines);
  }
  const problems: string[] = [];
  const missing = OUTPUT_NAMES.filter((name) => raw.data[name] === undefined && !NULLABLE_OUTPUTS.has(name));
  if (missing.length) {
    problems.push(`missing outputs: ${missing.join(', ')} (was the bench applied from this version of infra/aws, and has the apply finished?)`);
  }
  const values: Partial<Record<OutputName, unknown>> = {};
  for (const name of OUTPUT_NAMES) {
    const entry = raw.data[name];
    if (entry === undefined) {
      if (NULLABLE_OUTPUTS.has(name)) values[name] = null;
      continue;
    }
    const parsed = OUTPUT_SCHEMAS[name].safeParse(entry.value);
    if (parsed.success) values[name] = parsed.data;
    else for (const issue of parsed.error.issues) problems.push(`${name}${suffixPath(issue.path)}: ${issue.message}`);
  }
  if (problems.length) throw new InputError(`${source} does not describe a loadgate AWS bench:\n${problems.join('\n')}`, problems);
  return values as OutputValues;
}

/** The rules between outputs: one entry per agent and per app node in each list, and duet slots a and b that split the agents. */
function checkCounts(v: OutputValues, source: string): void {
  if (v.agent_public_ips.length !== v.agent_private_ips.length || v.agent_instance_ids.length !== v.agent_private_ips.length) {
    throw new InputError(`${source}: agent_private_ips, agent_public_ips and agent_instance_ids must have one entry per agent`);
  }
  const slots = v.duet_slots;
  if (slots.length) {
    const agents = slots.flatMap((s) => s.agent_indices).sort((a, b) => a - b);
    if (slots.length !== 2 || slots[0]?.slot !== 'a' || slots[1]?.slot !== 'b')
      throw new InputError(`${source}: duet_slots must be empty or hold slots a and b, in that order`);
    if (agents.some((a, i) => a !== i) || agents.length !== v.agent_instance_ids.length)
      throw new InputError(`${source}: duet_slots must split the agents 0..${v.agent_instance_ids.length - 1} between the two slots, each agent once`);
  }
  if (v.app_private_ips.length !== v.app_instance_ids.length) {
    throw new InputError(`${source}: app_private_ips and app_instance_ids must have one entry per app node`);
  }
}

/** The checked outputs in the shape bench.json stores. */
function describeBench(v: OutputValues): AwsBenchDescription {
  return {
    kind: 'aws',
    benchName: v.bench_name,
    region: v.region,
    vpcId: v.vpc_id,
    proxy: { url: v.proxy_url, instanceId: v.proxy_instance_id },
    app: { privateIps: v.app_private_ips, instanceIds: v.app_instance_ids },
    agents: {
      privateIps: v.agent_private_ips,
      publicIps: v.agent_public_ips,
      instanceIds: v.agent_instance_ids,
      apiPort: v.agent_api_port,
      engine: v.load_engine,
    },
    metrics: {
      instanceId: v.metrics_instance_id,
      privateIp: v.metrics_private_ip,
      publicIp: v.metrics_public_ip,
      prometheusUrl: v.prometheus_url,
      grafanaUrl: v.grafana_url,
      pyroscopeUrl: v.pyroscope_url,
      grafanaTokenSecretArn: v.grafana_token_secret_arn,
    },
    database: {
      clusterIdentifier: v.db_cluster_identifier,
      writerEndpoint: v.db_writer_endpoint,
      readerEndpoint: v.db_reader_endpoint,
      port: v.db_port,
      name: v.db_name,
      secretArn: v.db_secret_arn,
    },
    openSearchEndpoint: v.opensearch_endpoint,
    instances: v.instances,
    duetSlots: v.duet_slots.map((s) => ({
      slot: s.slot,
      proxyUrl: s.proxy_url,
      prometheusUrl: s.prometheus_url,
      appPort: s.app_port,
      metricsPort: s.metrics_port,
      agentIndices: s.agent_indices,
    })),
  };
}

/** Parses the text of `terraform output -json`. */
export function parseTerraformOutputsText(text: string, source: string): AwsBenchDescription {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new InputError(`${source} is not JSON (${(error as Error).message}); produce it with \`terraform output -json\``);
  }
  return parseTerraformOutputs(data, source);
}
