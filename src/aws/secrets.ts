import { z } from 'zod';
import type { CommandRunner } from '../util/command-runner.ts';

/**
 * Reads one Secrets Manager secret with the `aws` CLI (the controller's OIDC
 * credentials). The value is returned, never logged: errors carry the ARN and AWS's
 * message only.
 */
const secretValueSchema = z.object({ SecretString: z.string().min(1) });

class SecretReadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretReadError';
  }
}

export async function readSecretString(runner: CommandRunner, region: string, arn: string): Promise<string> {
  const result = await runner.run('aws', ['secretsmanager', 'get-secret-value', '--secret-id', arn, '--region', region, '--output', 'json'], {
    timeoutMs: 60_000,
  });
  if (result.code !== 0) {
    throw new SecretReadError(`cannot read the secret ${arn}: ${result.stderr.trim().split('\n').pop() ?? `aws exited with ${result.code}`}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(result.stdout);
  } catch {
    throw new SecretReadError(`aws secretsmanager get-secret-value for ${arn} did not print JSON`);
  }
  const parsed = secretValueSchema.safeParse(json);
  if (!parsed.success) throw new SecretReadError(`the secret ${arn} has no SecretString yet (has the node that writes it finished booting?)`);
  return parsed.data.SecretString;
}
