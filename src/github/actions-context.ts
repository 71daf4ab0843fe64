import { existsSync } from 'node:fs';
import { z } from 'zod';
import type { context as liveContext } from '@actions/github';
import { InputError } from '../util/errors.ts';
import { COMMIT_SHA, REPOSITORY } from '../inputs/patterns.ts';

/**
 * The Actions run context (event, ref, commit, run, repository, API URLs) as
 * `@actions/github` hydrates it from the runner's GITHUB_* variables and the event
 * payload file, parsed with zod: every field is external input.
 *
 * The context class reads process.env when it is constructed
 * (actions/toolkit packages/github/src/context.ts, @actions/github 9.1.1), so tests
 * pass a plain object of the same shape instead of changing the environment.
 */
export type ActionsContextSource = Pick<typeof liveContext, 'eventName' | 'sha' | 'ref' | 'runId' | 'runAttempt' | 'apiUrl' | 'serverUrl' | 'repo'>;

/** Where each context field comes from on the runner, for messages the user can act on. */
const ENV_OF = {
  eventName: 'GITHUB_EVENT_NAME',
  sha: 'GITHUB_SHA',
  ref: 'GITHUB_REF',
  runId: 'GITHUB_RUN_ID',
  runAttempt: 'GITHUB_RUN_ATTEMPT',
  repository: 'GITHUB_REPOSITORY',
  apiUrl: 'GITHUB_API_URL',
  serverUrl: 'GITHUB_SERVER_URL',
} as const;

// Fully qualified refs as the runner sets GITHUB_REF: refs/heads/<branch>, refs/tags/<tag>,
// refs/pull/<n>/merge. Names are checked where they are used (a tag as a version label).
const REF = /^refs\/([a-z]+)\/(\S{1,255})$/;

const contextSchema = z.object({
  eventName: z
    .string()
    .regex(/^[a-z_]{1,64}$/, 'expected an event name such as push or workflow_dispatch')
    .optional(),
  sha: z.string().regex(COMMIT_SHA, 'expected a commit SHA').optional(),
  ref: z.string().regex(REF, 'expected a full ref such as refs/tags/<tag> or refs/heads/<branch>').optional(),
  runId: z.number().int().positive('expected the numeric run id').optional(),
  runAttempt: z.number().int().min(1, 'expected a run attempt of 1 or more').optional(),
  repository: z.string().regex(REPOSITORY, 'expected owner/name').optional(),
  apiUrl: z.url({ protocol: /^https?$/ }),
  serverUrl: z.url({ protocol: /^https?$/ }),
});

export interface ActionsContext {
  eventName: string | undefined;
  sha: string | undefined;
  ref: string | undefined;
  /** From ref: `tag` for refs/tags/..., `branch` for refs/heads/... (as GITHUB_REF_TYPE). */
  refType: 'tag' | 'branch' | undefined;
  /** From ref: the tag or branch name (as GITHUB_REF_NAME). */
  refName: string | undefined;
  runId: string | undefined;
  runAttempt: number | undefined;
  /** owner/name */
  repository: string | undefined;
  apiUrl: string;
  serverUrl: string;
}

/** The context's values, with unset ones (empty strings, NaN numbers) as undefined. */
function snapshot(source: ActionsContextSource): Record<keyof typeof ENV_OF, unknown> {
  const text = (v: string | undefined) => (v === undefined || v === '' ? undefined : v);
  const number = (v: number) => (Number.isNaN(v) ? undefined : v);
  let repository: string | undefined;
  try {
    // The getter throws when neither GITHUB_REPOSITORY nor the payload names the repository.
    const { owner, repo } = source.repo;
    repository = `${owner}/${repo}`;
  } catch {
    repository = undefined;
  }
  return {
    eventName: text(source.eventName),
    sha: text(source.sha),
    ref: text(source.ref),
    runId: number(source.runId),
    runAttempt: number(source.runAttempt),
    repository,
    // An empty variable is unset for Actions; the toolkit only defaults undefined ones.
    apiUrl: text(source.apiUrl) ?? 'https://api.github.com',
    serverUrl: text(source.serverUrl) ?? 'https://github.com',
  };
}

export function parseActionsContext(source: ActionsContextSource): ActionsContext {
  const result = contextSchema.safeParse(snapshot(source));
  if (!result.success) {
    const lines = result.error.issues.map((i) => `env ${ENV_OF[i.path[0] as keyof typeof ENV_OF] ?? String(i.path[0])}: ${i.message}`);
    throw new InputError(`the GitHub Actions context is invalid:\n${lines.join('\n')}`, lines);
  }
  const c = result.data;
  const ref = c.ref ? REF.exec(c.ref) : null;
  const refType = ref?.[1] === 'tags' ? 'tag' : ref?.[1] === 'heads' ? 'branch' : undefined;
  return {
    eventName: c.eventName,
    sha: c.sha,
    ref: c.ref,
    refType,
    refName: refType ? ref?.[2] : undefined,
    runId: c.runId === undefined ? undefined : String(c.runId),
    runAttempt: c.runAttempt,
    repository: c.repository,
    apiUrl: c.apiUrl.replace(/\/+$/, ''),
    serverUrl: c.serverUrl.replace(/\/+$/, ''),
  };
}

/**
 * The context of this process, read now. `@actions/github` exports only the context it
 * built when first imported; a fresh one follows the environment as it is at the call
 * (the CLI also runs in-process, one command after another). Loaded on demand so the
 * commands that never talk to GitHub do not load its HTTP stack.
 */
export async function readActionsContext(): Promise<ActionsContext> {
  const eventPath = process.env.GITHUB_EVENT_PATH;
  // The toolkit prints a missing payload file to stdout, which would corrupt --json output.
  if (eventPath && !existsSync(eventPath)) throw new InputError(`env GITHUB_EVENT_PATH: ${eventPath} does not exist; unset it outside Actions`);
  // Both the import (the toolkit's own context) and a fresh context parse the payload file.
  const badPayload = (error: unknown) =>
    error instanceof SyntaxError ? new InputError(`env GITHUB_EVENT_PATH: ${eventPath} is not a JSON event payload (${error.message})`) : error;
  try {
    const github = await import('@actions/github');
    const Context = github.context.constructor as new () => ActionsContextSource;
    return parseActionsContext(new Context());
  } catch (error) {
    throw badPayload(error);
  }
}
