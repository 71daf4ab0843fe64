import { buildLabel, isBuildValue, parseLocalBuild } from '../build-source.ts';
import type { ChatServer } from '../chat-server.ts';
import { packagePath, synapseChangedCode } from './changed-functions.ts';
import { collectRun } from './collect.ts';
import { synapseLocal } from './local.ts';
import { parseOverride, settingsToOverrides } from './overrides.ts';
import { pySpyProfile } from './py-spy.ts';
import { compareVersions, toPipVersion } from './version.ts';

/**
 * Synapse as the gate sees it: PyPI versions or local builds (wheels, source directories), homeserver.yaml overrides (target.settings
 * for both sides, then each side's flags, applied at every run), and the collector of its
 * metrics listener beside the local bench's process exporter and k6; on the local bench it
 * installs, seeds and starts itself (local.ts), is profiled by py-spy (py-spy.ts) and
 * diffs its two installed trees (changed-functions.ts).
 */
export const synapse: ChatServer = {
  system: 'synapse',
  displayName: 'Synapse',
  bench: 'local',
  baseOverrides: (target) => settingsToOverrides(target.settings),
  side(role, label, sets, target, base, cwd) {
    const sideOverrides = sets.map((s) => parseOverride(s, `--${role}-set`));
    if (isBuildValue(label)) {
      // A local wheel or source directory: no versionPattern (that is for release tags).
      const build = parseLocalBuild(label, `--${role}`, cwd ?? process.cwd());
      return { label: buildLabel(build), build, version: build.kind === 'url' ? '' : build.version, overrides: [...base, ...sideOverrides], sideOverrides };
    }
    const version = toPipVersion(label, target.versionPattern, `--${role}`);
    return { version, overrides: [...base, ...sideOverrides], sideOverrides };
  },
  // The installed package keeps the repository's layout (synapse/… at its root); release tags are v<version>.
  source: {
    owner: 'element-hq',
    repo: 'synapse',
    path: (file) => {
      const path = packagePath(file);
      return path?.startsWith('synapse/') ? path : undefined;
    },
    tag: (version) => `v${version}`,
  },
  datasetVersion: (baseline, candidate) => (compareVersions(baseline, candidate) <= 0 ? baseline : candidate),
  collect: collectRun,
  local: synapseLocal,
  profile: pySpyProfile,
  changedCode: synapseChangedCode,
};
