import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { GateConfig } from '../config/schema.ts';
import { resolveBench } from '../aws/presets.ts';
import { loadTestNgProblems } from '../engine/loadtest-ng/config.ts';
import { chatServerOf } from '../chat-servers/registry.ts';
import { loadTestNgUserProblems, partitionUsers, perAgentMax } from '../bench/aws/agent-users.ts';
import { snapshotStoreFromEnv } from '../grafana/snapshot.ts';
import { InputError } from '../util/errors.ts';

/**
 * What a gate takes from outside its config (the users file, the environment), checked as
 * the run would check it, before any bench exists: a run on the AWS bench otherwise finds
 * a missing users file or Grafana token only after provisioning, or after its tests.
 */

export interface RunInputs {
  /** The users file as `--users-file` would name it (already resolved), if any. */
  usersFile?: string;
  env: NodeJS.ProcessEnv;
}

export interface RunInputsReport {
  problems: string[];
  /** What was checked, for the `ok` line. */
  notes: string[];
}

/** The environment variable that names the users file where no flag does (the workflows' variable of the same name). */
export const USERS_FILE_ENV = 'LOADGATE_USERS_FILE';
const USERS_FILE_FIELD = `--users-file / ${USERS_FILE_ENV}`;

const USERS_FILE_WHERE =
  `pass --users-file <file> (or set ${USERS_FILE_ENV}); in the workflow, the bench environment's variable ${USERS_FILE_ENV}, ` +
  'a path in the repository that the run jobs pass as run\'s users-file (docs/aws.md, "Setting the bench up in an AWS account", steps 5 and 7)';

/**
 * The users file a run on the AWS bench logs its simulated users in from: named, readable,
 * in the engine's format, and holding an account for every user of the largest test on
 * each agent (src/bench/aws/load-agents.ts refuses the same at run time).
 */
async function usersFileProblems(config: GateConfig, file: string | undefined, agents: number | undefined, notes: string[]): Promise<string[]> {
  const dataset = config.bench.aws.database?.dumpUrl ?? config.bench.aws.database?.snapshotIdentifier;
  if (!file) {
    const what = dataset ? `the dataset's users (${dataset})` : "the dataset's users";
    return [
      `${USERS_FILE_FIELD}: no users file named, but a run on the AWS bench logs its simulated users in as ${what}, one "login password" per line (run's --users-file, refused at run time without it); ${USERS_FILE_WHERE}`,
    ];
  }
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return [`${USERS_FILE_FIELD}: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; ${USERS_FILE_WHERE}`];
  }
  if (config.engine.kind === 'load-test-ng') {
    const problems = loadTestNgUserProblems(text);
    if (problems.length) {
      const shown = problems.slice(0, 5).concat(problems.length > 5 ? [`and ${problems.length - 5} more`] : []);
      return [
        `${USERS_FILE_FIELD}: ${basename(file)} is not a load-test-ng users file ("email password" per line, split on one space; api/agent.go getUserCredentials): ${shown.join('; ')}`,
      ];
    }
  }
  return agents === undefined ? [] : sliceProblems(config, file, text, agents, notes);
}

/** Each agent's slice of the file must cover the most users a test puts on that agent (load-agents.ts checkSlices). */
function sliceProblems(config: GateConfig, file: string, text: string, agentsPerSide: number, notes: string[]): string[] {
  const slices = partitionUsers(text, agentsPerSide).map((s) => s.length);
  const total = slices.reduce((a, b) => a + b, 0);
  const smallest = Math.min(...slices);
  const problems: string[] = [];
  for (const test of config.tests) {
    const perAgent = perAgentMax(test.type === 'bounded' ? test.users : test.maxUsers, agentsPerSide);
    if (smallest < perAgent) {
      problems.push(
        `${USERS_FILE_FIELD}: ${basename(file)} holds ${total} users, split over ${agentsPerSide} agent(s)${config.mode === 'duet' ? ' per side' : ''} that leaves ${smallest} for some agent, but test "${test.name}" runs up to ${perAgent} per agent; ` +
          "each simulated user needs its own account: add the dataset's users to the file, or lower the test's users",
      );
    }
  }
  if (!problems.length) notes.push(`users file ${basename(file)} (${total} users)`);
  return problems;
}

/** The agents per side of the AWS bench, or why the bench cannot be resolved. */
function agentsPerSide(config: GateConfig, problems: string[]): number | undefined {
  try {
    const bench = resolveBench(config.bench.aws, config.tests, config.mode);
    return bench.agentCount / (bench.agentGroups ?? 1);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    problems.push(error.message);
    return undefined;
  }
}

/** The target's settings, as the run turns them into overrides before its first test. */
function settingsProblems(config: GateConfig): string[] {
  try {
    chatServerOf(config.target.system).baseOverrides(config.target);
    return [];
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    return error.problems.length ? [...error.problems] : [error.message];
  }
}

/**
 * What a run of `config` would refuse beyond the config's own schema: the target's
 * settings, and on the AWS bench the engine's own rules (load-test-ng's, checked at each
 * test's start), the users file and the Grafana that keeps the snapshots. The local bench
 * generates its own users and keeps its snapshots where they are.
 */
export async function runInputProblems(config: GateConfig, inputs: RunInputs): Promise<RunInputsReport> {
  const notes: string[] = [];
  const problems = settingsProblems(config);
  if (config.bench.kind !== 'aws') return { problems, notes };
  const agents = agentsPerSide(config, problems);
  if (agents !== undefined && config.engine.kind === 'load-test-ng') problems.push(...loadTestNgProblems(config, agents));
  problems.push(...(await usersFileProblems(config, inputs.usersFile, agents, notes)));
  try {
    const store = snapshotStoreFromEnv(inputs.env);
    if (store.kind === 'grafana') notes.push(`snapshots kept on ${store.client.baseUrl}`);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    problems.push(error.message);
  }
  return { problems, notes };
}
