import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { awsArn, startArnShim } from './emulator/arn-shim.ts';
import { parseArn } from '../../src/aws/janitor.ts';

test("the shim gives moto 5.1's EC2 ARNs AWS's form, which the janitor parses, and leaves every other ARN alone", () => {
  const moto = 'arn:aws:ec2:us-east-1:123456789012:ec2:instance/i-0123456789abcdef0';
  assert.equal(awsArn(moto), 'arn:aws:ec2:us-east-1:123456789012:instance/i-0123456789abcdef0');
  assert.deepEqual(parseArn(awsArn(moto)), { service: 'ec2', type: 'instance', id: 'i-0123456789abcdef0' });
  for (const arn of ['arn:aws:ec2:us-east-1:123456789012:vpc/vpc-1', 'arn:aws:rds:us-east-1:123456789012:cluster:lg-1', 'arn:aws:ec2:us-east-1::image/ami-1'])
    assert.equal(awsArn(arn), arn);
});

test('only GetResources answers are rewritten; any other request passes through byte for byte', async (t) => {
  const answers: Record<string, string> = {
    'ResourceGroupsTaggingAPI_20170126.GetResources': JSON.stringify({
      ResourceTagMappingList: [{ ResourceARN: 'arn:aws:ec2:us-east-1:123456789012:ec2:vpc/vpc-1', Tags: [] }],
      PaginationToken: '',
    }),
    'AmazonEC2.Other': '{"ResourceARN":"arn:aws:ec2:us-east-1:123456789012:ec2:vpc/vpc-1"}',
  };
  const upstream = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
    res.end(answers[String(req.headers['x-amz-target'])] ?? '');
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => upstream.close(() => resolve())));
  const shim = await startArnShim(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
  t.after(() => shim.close());
  const ask = async (target: string) => (await fetch(shim.url, { method: 'POST', headers: { 'x-amz-target': target }, body: '{}' })).text();
  assert.equal(
    JSON.parse(await ask('ResourceGroupsTaggingAPI_20170126.GetResources')).ResourceTagMappingList[0].ResourceARN,
    'arn:aws:ec2:us-east-1:123456789012:vpc/vpc-1',
  );
  assert.equal(await ask('AmazonEC2.Other'), answers['AmazonEC2.Other']);
  assert.equal(shim.rewritten, 1);
});
