import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { z } from 'zod';
import type { Account, IamRequest } from './iam-requests.ts';

/**
 * Evaluates IAM requests against infra/iam/github-role-policy.json, the policy
 * docs/aws.md tells users to give the workflows' role, with
 * @cloud-copilot/iam-simulate (identity policy plus, for KMS keys, the key
 * policy infra/aws writes: KMS needs both).
 */

export const POLICY_FILE = join(import.meta.dirname, '..', '..', '..', 'infra', 'iam', 'github-role-policy.json');

const policySchema = z.object({
  Version: z.literal('2012-10-17'),
  Statement: z.array(z.object({ Sid: z.string(), Effect: z.enum(['Allow', 'Deny']) }).passthrough()).min(1),
});

/** The policy file with its ACCOUNT placeholder (and the docs' example bucket) filled in. */
export function loadPolicy(account: Account, bucket: string, file = POLICY_FILE): unknown {
  const text = readFileSync(file, 'utf8').replaceAll('ACCOUNT', account.id).replaceAll('acme-loadgate-state', bucket);
  const parsed = policySchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`${file}: ${parsed.error.issues[0]?.message} at ${parsed.error.issues[0]?.path.join('.')}`);
  return parsed.data;
}

/** infra/aws's key policy: the account administers the key through IAM (modules/bench/main.tf, data.aws_iam_policy_document.kms). */
const keyPolicy = (account: Account): unknown => ({
  Version: '2012-10-17',
  Statement: [{ Sid: 'AccountAdministersKey', Effect: 'Allow', Principal: { AWS: `arn:aws:iam::${account.id}:root` }, Action: 'kms:*', Resource: '*' }],
});

export interface Decision {
  request: IamRequest;
  result: string;
}

/** One decision per request: Allowed, or why not (ImplicitlyDenied, ExplicitlyDenied, an input error). */
export async function simulate(policy: unknown, account: Account, requests: readonly IamRequest[]): Promise<Decision[]> {
  const decisions: Decision[] = [];
  for (const request of requests) {
    const isKey = /^arn:aws:kms:[^:]*:[^:]*:key\//.test(request.resource);
    const result = await runSimulation(
      {
        identityPolicies: [{ name: 'loadgate-bench', policy: policy as never }],
        serviceControlPolicies: [],
        resourceControlPolicies: [],
        ...(isKey ? { resourcePolicy: keyPolicy(account) as never } : {}),
        request: {
          action: request.action,
          principal: `arn:aws:iam::${account.id}:role/loadgate-bench`,
          resource: { accountId: account.id, resource: request.resource },
          contextVariables: request.context,
        },
      } as never,
      {},
    );
    const outcome =
      result.resultType === 'error'
        ? `error: ${result.errors.message}`
        : result.resultType === 'single'
          ? String(result.overallResult)
          : String((result as { overallResult?: unknown }).overallResult);
    decisions.push({ request, result: outcome });
  }
  return decisions;
}

export const describeDecision = (d: Decision): string =>
  `${d.request.call}: ${d.request.action} on ${d.request.resource} ${JSON.stringify(d.request.context)} -> ${d.result}`;
