import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A logging proxy on loopback between the AWS clients (Terraform's provider and
 * S3 backend, the AWS CLI the janitor runs) and the emulator: it forwards every
 * request unchanged and records what IAM authorises it by (service, action,
 * parameters, the tags it carries) plus the response, from which created IDs
 * are read. Protocols, as the AWS SDKs speak them:
 *   - query (EC2, RDS, IAM, STS): form body with Action=...;
 *   - JSON (KMS, Secrets Manager, CloudWatch Logs, Tagging API): X-Amz-Target;
 *   - REST (S3, OpenSearch, EventBridge Scheduler): method and path.
 * The service is the SigV4 credential scope's (Authorization header).
 */

export interface LoggedCall {
  /** SigV4 service name: ec2, rds, iam, sts, kms, secretsmanager, logs, es, s3, tagging, scheduler. */
  service: string;
  /** API operation, e.g. CreateVpc, PutObject. */
  action: string;
  /** Query parameters and form fields, or the JSON body's top-level fields. */
  params: Record<string, unknown>;
  method: string;
  path: string;
  status: number;
  /** Tags the request asks to put on what it creates or tags. */
  requestTags: Record<string, string>;
  response: string;
}

export interface CallLogProxy {
  url: string;
  calls: LoggedCall[];
  close(): Promise<void>;
}

