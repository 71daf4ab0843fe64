import { createHash } from 'node:crypto';

/**
 * The scripts the gate sends to the bench's nodes. Each calls an on-instance helper that
 * user data installed (infra/aws/modules/bench/templates; listed in docs/aws.md)
 * with arguments that were validated before (release URLs from release.ts, patches from
 * config-patch.ts, environment names /^(LOADGATE|K6)_/) and are still single-quoted here.
 * Payloads (JSON, files) travel base64-encoded, an alphabet that needs no quoting.
 */

/** Where helpers keep the gate's files on a node; relocatable so tests can run the scripts. */
const HOME = '"${LOADGATE_HOME:-/var/lib/loadgate}"';

const HEADER = 'set -euo pipefail\nhome=' + HOME + '\n';

/** Single-quotes a value for bash: 'it'\''s'. */
export function shq(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

const b64 = (text: string | Buffer): string => Buffer.from(text).toString('base64');

/** A file path relative to the helpers' home: letters, digits, `.`, `_`, `-` and `/`, no `..`. */
function relativePath(path: string): string {
  if (!/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(path) || path.split('/').includes('..')) {
    throw new Error(`not a safe relative path on a node: ${JSON.stringify(path)}`);
  }
  return path;
}

/** Checks the nodes finished their user data and have the helpers (cloud-init failures are printed). */
export function readinessScript(helper: 'loadgate-mattermost' | 'loadgate-agent' | 'none'): string {
  return (
    HEADER +
    'if ! cloud-init status --wait > /dev/null; then\n' +
    '  echo "user data failed; the end of /var/log/loadgate-user-data.log:" >&2\n' +
    '  tail -n 15 /var/log/loadgate-user-data.log >&2 || true\n' +
    '  exit 1\n' +
    'fi\n' +
    (helper === 'none'
      ? ''
      : `command -v ${helper} > /dev/null || { echo "${helper} is not installed: was this bench built by this version of infra/aws?" >&2; exit 1; }\n`) +
    // App node 0 counted the errors of the dump's load (loadgate-dataset prepare).
    (helper === 'loadgate-mattermost' ? 'if [ -s "$home/dataset-load.txt" ]; then cat "$home/dataset-load.txt"; fi\n' : '') +
    'echo ready\n'
  );
}

/** Base64 chunks small enough for one SSM command each (the document's parameters are capped). */
export const UPLOAD_CHUNK_BYTES = 24 * 1024;

/**
 * Scripts that write `content` to `<home>/<path>` on the nodes: append base64 chunks to a
 * part file, then check its SHA-256 and move it into place. Skipped when the file is
 * already there with the same digest (users files are large and reused across runs).
 */
export function uploadScripts(path: string, content: string | Buffer, mode = '0644'): string[] {
  const rel = relativePath(path);
  if (!/^0[0-7]{3}$/.test(mode)) throw new Error(`not a file mode: ${mode}`);
  const data = Buffer.from(content);
  const digest = createHash('sha256').update(data).digest('hex');
  const target = `"$home"/${shq(rel)}`;
  const part = `"$home"/${shq(`${rel}.part`)}`;
  const same = `[ -f ${target} ] && [ "$(sha256sum < ${target} | cut -d' ' -f1)" = ${shq(digest)} ]`;
  const encoded = b64(data);
  const scripts: string[] = [];
  for (let offset = 0, i = 0; offset < encoded.length || i === 0; offset += UPLOAD_CHUNK_BYTES, i++) {
    const chunk = encoded.slice(offset, offset + UPLOAD_CHUNK_BYTES);
    const write = i === 0 ? `mkdir -p "$(dirname ${target})"\n: > ${part}\n` : '';
    scripts.push(`${HEADER}if ${same}; then exit 0; fi\n${write}printf '%s' ${shq(chunk)} >> ${part}\n`);
  }
  scripts.push(
    `${HEADER}if ${same}; then echo unchanged; exit 0; fi\n` +
      `base64 -d < ${part} > ${part}.decoded\n` +
      `[ "$(sha256sum < ${part}.decoded | cut -d' ' -f1)" = ${shq(digest)} ] || { echo "upload of ${rel} is corrupt" >&2; exit 1; }\n` +
      `chmod ${mode} ${part}.decoded\nmv ${part}.decoded ${target}\nrm -f ${part}\necho uploaded\n`,
  );
  return scripts;
}

/**
 * A duet bench's two Mattermost services per app node (src/bench/aws/README.md): each
 * helper takes `--slot a|b` first. Without a slot the helpers act on slot a, the only
 * service of a sequential bench.
 */
export type Slot = 'a' | 'b';

const slotArg = (slot: Slot | undefined): string => {
  if (slot !== undefined && slot !== 'a' && slot !== 'b') throw new Error(`not a duet slot: ${JSON.stringify(slot)}`);
  return slot ? ` --slot ${slot}` : '';
};

/** App nodes: swap in a release (downloaded once per URL); the helper stops Mattermost. */
export function installScript(releaseUrl: string, slot?: Slot): string {
  if (!/^https:\/\/[^\s'"`$\\]+\.tar\.gz$/.test(releaseUrl)) throw new Error(`not a release tarball URL: ${releaseUrl}`);
  return `${HEADER}loadgate-mattermost${slotArg(slot)} install ${shq(releaseUrl)}\n`;
}

/** App nodes: base config (target.settings) merged with this side's patch; the bench's keys re-applied. */
export function configureScript(patch: Record<string, unknown>, slot?: Slot): string {
  return `${HEADER}printf '%s' ${shq(b64(JSON.stringify(patch)))} | base64 -d | loadgate-mattermost${slotArg(slot)} configure\n`;
}

export function startScript(timeoutSec: number, slot?: Slot): string {
  return `${HEADER}loadgate-mattermost${slotArg(slot)} start ${Math.max(5, Math.ceil(timeoutSec))}\n`;
}

export function stopScript(slot?: Slot): string {
  return `${HEADER}loadgate-mattermost${slotArg(slot)} stop\n`;
}

/** Prints the running server's X-Version-Id (e.g. 10.12.0.16234.abc.false). */
export function versionScript(slot?: Slot): string {
  return `${HEADER}loadgate-mattermost${slotArg(slot)} version\n`;
}

/**
 * An app node: the licence as its own Mattermost reports it (Client4.getClientLicenseOld's
 * route), asked on the node because the controller cannot reach the bench's private
 * addresses. LOADGATE_MATTERMOST_URL (slot b: LOADGATE_MATTERMOST_URL_<port>) relocates the
 * server for tests.
 */
export function clientLicenceScript(port = 8065): string {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`not a port: ${port}`);
  // Slot b's server (another port) has its own relocation variable.
  const relocate = `LOADGATE_MATTERMOST_URL${port === 8065 ? '' : `_${port}`}`;
  return `${HEADER}curl -fsS --max-time 30 "\${${relocate}:-http://127.0.0.1:${port}}/api/v4/license/client?format=old"\n`;
}

/**
 * After a restore, what load-test-ng's deployer does to a loaded dump
 * (deployment/terraform/create.go PostProcessDatabase): ClearLicensesData's query
 * (deployment/utils.go ClearLicensesCmd), so a licence stored in the dump cannot win over
 * the bench's licence file, and updatePostgresSettings' default_text_search_config. That
 * setting belongs to the database, and CREATE DATABASE ... TEMPLATE does not copy it, so it
 * is set after every restore. A database Mattermost never ran on has neither table.
 */
const POST_RESTORE_SQL = `DO $$
BEGIN
  IF to_regclass('systems') IS NOT NULL THEN
    DELETE FROM Systems WHERE Name = 'ActiveLicenseId';
  END IF;
  IF to_regclass('licenses') IS NOT NULL THEN
    DELETE FROM Licenses;
  END IF;
  EXECUTE format('ALTER DATABASE %I SET default_text_search_config TO %L', current_database(), 'pg_catalog.english');
END
$$;
`;

/**
 * App node 0: recreate the database from its pristine copy (all app nodes stopped), then
 * POST_RESTORE_SQL through the helpers' connection (db.env; LOADGATE_DB_ENV relocates it for tests).
 */
export function restoreDatasetScript(slot?: Slot): string {
  // Slot b's database is <db>_b; its connection is PSQL_URL_B in the same file.
  const url = slot === 'b' ? '$PSQL_URL_B' : '$PSQL_URL';
  return (
    `${HEADER}loadgate-dataset${slotArg(slot)} restore\n` +
    'source "${LOADGATE_DB_ENV:-/etc/loadgate/db.env}"\n' +
    `printf '%s' ${shq(b64(POST_RESTORE_SQL))} | base64 -d | psql "${url}" -v ON_ERROR_STOP=1 -q\n` +
    'echo "licences of the restored dump cleared; default_text_search_config is pg_catalog.english"\n'
  );
}

/** Agents: start k6 with the uploaded scenario and this run's environment (KEY='value' lines on stdin). */
export function startK6Script(scenarioPath: string, env: Record<string, string>): string {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(env)) {
    if (!/^(LOADGATE|K6)_[A-Z0-9_]+$/.test(key)) throw new Error(`k6 environment: ${key} is not a LOADGATE_ or K6_ variable`);
    // systemd's EnvironmentFile treats quotes in a bare value as shell quoting (JSON would
    // lose its "): single-quote every value, so no value may hold a ' or a line break.
    if (/['\n\r\0]/.test(value)) throw new Error(`k6 environment: ${key} holds a quote or a line break`);
    lines.push(`${key}='${value}'`);
  }
  const scenario = `"$home"/${shq(relativePath(scenarioPath))}`;
  return `${HEADER}printf '%s' ${shq(b64(`${lines.join('\n')}\n`))} | base64 -d | loadgate-agent start-k6 ${scenario}\n`;
}

export function stopK6Script(): string {
  return `${HEADER}loadgate-agent stop-k6\n`;
}

/**
 * The dump-load note app node 0's readiness check prints: how many errors psql reported
 * while loading the dump (which did not stop it, as with load-test-ng) and the first few.
 * Undefined when the output has none (a snapshot, or a clean load).
 */
export function dumpLoadWarning(readinessOutput: string): string | undefined {
  const count = Number(/^dump-load-errors: (\d+)$/m.exec(readinessOutput)?.[1] ?? 0);
  if (!count) return undefined;
  const first = [...readinessOutput.matchAll(/^dump-load-error: (.*)$/gm)].map((m) => (m[1] as string).slice(0, 200));
  return `the dataset's dump loaded with ${count} psql error(s), which did not stop the load (as with load-test-ng); check they are harmless (/var/log/loadgate-dump.log on app0)${first.length ? `: ${first.join(' | ')}` : ''}`;
}
