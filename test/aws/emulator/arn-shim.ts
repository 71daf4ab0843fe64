import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback proxy in front of moto that gives the Resource Groups Tagging API's EC2 ARNs
 * AWS's form. AWS names an EC2 resource arn:aws:ec2:<region>:<account>:<type>/<id>, e.g.
 * arn:aws:ec2:us-east-1:123456789012:instance/i-0123456789abcdef0 (Service Authorization
 * Reference, "Resource types defined by Amazon EC2"; IAM User Guide, "ARN formats"), and
 * GetResources lists ResourceARN in that form. moto up to 5.1.x prefixes the type with
 * "ec2:" once more (…:123456789012:ec2:instance/i-…; fixed in moto pull request 9491), a
 * form no region returns and the janitor rightly cannot parse. Only GetResources answers are
 * rewritten, and only that prefix; every other request and answer passes through as is, so
 * a moto that already answers in AWS's form is unchanged.
 */
export interface ArnShim {
  url: string;
  /** ARNs rewritten so far: how many of moto's answers needed the shim. */
  rewritten: number;
  close(): Promise<void>;
}

const MOTO_EC2_ARN = /^(arn:[a-z-]+:ec2:[a-z0-9-]*:\d*:)ec2:(?=[a-z-]+\/)/;

export function awsArn(arn: string): string {
  return arn.replace(MOTO_EC2_ARN, '$1');
}

async function body(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startArnShim(target: string): Promise<ArnShim> {
  const upstream = new URL(target);
  const shim: ArnShim = { url: '', rewritten: 0, close: async () => {} };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const sent = await body(req);
      const tagging = String(req.headers['x-amz-target'] ?? '') === 'ResourceGroupsTaggingAPI_20170126.GetResources';
      const forward = request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
        (answer) => {
          void (async () => {
            let out = await body(answer);
            if (tagging && answer.statusCode === 200) {
              const data = JSON.parse(out.toString('utf8')) as { ResourceTagMappingList?: { ResourceARN: string }[] };
              for (const mapping of data.ResourceTagMappingList ?? []) {
                const fixed = awsArn(mapping.ResourceARN);
                if (fixed !== mapping.ResourceARN) shim.rewritten++;
                mapping.ResourceARN = fixed;
              }
              out = Buffer.from(JSON.stringify(data));
            }
            const { 'transfer-encoding': _chunked, ...rest } = answer.headers;
            const headers = { ...rest, 'content-length': String(out.length) };
            res.writeHead(answer.statusCode ?? 502, headers);
            res.end(out);
          })();
        },
      );
      forward.on('error', (error) => {
        res.writeHead(502);
        res.end(String(error));
      });
      forward.end(sent);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  shim.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  shim.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return shim;
}
