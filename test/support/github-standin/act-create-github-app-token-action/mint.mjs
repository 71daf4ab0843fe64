// @ts-check
/**
 * What actions/create-github-app-token (v3.1.1) does, for its act stand-in: the same input
 * defaults and the same calls, written from its source (main.js, lib/main.js,
 * lib/get-permissions-from-inputs.js) and @octokit/auth-app's App JWT:
 * - no owner and no repositories: a token for the current repository; an owner alone: for
 *   all of that owner's repositories; repositories alone: under GITHUB_REPOSITORY_OWNER;
 * - with repositories: GET /repos/{owner}/{first}/installation, then POST
 *   /app/installations/{id}/access_tokens with `repositories` and `permissions`, retried
 *   3 times on a status of 500 or more; with an owner alone: GET /users/{owner}/installation
 *   and the token for all its repositories, retried 3 times on any error;
 * - `permissions`: every non-empty INPUT_PERMISSION-* input, named as GitHub names it
 *   (lower case, "-" as "_"); none given: the token inherits the installation's;
 * - the token is masked, then the outputs token, installation-id and app-slug are set; a
 *   failure fails the step with GitHub's message.
 */
import { createSign } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/**
 * The App's JWT as @octokit/auth-app signs it (universal-github-app-jwt): RS256, `iat` 30 s in
 * the past against clock drift, `exp` 10 minutes after it, `iss` the client ID.
 * @param {string} clientId
 * @param {string} privateKey PEM
 * @param {number} [nowSec]
 */
function appJwt(clientId, privateKey, nowSec = Math.floor(Date.now() / 1000)) {
  const part = (/** @type {unknown} */ value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const iat = nowSec - 30;
  const signing = `${part({ alg: 'RS256', typ: 'JWT' })}.${part({ iat, exp: iat + 600, iss: clientId })}`;
  return `${signing}.${createSign('RSA-SHA256').update(signing).sign(privateKey).toString('base64url')}`;
}

/**
 * @param {NodeJS.ProcessEnv} env
 * @returns {Record<string, string> | undefined}
 */
function permissionsFromInputs(env) {
  /** @type {Record<string, string> | undefined} */
  let permissions;
  for (const [key, value] of Object.entries(env)) {
    if (!key.startsWith('INPUT_PERMISSION-') || !value) continue;
    permissions = { ...permissions, [key.slice('INPUT_PERMISSION-'.length).toLowerCase().replaceAll('-', '_')]: value };
  }
  return permissions;
}

class RequestError extends Error {
  /** @param {number} status @param {string} message */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * @param {string} api
 * @param {string} method
 * @param {string} path
 * @param {string} jwt
 * @param {unknown} [body]
 */
async function request(api, method, path, jwt, body) {
  const response = await fetch(`${api.replace(/\/$/, '')}${path}`, {
    method,
    headers: {
      authorization: `bearer ${jwt}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const data = /** @type {Record<string, unknown>} */ (await response.json().catch(() => ({})));
  if (!response.ok)
    throw new RequestError(
      response.status,
      `${String(data.message ?? response.statusText)} - ${String(data.documentation_url ?? 'https://docs.github.com/rest')}`,
    );
  return data;
}

/**
 * @template T
 * @param {() => Promise<T>} attempt
 * @param {(error: RequestError) => boolean} shouldRetry
 * @param {string} what
 */
async function retried(attempt, shouldRetry, what) {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      const e = /** @type {RequestError} */ (error);
      console.log(`Failed to create token for "${what}" (attempt ${n}): ${e.message}`);
      if (n > 3 || !shouldRetry(e)) throw e;
      await new Promise((resolve) => setTimeout(resolve, 200 * n));
    }
  }
}

/** @param {NodeJS.ProcessEnv} env */
export async function main(env) {
  const clientId = env.INPUT_CLIENT_ID || env.INPUT_APP_ID;
  if (!clientId)
    throw new Error(
      "The 'client-id' (or deprecated 'app-id') input must be set to a non-empty string. If using a secret or variable, ensure it is available in this workflow context.",
    );
  if (!env.GITHUB_REPOSITORY) throw new Error("GITHUB_REPOSITORY missing, must be set to '<owner>/<repo>'");
  if (!env.GITHUB_REPOSITORY_OWNER) throw new Error("GITHUB_REPOSITORY_OWNER missing, must be set to '<owner>'");
  const api = env.INPUT_GITHUB_API_URL || 'https://api.github.com';
  const jwt = appJwt(clientId, env.INPUT_PRIVATE_KEY ?? '');
  const permissions = permissionsFromInputs(env);
  let owner = env.INPUT_OWNER ?? '';
  let repositories = (env.INPUT_REPOSITORIES ?? '')
    .split(/[\n,]+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (!owner && repositories.length === 0) [owner, repositories] = [env.GITHUB_REPOSITORY.split('/')[0] ?? '', [env.GITHUB_REPOSITORY.split('/')[1] ?? '']];
  else if (!owner) owner = env.GITHUB_REPOSITORY_OWNER;
  const mint = async (/** @type {string} */ lookup) => {
    const installation = await request(api, 'GET', lookup, jwt);
    const body = { ...(repositories.length ? { repositories } : {}), ...(permissions ? { permissions } : {}) };
    const token = await request(api, 'POST', `/app/installations/${String(installation.id)}/access_tokens`, jwt, body);
    return { token: String(token.token), installationId: String(installation.id), appSlug: String(installation.app_slug) };
  };
  const minted = repositories.length
    ? await retried(
        () => mint(`/repos/${owner}/${repositories[0]}/installation`),
        (e) => e.status >= 500,
        repositories.join(','),
      )
    : await retried(
        () => mint(`/users/${owner}/installation`),
        () => true,
        owner,
      );
  console.log(`::add-mask::${minted.token}`);
  const out = env.GITHUB_OUTPUT;
  if (out) appendFileSync(out, `token=${minted.token}\ninstallation-id=${minted.installationId}\napp-slug=${minted.appSlug}\n`);
  console.log(
    `create-github-app-token stand-in: ${minted.appSlug} installation ${minted.installationId} token for ${repositories.length ? repositories.map((r) => `${owner}/${r}`).join(', ') : `all of ${owner}`} with ${
      permissions
        ? Object.entries(permissions)
            .map(([k, v]) => `${k}: ${v}`)
            .join(', ')
        : "the installation's permissions"
    }`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.env).catch((error) => {
    console.log(`::error::${/** @type {Error} */ (error).message}`);
    process.exit(1);
  });
}
