import { existsSync } from 'node:fs';
import { loadGateConfig } from '../config/load.ts';
import type { GateConfig } from '../config/schema.ts';
import { loadNoiseModel, noiseModelPath } from '../noise/model.ts';
import { InputError } from '../util/errors.ts';
import { DEFAULT_CONFIG_PATH } from './validate.ts';

/**
 * The gate config the workflow's `config` input names, read as the gate will read it:
 * the file, its schema and its noise model. A path that does not exist says where the fix
 * goes (the caller's input, or the branch the tag was cut from).
 */
export async function loadGateConfigInput(path: string): Promise<GateConfig> {
  if (!existsSync(path)) {
    throw new InputError(
      `config: ${path} does not exist at the commit this workflow runs on; fix the caller's config input (the gate config's path in this repository, such as ${DEFAULT_CONFIG_PATH}), or add the config to the branch the tag was cut from`,
    );
  }
  const config = await loadGateConfig(path);
  const modelPath = noiseModelPath(config, path);
  if (modelPath) await loadNoiseModel(modelPath, config);
  return config;
}
