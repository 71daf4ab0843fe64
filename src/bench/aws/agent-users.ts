import type { UserControl } from '../../coordinator/index.ts';
import { K6Api } from '../../engine/k6/api.ts';
import type { AgentClient } from '../../engine/loadtest-ng/agent-client.ts';

/**
 * The coordinator drives one number, the total users; on the AWS bench they run on
 * several agents. `splitUsers` spreads a total evenly (agents differ by at most one
 * user), and MultiAgentUsers applies the split to every agent in parallel.
 */

/** One agent's share of the users. */
export interface AgentUsers {
  /** agent0, agent1, ... for messages. */
  readonly name: string;
  /** Most users this agent can run (k6's initialised VUs). */
  readonly maxUsers: number;
  setUsers(n: number): Promise<void>;
  activeUsers(): Promise<number>;
}

/** `total` users over `agents` agents: the first `total % agents` get one more. */
export function splitUsers(total: number, agents: number): number[] {
  if (!Number.isInteger(total) || total < 0) throw new RangeError(`users must be a whole number >= 0, got ${total}`);
  if (!Number.isInteger(agents) || agents < 1) throw new RangeError(`agents must be a whole number >= 1, got ${agents}`);
  const base = Math.floor(total / agents);
  const extra = total % agents;
  return Array.from({ length: agents }, (_, i) => base + (i < extra ? 1 : 0));
}

/**
 * The users file split over the agents, one slice each, so no two agents log in the same
 * account: line i goes to agent i mod n, as load-test-ng's own deployer splits UsersFilePath
 * (deployment/terraform/agent.go, v1.29.0-v1.33.0-rc2, "so that the logged in users don't
 * clash"). The k6 scenario takes its k-th user from line k of the slice; load-test-ng
 * numbers users differently (loadTestNgUsersFile). Blank lines are not users.
 */
export function partitionUsers(text: string, agents: number): string[][] {
  if (!Number.isInteger(agents) || agents < 1) throw new RangeError(`agents must be a whole number >= 1, got ${agents}`);
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== '');
  const slices: string[][] = Array.from({ length: agents }, () => []);
  lines.forEach((line, i) => slices[i % agents]!.push(line));
  return slices;
}

/**
 * Why load-test-ng would refuse or mis-read each line of a users file, by line number.
 * api/agent.go getUserCredentials splits a line on single spaces and takes the first two
 * fields, email and password (a line without a space fails the agent's creation; anything
 * after a second space is dropped, so a password holding a space would never log in); an
 * optional `openid:`, `saml:` or `mattermost:` prefix names the login type; the email must
 * hold exactly one `@`. Mattermost then logs in with that email (userentity).
 */
export function loadTestNgUserProblems(text: string): string[] {
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    const where = `line ${i + 1}`;
    const fields = line.split(' ');
    if (fields.length < 2) return void problems.push(`${where}: no space between the email and the password`);
    if (fields.length > 2)
      return void problems.push(`${where}: more than one space; load-test-ng reads "email password" split on single spaces and would drop the rest`);
    let email = fields[0] as string;
    if (email.includes(':')) {
      const parts = email.split(':');
      if (parts.length !== 2 || !['openid', 'saml', 'mattermost'].includes(parts[0] as string))
        return void problems.push(`${where}: "${parts[0]}:" is not a login type load-test-ng knows (openid, saml, mattermost)`);
      email = parts[1] as string;
    }
    if (email.split('@').length !== 2) problems.push(`${where}: "${email}" is not an email address; load-test-ng logs users in by email`);
  });
  return problems;
}

/**
 * One agent's users file as load-test-ng reads it. loadtest/loadtest.go addUser numbers a
 * new user `activeUsers + 1` (1, 2, ...), and api/agent.go NewControllerWrapper's factory
 * uses creds[id] only while id < len(creds): line 0 is never a new user, and the user
 * numbered len(creds) falls back to a generated account (<agent id>-<n>@example.com, signed
 * up anew). So line 0 repeats the slice's first account (read only for an extra session of
 * an existing user, AvgSessionsPerUser > 1) and user k is the slice's k-th line: a slice
 * of n accounts runs n users, each on its own account.
 */
export function loadTestNgUsersFile(slice: readonly string[]): string {
  return slice.length ? `${[slice[0], ...slice].join('\n')}\n` : '';
}

/** Each agent's maximum when the whole test needs `maxUsers`: the split's largest share. */
export function perAgentMax(maxUsers: number, agents: number): number {
  return Math.ceil(maxUsers / agents);
}

export class MultiAgentUsers implements UserControl {
  constructor(private readonly agents: readonly AgentUsers[]) {
    if (agents.length === 0) throw new RangeError('at least one agent is needed');
  }

  get maxUsers(): number {
    return this.agents.reduce((n, a) => n + a.maxUsers, 0);
  }

  async setUsers(n: number): Promise<void> {
    if (n > this.maxUsers) throw new RangeError(`cannot run ${n} users on ${this.agents.length} agent(s) with ${this.maxUsers} users at most`);
    const shares = splitUsers(n, this.agents.length);
    const outcomes = await Promise.allSettled(this.agents.map((agent, i) => agent.setUsers(shares[i] as number)));
    const failed = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [`${this.agents[i]?.name}: ${(o.reason as Error).message}`] : []));
    if (failed.length) throw new Error(`setting ${n} users failed on ${failed.length} agent(s): ${failed.join('; ')}`);
  }

  async activeUsers(): Promise<number> {
    const counts = await Promise.all(this.agents.map((a) => a.activeUsers()));
    return counts.reduce((n, c) => n + c, 0);
  }
}

/** An agent running k6's externally-controlled executor, driven through its REST API. */
export class K6AgentUsers implements AgentUsers {
  constructor(
    readonly name: string,
    private readonly api: K6Api,
    readonly maxUsers: number,
  ) {}

  async setUsers(n: number): Promise<void> {
    const status = await this.api.setVUs(n);
    if (status.vus !== n) throw new Error(`k6 answered ${status.vus} active users after being asked for ${n}`);
  }

  async activeUsers(): Promise<number> {
    return (await this.api.status()).vus;
  }
}

/**
 * A load-test-ng agent: it only adds and removes users, so the target is reached from
 * its current count (at most 32767 per call, the API's limit). A partial change (the
 * agent's own MaxActiveUsers, a failed login) is an error naming the agent.
 */
export class LoadTestNgAgentUsers implements AgentUsers {
  constructor(
    readonly name: string,
    private readonly agent: AgentClient,
    readonly maxUsers: number,
  ) {}

  async setUsers(n: number): Promise<void> {
    let current = (await this.agent.status()).NumUsers;
    while (current !== n) {
      const amount = Math.min(Math.abs(n - current), 32767);
      const change = n > current ? await this.agent.addUsers(amount) : await this.agent.removeUsers(amount);
      if (change.error || change.changed === 0)
        throw new Error(`load-test-ng agent ${this.agent.id} stopped at ${change.status.NumUsers} users: ${change.error ?? 'no user changed'}`);
      current = change.status.NumUsers;
    }
  }

  async activeUsers(): Promise<number> {
    return (await this.agent.status()).NumUsers;
  }
}
