import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { test } from 'node:test';
import assert from 'node:assert/strict';

/**
 * Ordering the module needs, read from Terraform's own dependency graph of
 * infra/aws (`terraform graph`, the real provider from scripts/infra-tools.sh).
 * Skipped without LOADGATE_INFRA_EMULATOR=1 (scripts/check-infra.sh sets it).
 */

const run = promisify(execFile);
const enabled = process.env.LOADGATE_INFRA_EMULATOR === '1';
const skip = enabled ? false : 'LOADGATE_INFRA_EMULATOR is not 1: run scripts/check-infra.sh, which builds Terraform and the AWS provider';

test("the NAT gateway is created after the public subnet's fixed-address reservation, so it cannot take the metrics node's address", { skip }, async () => {
  const terraform = process.env.TERRAFORM;
  assert.ok(terraform && process.env.TF_CLI_CONFIG_FILE, 'TERRAFORM and TF_CLI_CONFIG_FILE are set (eval "$(bash scripts/infra-tools.sh)")');
  const work = await mkdtemp(join(tmpdir(), 'loadgate-graph-'));
  try {
    const infra = join(work, 'aws');
    await cp(join(import.meta.dirname, '..', '..', 'infra', 'aws'), infra, {
      recursive: true,
      filter: (src) => !/[/\\]\.terraform([/\\]|$)|\.terraform\.lock\.hcl$/.test(src),
    });
    // `terraform graph` needs an initialised backend: local state in the copy instead of S3.
    await writeFile(join(infra, 'backend_override.tf'), 'terraform {\n  backend "local" {}\n}\n');
    await run(terraform, [`-chdir=${infra}`, 'init', '-input=false'], { timeout: 5 * 60_000 });
    const { stdout } = await run(terraform, [`-chdir=${infra}`, 'graph'], { timeout: 5 * 60_000, maxBuffer: 32 * 1024 * 1024 });
    const edges = [...stdout.matchAll(/"([^"]+)"\s*->\s*"([^"]+)"/g)].map((m) => [
      m[1]!.replace(/^\[root\] | \(expand\)$/g, ''),
      m[2]!.replace(/^\[root\] | \(expand\)$/g, ''),
    ]);
    assert.ok(edges.length > 10, 'terraform graph printed the dependency edges');
    const nat = 'module.bench.module.network.aws_nat_gateway.this';
    const reservation = 'module.bench.module.network.aws_ec2_subnet_cidr_reservation.public_fixed';
    assert.ok(
      edges.some(([from, to]) => from === nat && to === reservation),
      `${nat} depends on ${reservation}; its edges: ${edges
        .filter(([from]) => from === nat)
        .map(([, to]) => to)
        .join(', ')}`,
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});
