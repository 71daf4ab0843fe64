import { existsSync } from 'node:fs';
import { loadGateConfig } from '../config/load.ts';
import type { GateConfig } from '../config/schema.ts';
import { loadNoiseModel, noiseModelPath } from '../noise/model.ts';
import { InputError } from '../util/errors.ts';
import { DEFAULT_CONFIG_PATH } from './validate.ts';

/** Where the config was read: the checkout is this tag's commit (a tag's run, or a dispatch that checked the candidate out). */
export interface ConfigSource {
  tag?: string | undefined;
  /**
   * false: do not read or check the config's noise model. A calibration measures the model
   * that replaces it, and is run exactly when that model no longer fits the config.
   */
  noiseModel?: boolean | undefined;
}

/**
 * A config missing at a tag's commit: a tag-triggered workflow runs from the tagged
 * commit, and the reusable workflow reads the config there, so every release branch
 * needs the caller, the config and its model.
 */
function missingAtTag(path: string, tag: string): string {
  return (
    `config: ${path} does not exist at the commit of tag ${tag}, where the gate reads it (a tag's workflow runs from the tagged commit, and a workflow_dispatch for that tag reads the config there too). ` +
    `Add the caller workflow, ${path} and its noise model to the branch ${tag} was cut from (every release-X.Y or ESR branch that gets release-candidate tags), then push a new release-candidate tag there; or, if the path is wrong, fix the caller's config input`
  );
}

/**
 * The gate config the workflow's `config` input names, read as the gate will read it:
 * the file, its schema and (unless `source.noiseModel` is false) its noise model. A path that does not exist says where the fix
 * goes (the caller's input, or the branch the tag was cut from).
 */
export async function loadGateConfigInput(path: string, source: ConfigSource = {}): Promise<GateConfig> {
  if (!existsSync(path)) {
    if (source.tag) throw new InputError(missingAtTag(path, source.tag));
    throw new InputError(
      `config: ${path} does not exist at the commit this workflow runs on; fix the caller's config input (the gate config's path in this repository, such as ${DEFAULT_CONFIG_PATH}), or add the config to the branch the tag was cut from`,
    );
  }
  const config = await loadGateConfig(path);
  const modelPath = source.noiseModel === false ? undefined : noiseModelPath(config, path);
  if (modelPath) await loadNoiseModel(modelPath, config);
  return config;
}
