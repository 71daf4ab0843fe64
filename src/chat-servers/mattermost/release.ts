import { MATTERMOST_DOWNLOAD_URL } from './defaults.ts';
import type { GateConfig } from '../../config/schema.ts';
import { InputError } from '../../util/errors.ts';
import { stripLeadingV, validateVersionLabel } from './version.ts';

/**
 * The release tarball URL of a Mattermost version, from `target.downloadUrl` (default:
 * the releases.mattermost.com template the seed benches used). `{version}` is replaced by
 * the validated label without its leading v: v10.12.0 → .../10.12.0/mattermost-10.12.0-linux-amd64.tar.gz
 */
export function resolveReleaseUrl(target: Pick<GateConfig['target'], 'downloadUrl' | 'versionPattern'>, versionLabel: string, field = 'version'): string {
  const template = target.downloadUrl ?? MATTERMOST_DOWNLOAD_URL;
  if (!template.includes('{version}')) {
    throw new InputError(`target.downloadUrl: ${template} has no {version} placeholder; write it like ${MATTERMOST_DOWNLOAD_URL}`);
  }
  const label = validateVersionLabel(versionLabel, target.versionPattern, field);
  const version = encodeURIComponent(stripLeadingV(label));
  const resolved = template.replaceAll('{version}', version);
  let url: URL;
  try {
    url = new URL(resolved);
  } catch {
    throw new InputError(`target.downloadUrl: ${template} does not make a valid URL for ${label}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new InputError(`target.downloadUrl: ${url.protocol} URLs are not supported; use https://`);
  }
  // The placeholder may only fill the path or query, never pick the host.
  const hostTemplate = new URL(template.replaceAll('{version}', '0'));
  if (url.host !== hostTemplate.host) throw new InputError(`target.downloadUrl: {version} must not be part of the host name`);
  return url.toString();
}
