import { readFile, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { loadGateConfig } from '../../config/load.ts';
import { GitHubRepoApi } from '../../github/api.ts';
import { createGitHubClient } from '../../github/client.ts';
import { readActionsContext } from '../../github/actions-context.ts';
import { readGitHubEnv } from '../../github/env.ts';
import { emitOutputs } from '../../github/outputs.ts';
import { pickBaseline } from '../../inputs/pick-baseline.ts';
import { validateConfigPath } from '../../inputs/validate.ts';
import { InputError } from '../../util/errors.ts';
import { defineCommand, flag } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

const pickBaselineCommand = defineCommand({
  command: 'pick-baseline',
  about: `Picks the newest stable release tag below the candidate in semver order (pre-releases
skipped) and says why. Tags come from --tags-file (one per line) or from the GitHub API
(GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL; needs contents: read).`,
  flags: {
    candidate: flag.required('TAG', z.string({ error: 'required: the candidate tag' }), 'The candidate tag'),
    'tags-file': flag.optional('FILE', z.string().min(1), 'Tags, one per line (default: from the GitHub API)'),
    config: flag.optional('FILE', z.string(), 'Gate config whose target.versionPattern tags must match'),
    'write-choice': flag.optional('FILE', z.string().min(1), 'Write the choice as JSON (for publish --baseline-choice)'),
    'github-output': flag.toggle('Also append baseline=... to $GITHUB_OUTPUT'),
    json: flag.toggle('Print the choice as JSON instead of key=value lines'),
  },
});

export const usage = pickBaselineCommand.usage;

/** Most tags read from a file; a release history is far shorter. */
const MAX_TAGS = 10_000;

async function tagsFromFile(path: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new InputError(`--tags-file: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const tags = text
    .split('\n')
    .map((t) => t.trim())
    .filter(Boolean);
  if (tags.length > MAX_TAGS) throw new InputError(`--tags-file: ${tags.length} tags; at most ${MAX_TAGS}`);
  return tags;
}

async function tagsFromGitHub(log: (line: string) => void): Promise<string[]> {
  const env = readGitHubEnv(await readActionsContext());
  const api = new GitHubRepoApi(createGitHubClient({ token: env.token, baseUrl: env.apiUrl, log }), env.owner, env.repo, [env.token]);
  return api.listTagNames();
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = pickBaselineCommand.parse(argv);
  const config = flags.config ? await loadGateConfig(validateConfigPath(flags.config)) : undefined;
  const tags = flags['tags-file'] ? await tagsFromFile(flags['tags-file']) : await tagsFromGitHub((l) => io.err(l));
  const choice = pickBaseline(flags.candidate, tags, config?.target.versionPattern);
  if (flags['write-choice']) await writeFile(flags['write-choice'], `${JSON.stringify(choice, null, 2)}\n`);
  if (flags.json) {
    io.out(JSON.stringify(choice));
    if (flags['github-output']) emitOutputs({ baseline: choice.baseline }, { out: () => {}, err: () => {} }, process.env.GITHUB_OUTPUT);
  } else {
    io.err(`baseline: ${choice.reason}`);
    emitOutputs({ baseline: choice.baseline, 'baseline-reason': choice.reason }, io, flags['github-output'] ? process.env.GITHUB_OUTPUT : undefined);
  }
  return 0;
}