/** Starts the proxy on 127.0.0.1 (a free port) in front of `target` (http://127.0.0.1:port). */
export async function startCallLogProxy(target: string): Promise<CallLogProxy> {
  const upstream = new URL(target);
  if (!['127.0.0.1', '::1', 'localhost'].includes(upstream.hostname)) throw new Error(`the emulator must listen on loopback, not ${upstream.hostname}`);
  const calls: LoggedCall[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const forward = httpRequest(
        {
          hostname: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: `${upstream.hostname}:${upstream.port}` },
        },
        (up) => {
          const responseChunks: Buffer[] = [];
          up.on('data', (chunk: Buffer) => responseChunks.push(chunk));
          up.on('end', () => {
            const response = Buffer.concat(responseChunks);
            calls.push(parseCall(req.method ?? 'GET', req.url ?? '/', req.headers, body.toString('utf8'), up.statusCode ?? 0, response.toString('utf8')));
            res.writeHead(up.statusCode ?? 502, up.headers);
            res.end(response);
          });
        },
      );
      forward.on('error', (error) => {
        res.writeHead(502);
        res.end(String(error));
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const header = (headers: IncomingHttpHeaders, name: string): string => {
  const value = headers[name];
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
};

export function parseCall(method: string, url: string, headers: IncomingHttpHeaders, body: string, status: number, response: string): LoggedCall {
  const scope = /Credential=[^/]+\/\d{8}\/[^/]+\/([^/]+)\/aws4_request/.exec(header(headers, 'authorization'));
  const service = scope?.[1] ?? 'unknown';
  const parsedUrl = new URL(url, 'http://emulator');
  const target = header(headers, 'x-amz-target');
  let action = '';
  let params: Record<string, unknown> = Object.fromEntries(parsedUrl.searchParams);
  const contentType = header(headers, 'content-type');
  if (target) {
    action = target.split('.').pop() ?? target;
    params = body ? (JSON.parse(body) as Record<string, unknown>) : {};
  } else if (contentType.startsWith('application/x-www-form-urlencoded') || /(^|&)Action=/.test(body)) {
    params = { ...params, ...Object.fromEntries(new URLSearchParams(body)) };
    action = String(params.Action ?? '');
  } else if (service === 's3') {
    action = s3Action(method, parsedUrl);
  } else if (service === 'es') {
    ({ action, params } = openSearchCall(method, parsedUrl, body));
  } else if (service === 'scheduler') {
    ({ action, params } = schedulerCall(method, parsedUrl, body));
  }
  return { service, action, params, method, path: parsedUrl.pathname, status, requestTags: requestTags(service, params, headers), response };
}

function s3Action(method: string, url: URL): string {
  const hasKey = url.pathname.split('/').filter(Boolean).length > 1;
  if (!hasKey) return method === 'GET' ? 'ListBucket' : method === 'HEAD' ? 'HeadBucket' : `${method}Bucket`;
  return { GET: 'GetObject', HEAD: 'GetObject', PUT: 'PutObject', DELETE: 'DeleteObject' }[method] ?? `${method}Object`;
}

/** OpenSearch's REST API (2021-01-01): the operations the provider calls. */
function openSearchCall(method: string, url: URL, body: string): { action: string; params: Record<string, unknown> } {
  const json = body ? (JSON.parse(body) as Record<string, unknown>) : {};
  const parts = url.pathname.split('/').filter(Boolean); // 2021-01-01, opensearch, domain, name, config
  const query = Object.fromEntries(url.searchParams);
  if (parts[1] === 'tags') return { action: method === 'GET' ? 'ListTags' : 'AddTags', params: { ...query, ...json } };
  if (parts[1] === 'tags-removal') return { action: 'RemoveTags', params: json };
  if (parts[1] === 'opensearch' && parts[2] === 'domain') {
    const DomainName = parts[3] ?? json.DomainName;
    if (!parts[3]) return { action: 'CreateDomain', params: json };
    if (parts[4] === 'config') return { action: method === 'GET' ? 'DescribeDomainConfig' : 'UpdateDomainConfig', params: { ...json, DomainName } };
    return { action: method === 'DELETE' ? 'DeleteDomain' : 'DescribeDomain', params: { DomainName } };
  }
  if (parts[1] === 'opensearch' && parts[2] === 'domain-info') return { action: 'DescribeDomains', params: json };
  return { action: `${method} ${url.pathname}`, params: json };
}

/**
 * EventBridge Scheduler's REST API (botocore's scheduler/2021-06-30/service-2.json):
 * /schedules/{Name} (groupName in the query or body), /schedule-groups/{Name},
 * /tags/{ResourceArn}.
 */
function schedulerCall(method: string, url: URL, body: string): { action: string; params: Record<string, unknown> } {
  const json = body ? (JSON.parse(body) as Record<string, unknown>) : {};
  const query = Object.fromEntries(url.searchParams);
  const [collection, ...rest] = url.pathname.split('/').filter(Boolean);
  const name = rest.length ? decodeURIComponent(rest.join('/')) : undefined;
  if (collection === 'tags') {
    const action = { GET: 'ListTagsForResource', POST: 'TagResource', DELETE: 'UntagResource' }[method] ?? `${method}Tags`;
    return { action, params: { ...query, ...json, ResourceArn: name } };
  }
  const verbs = name ? { POST: 'Create', GET: 'Get', PUT: 'Update', DELETE: 'Delete' }[method] : method === 'GET' ? 'List' : undefined;
  const noun = collection === 'schedule-groups' ? 'ScheduleGroup' : collection === 'schedules' ? 'Schedule' : undefined;
  if (!verbs || !noun) return { action: `${method} ${url.pathname}`, params: json };
  const params: Record<string, unknown> = { ...query, ...json };
  if (name) params.Name = name;
  // The schedule's group travels in the query (Get, Delete) or the body (Create, Update).
  if (noun === 'Schedule') params.GroupName = json.GroupName ?? query.groupName ?? query.ScheduleGroup ?? 'default';
  return { action: `${verbs}${noun}${name ? '' : 's'}`, params };
}

/** The tags a request carries, in each service's own shape. */
function requestTags(service: string, params: Record<string, unknown>, headers: IncomingHttpHeaders): Record<string, string> {
  const tags: Record<string, string> = {};
  // Query protocol: TagSpecification.1.Tag.2.Key (EC2), Tags.member.1.Key / Tags.Tag.1.Key (RDS, IAM), Tag.1.Key (EC2 CreateTags).
  for (const [key, value] of Object.entries(params)) {
    const match = /^(.*\.)?(?:Tag|Tags\.member|Tags\.Tag|member)\.(\d+)\.Key$/.exec(key);
    if (match && typeof value === 'string') tags[value] = String(params[key.replace(/Key$/, 'Value')] ?? '');
  }
  // JSON and REST: a list of {Key,Value} / {TagKey,TagValue}, or a map.
  for (const field of ['Tags', 'TagList', 'tags']) {
    const value = params[field];
    if (Array.isArray(value)) {
      for (const tag of value as Array<Record<string, string>>) {
        const key = tag.Key ?? tag.TagKey;
        if (key !== undefined) tags[key] = tag.Value ?? tag.TagValue ?? '';
      }
    } else if (value && typeof value === 'object') {
      for (const [key, tagValue] of Object.entries(value as Record<string, string>)) tags[key] = String(tagValue);
    }
  }
  // S3 object tagging header (unused by Terraform's backend today, kept for completeness).
  const tagging = header(headers, 'x-amz-tagging');
  if (service === 's3' && tagging) for (const [key, value] of new URLSearchParams(tagging)) tags[key] = value;
  return tags;
}
