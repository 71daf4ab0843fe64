import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { z } from 'zod';
import { InputError, formatIssuePath } from '../../src/util/errors.ts';

/**
 * The bench's user data, rendered the way Terraform's templatefile() renders
 * infra/aws/modules/bench/templates/*.sh.tftpl. The templates use only plain
 * `${name}` substitutions (and `$${` for a literal `${`), so this renderer is
 * exact for them and refuses anything richer; tests use it to check the scripts
 * (bash -n, size, no secrets) without Terraform.
 */

export const TEMPLATES_DIR = fileURLToPath(new URL('../../infra/aws/modules/bench/templates/', import.meta.url));

export type NodeRole = 'app' | 'agent' | 'proxy' | 'metrics';

/** Templates per role, in the order modules/bench/main.tf joins them. */
export const ROLE_TEMPLATES: Readonly<Record<NodeRole, readonly string[]>> = {
  app: ['common.sh.tftpl', 'app.sh.tftpl'],
  proxy: ['common.sh.tftpl', 'proxy.sh.tftpl'],
  agent: ['common.sh.tftpl', 'agent.sh.tftpl'],
  metrics: ['common.sh.tftpl', 'metrics.sh.tftpl'],
};

/** EC2 accepts at most 16 KB of user data (raw, before base64); the bench sends it gzip-compressed. */
export const USER_DATA_LIMIT_BYTES = 16 * 1024;

