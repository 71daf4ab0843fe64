import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { LocalDataset, LocalInstall, LocalServer } from '../chat-server.ts';
import { longestRangeSec } from '../../metrics/promql.ts';
import { DATABASE_NAME } from './config.ts';
import { buildDataset, datasetKey, findDataset, restoreDataset, SEARCH_WORDS, type DatasetArtifacts } from './dataset.ts';
import { SYNAPSE_PACKAGE } from './defaults.ts';
import { ensureSynapse, installKey, type SynapseInstall } from './install.ts';
import { RATE_WINDOW } from './queries.ts';
import { startSynapse } from './server.ts';

/**
 * Synapse on the local bench: a virtualenv per version (or build) from PyPI, a dataset
 * seeded through its own API with the older version and restored before every run, and
 * one homeserver per slot on the ports the bench reserved.
 */

/** The bench hands back the datasets this module made: their files are where artifactsIn put them. */
function artifacts(dataset: LocalDataset): DatasetArtifacts {
  if (!('dumpFile' in dataset)) throw new Error(`${dataset.dir} is not a Synapse dataset`);
  return dataset as DatasetArtifacts;
}

export const synapseLocal: LocalServer = {
  installKey,
  async install(side, o) {
    const local = side.build?.kind === 'wheel' || side.build?.kind === 'source' ? side.build : undefined;
    const install = await ensureSynapse({
      version: side.version,
      ...(local ? { build: local } : {}),
      cacheDir: o.cacheDir,
      packageName: o.target.package ?? SYNAPSE_PACKAGE,
      onStep: o.onStep,
      logFile: o.logFile,
    });
    return { key: installKey(side), version: install.version, dir: install.venvDir, python: install.python };
  },
  datasetKey: (size, install, overrides) => datasetKey(size, install.key, overrides),
  findDataset,
  buildDataset: (o) =>
    buildDataset({
      supervisor: o.supervisor,
      bench: o.host,
      install: synapseInstall(o.install),
      cacheDir: o.cacheDir,
      size: o.size,
      overrides: o.overrides,
      workDir: o.workDir,
      logFile: o.logFile,
      onProgress: o.onProgress,
    }),
  async start(o) {
    const signingKey = join(o.dir, 'signing.key');
    o.onStep(`restoring the dataset into a fresh "${DATABASE_NAME}" database`);
    await restoreDataset(o.host, artifacts(o.dataset), signingKey);
    const { postgres, ports, nginx } = o.host;
    return startSynapse({
      supervisor: o.supervisor,
      install: synapseInstall(o.install),
      dir: join(o.dir, 'synapse'),
      logFile: o.logFile,
      cpus: o.cpus,
      config: {
        clientPort: ports.serverClient,
        metricsPort: ports.serverMetrics,
        publicBaseUrl: nginx.url,
        database: { host: postgres.host, port: postgres.port, user: postgres.user, password: postgres.password, name: DATABASE_NAME },
        signingKeyPath: signingKey,
        // Its own per start: nothing but the seeder registers users, and it has its own.
        registrationSharedSecret: randomBytes(24).toString('hex'),
        overrides: o.overrides,
      },
    });
  },
  metrics: { path: '/_synapse/metrics', rateWindowSec: longestRangeSec([`[${RATE_WINDOW}]`]) },
  engineEnv: () => ({ LOADGATE_SEARCH_TERMS: SEARCH_WORDS.join(',') }),
  notes: [
    'Store p99 is the p99 of single SQL statements (synapse_storage_query_time); per-method store p99 is the 99th percentile of the method\'s 15 s means, as Synapse exports no per-transaction histogram. "Heap in use" is the Synapse process\'s resident memory and "threads" its OS threads.',
  ],
};

/** The install as this module made it (install() above): its venv. */
function synapseInstall(install: LocalInstall): SynapseInstall {
  return { version: install.version, venvDir: install.dir, python: install.python ?? join(install.dir, 'bin', 'python') };
}
