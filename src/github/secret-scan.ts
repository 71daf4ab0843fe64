import { InputError } from '../util/errors.ts';

/**
 * Finds secrets in what is about to be published (report files, PR text, check run
 * summary) or uploaded (the gate job's report artifact): the values of environment
 * variables named like secrets, byte for byte, and well-known credential shapes. A
 * finding names the file and the variable or kind, never the value.
 */

export interface NamedSecret {
  /** The environment variable it came from, or a description ("the token"). */
  name: string;
  value: string;
}

export interface SecretFinding {
  item: string;
  what: string;
}

/** Shorter values would match by accident (and cannot be a real credential). */
const MIN_SECRET_LENGTH = 8;

/** AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, GITHUB_TOKEN, ACTIONS_ID_TOKEN_REQUEST_TOKEN, *_PASSWORD... */
const SECRET_NAME = /(TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|PRIVATE_KEY|SECRET_ACCESS_KEY|ACCESS_KEY(_ID)?|API_KEY)$/i;

/** Credential shapes worth refusing even when no variable holds them (a token echoed by a tool). */
const CREDENTIAL_PATTERNS: readonly { what: string; pattern: RegExp }[] = [
  { what: 'an AWS access key ID', pattern: /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/ },
  { what: 'an AWS secret access key assignment', pattern: /aws_secret_access_key["']?\s*[=:]\s*["']?[A-Za-z0-9/+=]{40}/i },
  { what: 'a GitHub token', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b/ },
  { what: 'a private key', pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----/ },
  { what: 'a JSON Web Token (such as an OIDC ID token)', pattern: /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/ },
];

/** Values of environment variables whose names say they are secrets, with their names. */
export function secretsFromEnv(env: NodeJS.ProcessEnv = process.env): NamedSecret[] {
  return Object.entries(env)
    .filter((entry): entry is [string, string] => SECRET_NAME.test(entry[0]) && typeof entry[1] === 'string' && entry[1].length >= MIN_SECRET_LENGTH)
    .map(([name, value]) => ({ name, value }));
}

function named(secret: string | NamedSecret): NamedSecret {
  return typeof secret === 'string' ? { name: 'a token or credential', value: secret } : secret;
}

/** Every secret value and credential shape found, one finding per item and kind. */
export function findSecrets(
  items: readonly { name: string; content: Buffer | string }[],
  secrets: readonly (string | NamedSecret)[],
  options: { patterns?: boolean } = {},
): SecretFinding[] {
  const values = secrets.map(named).filter((s) => s.value.length >= MIN_SECRET_LENGTH);
  const findings: SecretFinding[] = [];
  for (const item of items) {
    for (const secret of values) {
      if (item.content.includes(secret.value)) findings.push({ item: item.name, what: `the value of ${secret.name}` });
    }
    if (options.patterns ?? true) {
      // latin1 maps every byte to one character, so binary files are searched as they are.
      const text = typeof item.content === 'string' ? item.content : item.content.toString('latin1');
      for (const { what, pattern } of CREDENTIAL_PATTERNS) if (pattern.test(text)) findings.push({ item: item.name, what });
    }
  }
  return findings;
}

function describeFindings(findings: readonly SecretFinding[], max = 10): string {
  const lines = findings.slice(0, max).map((f) => `${f.item} contains ${f.what}`);
  if (findings.length > max) lines.push(`… and ${findings.length - max} more`);
  return lines.join('; ');
}

/** Throws an InputError naming every item that holds a secret; the values are never printed. */
export function assertNoSecrets(
  items: readonly { name: string; content: Buffer | string }[],
  secrets: readonly (string | NamedSecret)[],
  options: { patterns?: boolean; action?: string } = {},
): void {
  const findings = findSecrets(items, secrets, options);
  if (!findings.length) return;
  throw new InputError(
    `${describeFindings(findings)}; loadgate will not ${options.action ?? 'publish it'}. Remove the secret from the report (or stop the tool that printed it) and re-run`,
    findings.map((f) => `${f.item}: ${f.what}`),
  );
}
