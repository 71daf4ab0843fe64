import { buildLabel, isBuildValue, parseBuildUrl } from '../build-source.ts';
import type { ChatServer } from '../chat-server.ts';
import { collectMattermostRun } from './collect.ts';
import { pyroscopeProfile } from './cpu-profile.ts';
import { mattermostNodes } from './nodes.ts';
import { checkedOverrides } from './config-patch.ts';
import { overridesToPatch, parseMattermostOverride } from './overrides.ts';
import { resolveReleaseUrl } from './release.ts';
import { validateVersionLabel } from './version.ts';

/**
 * Mattermost as the gate sees it: release labels and their tarballs, or any build tarball URL, config.json patches
 * per side (target.settings is the bench's base config, applied at provisioning, so a
 * side carries only its own flags), the collector of the app nodes' metrics, and its
 * CPU profile read from the bench's Pyroscope (cpu-profile.ts).
 */
export const mattermost: ChatServer = {
  system: 'mattermost',
  displayName: 'Mattermost',
  bench: 'aws',
  baseOverrides(target) {
    checkedOverrides(target.settings, 'target.settings');
    return [];
  },
  side(role, label, sets, target) {
    const sideOverrides = sets.map((s) => parseMattermostOverride(s, `--${role}-set`));
    if (isBuildValue(label)) {
      // Any build tarball (the nodes download it), named by its URL; its version is whatever it reports.
      const build = parseBuildUrl(label, `--${role}`);
      const buildName = buildLabel(build);
      return {
        label: buildName,
        build,
        version: buildName,
        overrides: sideOverrides,
        sideOverrides,
        releaseUrl: label,
        configPatch: overridesToPatch(sideOverrides),
      };
    }
    const version = validateVersionLabel(label, target.versionPattern, `--${role}`);
    return {
      version,
      overrides: sideOverrides,
      sideOverrides,
      releaseUrl: resolveReleaseUrl(target, label, `--${role}`),
      configPatch: overridesToPatch(sideOverrides),
    };
  },
  source: { owner: 'mattermost', repo: 'mattermost', path: mattermostRepoPath, tag: (version) => version },
  // The dataset is the bench's: a dump or snapshot restored before every run.
  datasetVersion: (baseline) => baseline,
  collect: collectMattermostRun,
  nodes: mattermostNodes,
  profile: pyroscopeProfile,
};

/**
 * A Go profile names files by module path (github.com/mattermost/mattermost/server/v8/…,
 * server/go.mod; server/public/… is its own module) or, built without -trimpath, by the
 * build's absolute path; both map to server/… in the repository.
 */
export function mattermostRepoPath(file: string): string | undefined {
  const mod = /^github\.com\/mattermost\/mattermost\/server\/(?:v\d+\/)?(.+\.go)$/.exec(file);
  if (mod) return `server/${mod[1]}`;
  const i = file.lastIndexOf('/mattermost/server/');
  return i >= 0 && file.endsWith('.go') ? file.slice(i + '/mattermost/'.length) : undefined;
}
