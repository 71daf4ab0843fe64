/**
 * Runs the GitHub API stand-in as its own process, for end-to-end runs of the workflows
 * with act: `npx tsx test/support/github-standin/serve.ts --state state.json --tag v1.2.0 ...`.
 * Prints `url=<base URL>` and `token=<token>` on stdout once listening (on 127.0.0.1), and
 * on SIGTERM/SIGINT writes the repository state (check runs, pulls, branches and their
 * files) to --state, then exits. The candidate tag (--candidate) gets its own commit.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { GitHubStandin } from './server.ts';

const { values } = parseArgs({
  options: {
    state: { type: 'string' },
    tag: { type: 'string', multiple: true, default: [] },
    candidate: { type: 'string' },
    token: { type: 'string', default: 'act-token-0123456789' },
    owner: { type: 'string', default: 'octo-org' },
    repo: { type: 'string', default: 'chat-server' },
  },
});
if (!values.state) throw new Error('--state FILE is required');

const standin = new GitHubStandin({
  owner: values.owner,
  repo: values.repo,
  tags: values.tag,
  tokens: { [values.token]: { permissions: { checks: 'write', contents: 'write', 'pull-requests': 'write' }, actions: true } },
});
if (values.candidate) standin.addTag(values.candidate, standin.commitOnDefaultBranch(`release ${values.candidate}`, { VERSION: `${values.candidate}\n` }));
await standin.start();

/** What tests assert on: the repository as GitHub would show it. */
function snapshot() {
  const branches = [...standin.refs.keys()].filter((r) => r.startsWith('refs/heads/')).map((r) => r.slice('refs/heads/'.length));
  return {
    checkRuns: standin.checkRuns,
    pulls: standin.pulls,
    branches: Object.fromEntries(branches.map((b) => [b, { head: standin.branchHead(b), files: Object.fromEntries([...standin.filesOnBranch(b)].map(([p, c]) => [p, { bytes: c.length, sha: standin.git.writeBlob(c) }])) }])),
    rejected: standin.rejected,
    unmatched: standin.unmatched,
    requests: standin.requests.length,
  };
}

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  writeFileSync(values.state as string, `${JSON.stringify(snapshot(), null, 2)}\n`);
  await standin.close();
  process.exit(0);
}
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
process.stdout.write(`url=${standin.url}\ntoken=${values.token}\n`);
