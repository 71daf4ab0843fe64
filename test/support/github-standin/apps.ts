import { generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';

/**
 * GitHub Apps for the GitHub stand-in: an App's key pair, what it was granted, where it is
 * installed, and the installation access tokens it mints. The rules are GitHub's, as its
 * REST reference states them and actions/create-github-app-token (lib/main.js, v3.1.1)
 * relies on them:
 * - the App authenticates as itself with a JWT signed RS256 by its private key, `iss` its
 *   client ID (or App ID), `exp` at most 10 minutes ahead ("Generating a JSON Web Token
 *   (JWT) for a GitHub App"); such a JWT reaches only the App endpoints;
 * - GET /repos/{owner}/{repo}/installation and GET /users/{username}/installation find the
 *   installation on a repository or an account, 404 when the App is not installed there
 *   (or, for a repository, the installation cannot reach it);
 * - POST /app/installations/{id}/access_tokens mints a token for the installation that
 *   expires after 1 hour, for the repositories asked (422 "There is at least one
 *   repository that does not exist or is not accessible to the parent installation." when
 *   one is outside it; all of the installation's when none is asked) with the permissions
 *   asked (422 "The permissions requested are not granted to this installation." when one
 *   exceeds the App's; all of the App's when none is asked);
 * - DELETE /installation/token revokes the token it is called with.
 */

export type Access = 'none' | 'read' | 'write';

export interface AppOptions {
  /** What app-client-id names; the JWT's `iss`. */
  clientId: string;
  id: number;
  slug: string;
  /** The permissions the App requests in its settings, granted by every installation. */
  permissions: Record<string, Access>;
  /** Where it is installed: an account (owner) and all its repositories or the ones selected. */
  installations: { id: number; account: string; repositories: 'all' | string[] }[];
}

export interface App extends AppOptions {
  /** PEM (PKCS#8) of the App's private key: what a repository stores as the app-private-key secret. */
  privateKey: string;
  publicKey: KeyObject;
}

/** An installation access token as the stand-in's token table holds it. */
export interface MintedToken {
  token: string;
  app: { id: number; slug: string };
  installationId: number;
  permissions: Record<string, Access>;
  /** owner/name of every repository it reaches. */
  repositories: string[];
  expiresAt: string;
}

export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const RANK: Record<Access, number> = { none: 0, read: 1, write: 2 };

export function createApp(options: AppOptions): App {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...options, privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey };
}

const JWT = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/;

export function isJwt(token: string): boolean {
  return JWT.test(token);
}

/** The App a JWT authenticates, or why GitHub would refuse it (401, "A JSON web token could not be decoded" and kin). */
export function appForJwt(apps: readonly App[], jwt: string, nowSec = Date.now() / 1000): App {
  const [, header, payload, signature] = JWT.exec(jwt) ?? [];
  const decode = (part: string | undefined) => JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
  let head: Record<string, unknown>;
  let claims: Record<string, unknown>;
  try {
    head = decode(header);
    claims = decode(payload);
  } catch {
    throw new AppError(401, 'A JSON web token could not be decoded');
  }
  if (head.alg !== 'RS256') throw new AppError(401, "'Expiration time' claim ('exp') and algorithm RS256 are required");
  const app = apps.find((a) => String(claims.iss) === a.clientId || String(claims.iss) === String(a.id));
  if (!app) throw new AppError(401, 'A JSON web token could not be decoded');
  const signed = verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), app.publicKey, Buffer.from(signature ?? '', 'base64url'));
  if (!signed) throw new AppError(401, 'A JSON web token could not be decoded');
  const exp = Number(claims.exp);
  const iat = Number(claims.iat);
  if (!Number.isFinite(exp) || exp <= nowSec)
    throw new AppError(401, "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires");
  if (exp - nowSec > 600 + 30) throw new AppError(401, "'Expiration time' claim ('exp') is too far in the future");
  if (!Number.isFinite(iat) || iat > nowSec + 60)
    throw new AppError(401, "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued");
  return app;
}

/** The installation of `app` on the repository, or 404 as GitHub answers. */
export function repoInstallation(app: App, owner: string, repo: string): App['installations'][number] {
  const installation = app.installations.find((i) => i.account === owner && (i.repositories === 'all' || i.repositories.includes(repo)));
  if (!installation) throw new AppError(404, 'Not Found');
  return installation;
}

export function accountInstallation(app: App, account: string): App['installations'][number] {
  const installation = app.installations.find((i) => i.account === account);
  if (!installation) throw new AppError(404, 'Not Found');
  return installation;
}

/**
 * Mints an installation access token. `hosted` lists the repositories (owner/name) the
 * stand-in knows of an account, for an installation on all of them.
 */
export function mintToken(
  app: App,
  installationId: number,
  asked: { repositories?: string[] | undefined; permissions?: Record<string, string> | undefined },
  hosted: (account: string) => string[],
): MintedToken {
  const installation = app.installations.find((i) => i.id === installationId);
  if (!installation) throw new AppError(404, 'Not Found');
  const reachable = installation.repositories === 'all' ? hosted(installation.account).map((r) => r.split('/')[1] as string) : installation.repositories;
  if (asked.repositories?.some((r) => !reachable.includes(r))) {
    throw new AppError(422, 'There is at least one repository that does not exist or is not accessible to the parent installation.');
  }
  const granted: Record<string, Access> = { metadata: 'read', ...app.permissions };
  const wanted = asked.permissions ?? granted;
  for (const [scope, level] of Object.entries(wanted)) {
    if (!(level in RANK) || RANK[level as Access] > RANK[granted[scope] ?? 'none'])
      throw new AppError(422, 'The permissions requested are not granted to this installation.');
  }
  const repositories = (asked.repositories ?? reachable).map((r) => `${installation.account}/${r}`);
  return {
    token: `ghs_${randomBytes(18).toString('base64url')}`,
    app: { id: app.id, slug: app.slug },
    installationId,
    permissions: { metadata: 'read', ...(wanted as Record<string, Access>) },
    repositories,
    expiresAt: new Date(Date.now() + 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  };
}
