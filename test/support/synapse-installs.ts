import { fileURLToPath } from 'node:url';
import { ensureSynapse, installedTree } from '../../src/chat-servers/synapse/install.ts';
import { SYNAPSE_PACKAGE } from '../../src/chat-servers/synapse/defaults.ts';
import type { PythonTree } from '../../src/chat-servers/synapse/changed-functions.ts';

/**
 * Synapse releases installed for the tests that read real Synapse source, the way the
 * local bench installs them (one venv per version in the cache, reused when present), so
 * a test never depends on an install another test file made first. The cache is the one
 * scripts/test.sh names (LOADGATE_CACHE_DIR), else the checkout's .cache/loadgate.
 */
export const TEST_CACHE_DIR = process.env.LOADGATE_CACHE_DIR ?? fileURLToPath(new URL('../../.cache/loadgate', import.meta.url));

/** The two releases the local gate's default target compares. */
export const RELEASES = ['1.162.0', '1.163.2'] as const;

/** Installs each version (both at once; each venv under its own lock) and returns its site-packages and interpreter. */
export async function synapseTrees<V extends string>(versions: readonly V[], cacheDir = TEST_CACHE_DIR): Promise<Record<V, PythonTree>> {
  const entries = await Promise.all(
    versions.map(async (version) => {
      await ensureSynapse({ version, cacheDir, packageName: SYNAPSE_PACKAGE });
      const tree = await installedTree(cacheDir, { version });
      if (!tree) throw new Error(`Synapse ${version} was installed into ${cacheDir} but its site-packages cannot be found`);
      return [version, tree] as const;
    }),
  );
  return Object.fromEntries(entries) as Record<V, PythonTree>;
}