/** Values land between single quotes in the scripts, so none may hold a quote, space, `$` or backslash. */
const quoted = z.string().regex(/^[^\s'"`$\\]*$/, 'must not contain quotes, spaces, backslashes or $');
const optionalQuoted = quoted;
const ipList = z.string().regex(/^(\d{1,3}\.){3}\d{1,3}(,(\d{1,3}\.){3}\d{1,3})*$/, 'expected comma-separated IPv4 addresses');
const ipv4 = z.string().regex(/^(\d{1,3}\.){3}\d{1,3}$/, 'expected an IPv4 address');
const httpsUrl = z.string().regex(/^https:\/\/[^\s'"`$\\]+$/, 'expected an https:// URL without quotes or spaces');
const port = z.string().regex(/^\d{2,5}$/, 'expected a port number');
/** modules/bench passes tostring(var.duet). */
const duet = z.enum(['true', 'false']);

const commonVars = z.object({
  bench_name: z.string().regex(/^[a-z][a-z0-9-]{1,23}[a-z0-9]$/, 'expected a bench name such as lg-123-1'),
  region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'expected an AWS region'),
  expires_at: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/, 'expected an RFC 3339 UTC time'),
  node_index: z.string().regex(/^\d+$/),
  node_name: z.string().regex(/^(app|agent|proxy|metrics)\d+$/),
});

export const userDataVarsSchemas = {
  app: commonVars
    .extend({
      mattermost_download_url: httpsUrl,
      license_secret_arn: optionalQuoted,
      db_secret_arn: quoted.min(1),
      db_writer_endpoint: quoted.min(1),
      db_reader_endpoint: optionalQuoted,
      db_name: z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,62}$/),
      db_dump_url: z.union([z.literal(''), httpsUrl]),
      opensearch_endpoint: optionalQuoted,
      site_url: z.string().regex(/^https?:\/\/[^\s'"`$\\]+$/),
      config_patch_b64: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'expected base64'),
      duet,
      // Slot b's site URL (used only when duet is true).
      site_url_b: z.string().regex(/^https?:\/\/[^\s'"`$\\]+$/),
    })
    .strict(),
  proxy: commonVars.extend({ app_ips: ipList, duet }).strict(),
  agent: commonVars
    .extend({
      load_engine: z.enum(['k6', 'load-test-ng']),
      k6_version: z.string().regex(/^v\d+\.\d+\.\d+$/),
      loadtest_download_url: httpsUrl,
      proxy_url: z.string().regex(/^http:\/\/[^\s'"`$\\]+$/),
      metrics_ip: ipv4,
      agent_api_port: port,
      agent_metrics_port: port,
      // Inserted into a quoted heredoc: any text but the terminator line.
      k6_exporter: z.string().refine((s) => !/^EXPORTER$/m.test(s), 'must not contain a line "EXPORTER"'),
    })
    .strict(),
  metrics: commonVars
    .extend({
      app_ips: ipList,
      agent_ips: ipList,
      // Empty when the bench has a single app node and so no proxy.
      proxy_ip: z.union([z.literal(''), ipv4]),
      agent_metrics_port: port,
      grafana_secret_arn: quoted.min(1),
      prometheus_image: z.string().regex(/^[a-z0-9./_-]+:[A-Za-z0-9._-]+$/),
      grafana_image: z.string().regex(/^[a-z0-9./_-]+:[A-Za-z0-9._-]+$/),
      pyroscope_image: z.string().regex(/^[a-z0-9./_-]+:[A-Za-z0-9._-]+$/),
      alloy_image: z.string().regex(/^[a-z0-9./_-]+:[A-Za-z0-9._-]+$/),
      // Inserted into a quoted heredoc: any text but the terminator line.
      dashboard_json: z.string().refine((s) => !/^DASHBOARD$/m.test(s), 'must not contain a line "DASHBOARD"'),
      duet,
    })
    .strict(),
} as const;

export type UserDataVars<R extends NodeRole> = z.input<(typeof userDataVarsSchemas)[R]>;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** The variable names a template refers to. */
export function templateVariables(text: string, name = 'template'): Set<string> {
  const names = new Set<string>();
  scan(text, name, (ident) => {
    names.add(ident);
    return '';
  });
  return names;
}

/** templatefile() for templates made of literal text and `${name}` substitutions. */
export function renderTemplate(text: string, vars: Readonly<Record<string, string>>, name = 'template'): string {
  return scan(text, name, (ident) => {
    const value = vars[ident];
    if (value === undefined) throw new Error(`${name}: vars map does not have an attribute named "${ident}"`);
    return value;
  });
}

function scan(text: string, name: string, substitute: (ident: string) => string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const two = text.slice(i, i + 2);
    const three = text.slice(i, i + 3);
    if (three === '$${' || three === '%%{') {
      out += three.slice(1);
      i += 3;
    } else if (two === '${') {
      const end = text.indexOf('}', i + 2);
      const expression = end < 0 ? '' : text.slice(i + 2, end).trim();
      if (!IDENTIFIER.test(expression)) {
        throw new Error(`${name}: only \${name} substitutions are supported, found "${text.slice(i, end < 0 ? i + 20 : end + 1)}" at offset ${i}`);
      }
      out += substitute(expression);
      i = end + 1;
    } else if (two === '%{') {
      throw new Error(`${name}: template directives (%{...}) are not used by the bench templates (offset ${i})`);
    } else {
      out += text[i];
      i++;
    }
  }
  return out;
}

export function readTemplate(file: string): string {
  return readFileSync(`${TEMPLATES_DIR}${file}`, 'utf8');
}

/**
 * The user data of one node, checked first: each role's variables are validated
 * (an unsafe value is an InputError naming it), then its templates are rendered
 * and joined as Terraform joins them.
 */
export function renderUserData<R extends NodeRole>(role: R, vars: UserDataVars<R>): string {
  const result = userDataVarsSchemas[role].safeParse(vars);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `${role} user data ${formatIssuePath(i.path)}: ${i.message}`);
    throw new InputError(lines.join('\n'), lines);
  }
  const values = result.data as Record<string, string>;
  return ROLE_TEMPLATES[role].map((file) => renderTemplate(readTemplate(file), values, file)).join('\n');
}

/** Bytes EC2 receives: the script gzip-compressed, as modules/nodes sends it. */
export function compressedSize(script: string): number {
  return gzipSync(Buffer.from(script, 'utf8')).length;
}
