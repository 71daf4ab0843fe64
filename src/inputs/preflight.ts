import { existsSync, statSync } from 'node:fs';
import type { GateConfig } from '../config/schema.ts';
import type { BenchKind } from './patterns.ts';

/**
 * What a gate needs from the calling repository besides its config, derived from the
 * config and the bench, checked before anything is provisioned: a secret the caller did
 * not pass, or a variable the `bench` environment lacks, would otherwise fail a run job
 * an hour later, after the bench was paid for.
 */

/** What the preflight job sees: which secrets and variables are set (never their values), and two variables it reads. */
export interface PreflightSettings {
  /** The reusable workflow's secrets (on.workflow_call.secrets) that are non-empty. */
  secrets: ReadonlySet<string>;
  /** The LOADGATE_* variables (the `bench` environment's over the repository's) that are non-empty. */
  variables: ReadonlySet<string>;
  /** vars.LOADGATE_USERS_FILE: a path in the calling repository's checkout. */
  usersFile?: string | undefined;
  /** vars.LOADGATE_GRAFANA_URL: the Grafana that keeps the snapshots, or empty. */
  grafanaUrl?: string | undefined;
}

/** One thing the gate needs and does not have: what it is, why this gate needs it, where to set it. */
export interface PreflightMissing {
  name: string;
  why: string;
  fix: string;
}

/** A secret the shipped caller passes from the repository secret of the same name in capitals. */
function secretFix(secret: string): string {
  const repoSecret = `LOADGATE_${secret.toUpperCase().replace(/-/g, '_')}`;
  return `set the repository (or organisation) secret ${repoSecret} and pass it in the caller's secrets: (${secret}: \${{ secrets.${repoSecret} }}); a secret of the bench environment never reaches the reusable workflow`;
}

const variableFix = (name: string) => `set the variable ${name} in the bench environment (Settings → Environments → bench → Environment variables)`;

/** A secret, or else the bench environment's variable (the role and licence ARNs). */
function secretOrVariable(s: PreflightSettings, secret: string, variable: string, why: string): PreflightMissing | undefined {
  if (s.secrets.has(secret) || s.variables.has(variable)) return undefined;
  return {
    name: `the secret ${secret} or the variable ${variable}`,
    why,
    fix: `${variableFix(variable)} (the recommended place), or pass the secret ${secret} from the caller`,
  };
}

function secret(s: PreflightSettings, name: string, why: string): PreflightMissing | undefined {
  return s.secrets.has(name) ? undefined : { name: `the secret ${name}`, why, fix: secretFix(name) };
}

function variable(s: PreflightSettings, name: string, why: string): PreflightMissing | undefined {
  return s.variables.has(name) ? undefined : { name: `the variable ${name}`, why, fix: variableFix(name) };
}

/** The users file the variable names must be a file in the checkout (run --users-file reads it). */
function usersFile(s: PreflightSettings, cwd: string): PreflightMissing | undefined {
  const missing = variable(s, 'LOADGATE_USERS_FILE', 'the agents log in as the dataset\'s users (loadgate run --users-file, one "login password" per line)');
  if (missing || !s.usersFile) return missing;
  const path = s.usersFile;
  const inside = /^[A-Za-z0-9_.][A-Za-z0-9._/-]*$/.test(path) && !`/${path}/`.includes('/../');
  if (!inside)
    return {
      name: `the users file "${path.slice(0, 80)}"`,
      why: 'LOADGATE_USERS_FILE must be a path inside the repository',
      fix: 'give a path relative to the repository root (letters, digits, . _ - /, no "..")',
    };
  const full = `${cwd}/${path}`;
  if (existsSync(full) && statSync(full).isFile()) return undefined;
  return {
    name: `the users file ${path}`,
    why: "LOADGATE_USERS_FILE names it, but the candidate's commit has no such file",
    fix: `commit ${path} to the branch the tag was cut from, or correct the variable LOADGATE_USERS_FILE`,
  };
}

/** A Grafana named to keep the snapshots needs its token (src/grafana/snapshot.ts refuses one without). */
function grafana(s: PreflightSettings): PreflightMissing | undefined {
  const url = s.grafanaUrl?.trim();
  if (!url) return undefined;
  if (!/^https?:\/\/\S+$/.test(url)) {
    return {
      name: 'the variable LOADGATE_GRAFANA_URL',
      why: `"${url.slice(0, 80)}" is not the URL of a Grafana`,
      fix: 'set it to the https:// address of the Grafana that keeps the snapshots, or delete it to take no snapshots',
    };
  }
  return secret(
    s,
    'grafana-token',
    `the variable LOADGATE_GRAFANA_URL names ${url.slice(0, 120)}, which keeps each test's snapshot, and its service-account token (snapshots:create) is needed to write there`,
  );
}

/**
 * Everything this gate needs that is not set, in the order a run would trip on it. The
 * local bench needs none: its processes run on the runner.
 */
export function preflightMissing(config: GateConfig, bench: BenchKind, settings: PreflightSettings, cwd = process.cwd()): PreflightMissing[] {
  if (bench !== 'aws') return [];
  const found = [
    secretOrVariable(settings, 'aws-role-arn', 'LOADGATE_AWS_ROLE_ARN', 'the AWS jobs assume this IAM role through OIDC to create and destroy the bench'),
    variable(settings, 'LOADGATE_TF_STATE_BUCKET', "the bench's Terraform state lives in this S3 bucket, so that teardown and the janitor can destroy it"),
    config.target.system === 'mattermost'
      ? secretOrVariable(
          settings,
          'license-secret-arn',
          'LOADGATE_LICENSE_SECRET_ARN',
          'a Mattermost cluster runs only with a licence (the Secrets Manager ARN holding it)',
        )
      : undefined,
    config.engine.kind === 'load-test-ng'
      ? secret(settings, 'admin-email', "load-test-ng's agents log in the dataset's system admin to set the server up")
      : undefined,
    config.engine.kind === 'load-test-ng' ? secret(settings, 'admin-password', 'the password of that admin (admin-email)') : undefined,
    usersFile(settings, cwd),
    grafana(settings),
  ];
  return found.filter((m): m is PreflightMissing => m !== undefined);
}

/** One line (a step output, the check run's reason): each missing item, why, and where to set it. */
export function preflightProblem(missing: readonly PreflightMissing[], bench: BenchKind): string {
  const items = missing.map((m, i) => `(${i + 1}) ${m.name}: ${m.why}; ${m.fix}`);
  return `the ${bench} bench needs ${missing.length === 1 ? 'a setting that is' : `${missing.length} settings that are`} not set, so nothing was provisioned: ${items.join(' ')}`;
}
