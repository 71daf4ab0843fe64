import { z } from 'zod';
import type { ClientConfig, ClientLicense } from '@mattermost/types/config';
import type { UserProfile, UsersStats } from '@mattermost/types/users';
import { InputError } from '../../util/errors.ts';
import { LOADTEST_NG_PASSWORD, SEED_DUMP_ADMIN } from './dataset-accounts.ts';

/**
 * Before any test is spent, the dataset's accounts are tried on the first Mattermost that
 * answers: the admin load-test-ng's agents log in (api/agent.go createCustomEmoji fails every
 * agent without it), and the users file's first account. A wrong guess otherwise passes
 * validate and the preflight and fails only once the tests start, after provisioning and
 * the dump load. The app nodes are private to the VPC, so a script on app0 makes the
 * requests (curl, jq) and prints what Mattermost answered; the rules are here.
 *
 * Mattermost's API (server/channels/api4/user.go): POST /api/v4/users/login with
 * `login_id` and `password` answers the user (roles included) and its session in the
 * `Token` header; every refusal but a few (inactive, locked out, unverified, bot) is masked
 * as 401 api.user.login.invalid_credentials_email_username, so an unknown account and a
 * wrong password look alike. An admin's session tells them apart: GET
 * /api/v4/users/email/{email} answers the account or 404. GET /api/v4/users/stats is the
 * count of active users (`UsersStats`), GET /api/v4/license/client?format=old the licence's
 * seats (`Users`), and GET /api/v4/config/client?format=old whether sign-up is open, all
 * typed with @mattermost/types.
 */

export interface DatasetLogin {
  engine: 'k6' | 'load-test-ng';
  /** The admin-email / admin-password secrets (load-test-ng only). Never printed. */
  admin?: { email: string; password: string };
  /** The users file's text and its name for messages. */
  usersText: string;
  usersFile: string;
  /** app0 and its slot, for messages. */
  where: string;
}

/** What the script sends Mattermost; its passwords never leave the node's request bodies. */
interface Credentials {
  admin: { login_id: string; password: string } | null;
  user: { login_id: string; password: string } | null;
  /** Where the user's account is looked up with the admin's session when its login is refused. */
  lookup_path: string | null;
}

/** The users file's first account (agent0's first user), as the engine reads the file. */
export function firstAccount(text: string): { login: string; password: string; via?: string } | undefined {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[')) {
    // k6's JSON form: [{"username"|"email"|"login", "password"}, ...].
    const parsed = z
      .array(z.object({ login: z.string().optional(), username: z.string().optional(), email: z.string().optional(), password: z.string() }))
      .safeParse(JSON.parse(trimmed));
    const first = parsed.success ? parsed.data[0] : undefined;
    const login = first?.login ?? first?.username ?? first?.email;
    return first && login ? { login, password: first.password } : undefined;
  }
  const line = text.split(/\r?\n/).find((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));
  if (!line) return undefined;
  const [head = '', ...rest] = line.split(' ');
  // load-test-ng reads "email password" on single spaces; a login type may prefix the email.
  const typed = /^(openid|saml|mattermost|ldap):(.*)$/.exec(head);
  return { login: typed ? (typed[2] as string) : head, password: rest.join(' '), ...(typed ? { via: typed[1] as string } : {}) };
}

const b64 = (text: string): string => Buffer.from(text).toString('base64');

/**
 * The script app0 runs: the requests above against its own Mattermost on `port` (the
 * loopback bench relocates it with LOADGATE_MATTERMOST_URL[_port], as the licence check
 * does), printing one JSON object of statuses and answers. Each session it opens is
 * logged out again.
 */
function datasetLoginScript(c: Credentials, port = 8065): string {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`not a port: ${port}`);
  const relocate = `LOADGATE_MATTERMOST_URL${port === 8065 ? '' : `_${port}`}`;
  return `set -euo pipefail
base="\${${relocate}:-http://127.0.0.1:${port}}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%s' '${b64(JSON.stringify(c))}' | base64 -d > "$work/in.json"
call() { # NAME METHOD PATH [BODY_FILE] [TOKEN]: status, headers and body in $work/NAME.*
  local args=(-sS --max-time 30 -o "$work/$1.body" -D "$work/$1.headers" -w '%{http_code}' -X "$2" -H 'Content-Type: application/json')
  if [ -n "\${4:-}" ]; then args+=(--data-binary "@$4"); fi
  if [ -n "\${5:-}" ]; then args+=(-H "Authorization: Bearer $5"); fi
  curl "\${args[@]}" "$base$3" > "$work/$1.status" 2> "$work/$1.error" || echo 000 > "$work/$1.status"
  touch "$work/$1.body"
}
token() { tr -d '\\r' < "$work/$1.headers" | sed -n 's/^[Tt]oken: //p' | head -n 1; }
call config GET '/api/v4/config/client?format=old'
call licence GET '/api/v4/license/client?format=old'
admin=''
if [ "$(jq -r '.admin != null' "$work/in.json")" = true ]; then
  jq '.admin' "$work/in.json" > "$work/admin.json"
  call adminLogin POST /api/v4/users/login "$work/admin.json"
  rm -f "$work/admin.json"
  admin=$(token adminLogin)
fi
if [ "$(jq -r '.user != null' "$work/in.json")" = true ]; then
  jq '.user' "$work/in.json" > "$work/user.json"
  call userLogin POST /api/v4/users/login "$work/user.json"
  rm -f "$work/user.json"
  user=$(token userLogin)
  if [ -n "$user" ]; then call userLogout POST /api/v4/users/logout '' "$user"; fi
fi
lookup=$(jq -r '.lookup_path // ""' "$work/in.json")
rm -f "$work/in.json"
if [ -n "$admin" ]; then
  call stats GET /api/v4/users/stats '' "$admin"
  call licence GET '/api/v4/license/client?format=old' '' "$admin"
  if [ -n "$lookup" ] && [ -f "$work/userLogin.status" ] && [ "$(cat "$work/userLogin.status")" != 200 ]; then call lookup GET "$lookup" '' "$admin"; fi
  call adminLogout POST /api/v4/users/logout '' "$admin"
fi
for name in config licence adminLogin userLogin stats lookup; do
  if [ -f "$work/$name.status" ]; then
    jq -n --arg name "$name" --arg status "$(cat "$work/$name.status")" --rawfile body "$work/$name.body" --rawfile error "$work/$name.error" \\
      '{($name): {status: ($status | tonumber), body: ($body | try fromjson catch null), error: $error}}'
  fi
done | jq -s 'add // {}'
`;
}

const answer = z.object({ status: z.number().int(), body: z.unknown(), error: z.string() });
const reportSchema = z.object({
  config: answer.optional(),
  licence: answer.optional(),
  adminLogin: answer.optional(),
  userLogin: answer.optional(),
  stats: answer.optional(),
  lookup: answer.optional(),
});
type Report = z.output<typeof reportSchema>;
type Answer = z.output<typeof answer>;

// The fields read from each answer, typed as @mattermost/types declares them.
const profileSchema = z.object({ roles: z.string() }) satisfies z.ZodType<Pick<UserProfile, 'roles'>>;
const statsSchema = z.object({ total_users_count: z.number() }) satisfies z.ZodType<UsersStats>;
const licenceSchema = z.record(z.string(), z.string()) satisfies z.ZodType<ClientLicense>;
const configSchema = z.object({ EnableOpenServer: z.string(), EnableUserCreation: z.string(), EnableSignUpWithEmail: z.string() }) satisfies z.ZodType<
  Pick<ClientConfig, 'EnableOpenServer' | 'EnableUserCreation' | 'EnableSignUpWithEmail'>
>;
const errorSchema = z.object({ id: z.string().optional(), message: z.string().optional() });

/** "HTTP 401, api.user.login.invalid_credentials_email_username" */
function refusal(a: Answer): string {
  if (a.status === 0) return `no answer: ${a.error.trim() || 'curl failed'}`;
  const e = errorSchema.safeParse(a.body);
  const id = e.success ? (e.data.id ?? e.data.message) : undefined;
  return `HTTP ${a.status}${id ? `, ${id}` : ''}`;
}

const ADMIN_FIX =
  "set the repository secrets LOADGATE_ADMIN_EMAIL and LOADGATE_ADMIN_PASSWORD (the reusable workflow's admin-email and admin-password; locally, the environment variables of the same names) to a system admin of the dataset: " +
  `load-test-ng's 12M-post dump's is ${SEED_DUMP_ADMIN.email} (docs/mattermost.md, "The dataset's accounts")`;

function usersFix(file: string): string {
  return `fix the users file ${file} (LOADGATE_USERS_FILE, run's --users-file): \`loadgate mattermost-users\` writes load-test-ng's own accounts (password ${LOADTEST_NG_PASSWORD}), which its agents sign up where the dataset lacks them (docs/mattermost.md, "The dataset's accounts")`;
}

function adminProblems(report: Report, l: DatasetLogin): string[] {
  if (!l.admin) return [];
  const login = report.adminLogin;
  if (!login) throw new Error('the login check printed no admin login');
  if (login.status === 0) throw new Error(`cannot reach Mattermost on ${l.where} to log in the admin: ${refusal(login)}`);
  if (login.status !== 200)
    return [
      `admin-email: Mattermost on ${l.where} refused to log in ${l.admin.email} (${refusal(login)}), the system admin load-test-ng's agents log in as they start; ${ADMIN_FIX}`,
    ];
  const profile = profileSchema.safeParse(login.body);
  const roles = profile.success ? profile.data.roles : '';
  if (!roles.split(' ').includes('system_admin')) {
    return [`admin-email: ${l.admin.email} logs in on ${l.where} but is not a system admin (roles "${roles}"); ${ADMIN_FIX}`];
  }
  return [];
}

/** What a refused user means: the account is there with another password, missing, or unknown (no admin session to ask). */
function refusedUser(report: Report, l: DatasetLogin, login: string, notes: string[]): string[] {
  const answer = report.userLogin as Answer;
  const lookup = report.lookup;
  const exists = lookup?.status === 200 ? true : lookup?.status === 404 ? false : undefined;
  const refused = `Mattermost on ${l.where} refused ${login}, the users file's first account (${refusal(answer)})`;
  if (answer.status !== 401) return [`users file ${l.usersFile}: ${refused}; ${usersFix(l.usersFile)}`];
  if (exists === true) {
    return [
      `users file ${l.usersFile}: ${refused}, and the dataset has that account, so the file's password is not its password${l.engine === 'load-test-ng' ? ' (load-test-ng would retry that login for the whole test)' : ''}; ${usersFix(l.usersFile)}`,
    ];
  }
  if (l.engine === 'k6') {
    const why = exists === false ? 'the dataset has no such account' : 'either the dataset has no such account or the password differs';
    return [
      `users file ${l.usersFile}: ${refused}: ${why}, and engine.kind k6 only logs in (it signs nobody up): list the dataset's own accounts with their passwords, or run engine.kind load-test-ng, whose agents sign up the accounts a dataset lacks`,
    ];
  }
  return signUpProblems(report, l, login, exists, notes);
}

/** load-test-ng signs a missing account up (simulcontroller loginOrSignUp), if the server lets it. */
function signUpProblems(report: Report, l: DatasetLogin, login: string, exists: boolean | undefined, notes: string[]): string[] {
  const config = configSchema.safeParse(report.config?.body);
  const closed = config.success ? (['EnableOpenServer', 'EnableUserCreation', 'EnableSignUpWithEmail'] as const).filter((k) => config.data[k] !== 'true') : [];
  if (closed.length) {
    return [
      `users file ${l.usersFile}: the dataset has no account ${login} and this server does not let load-test-ng sign it up (${closed.map((k) => `${k} "${config.success ? config.data[k] : ''}"`).join(', ')}; TeamSettings.EnableOpenServer, TeamSettings.EnableUserCreation, EmailSettings.EnableSignUpWithEmail): remove those overrides from target.settings, or ${usersFix(l.usersFile)}`,
    ];
  }
  notes.push(
    `${exists === false ? `the dataset has no account ${login}` : `${login} did not log in`}: load-test-ng signs up the file's accounts the dataset lacks at their first login in every run, as load-test-ng's own comparisons do`,
  );
  return [];
}

function userProblems(report: Report, l: DatasetLogin, notes: string[]): string[] {
  const first = firstAccount(l.usersText);
  if (!first) return [`users file ${l.usersFile}: no account in it; ${usersFix(l.usersFile)}`];
  if (first.via && first.via !== 'mattermost') {
    notes.push(`the users file's first account logs in through ${first.via}, which a password login cannot try`);
    return [];
  }
  const answer = report.userLogin;
  if (!answer) throw new Error('the login check printed no user login');
  if (answer.status === 0) throw new Error(`cannot reach Mattermost on ${l.where} to log in ${first.login}: ${refusal(answer)}`);
  if (answer.status === 200) return [];
  return refusedUser(report, l, first.login, notes);
}

/** The dataset's users against the licence's seats: a seat-enforcing licence stops sign-ups at its count. */
function licenceNotes(report: Report, l: DatasetLogin, notes: string[]): void {
  const stats = statsSchema.safeParse(report.stats?.body);
  const licence = licenceSchema.safeParse(report.licence?.body);
  const seats = licence.success && licence.data.Users !== undefined ? Number(licence.data.Users) : undefined;
  if (!stats.success) return;
  const accounts = l.usersText.split(/\r?\n/).filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#')).length;
  const count = stats.data.total_users_count;
  notes.push(`the dataset holds ${count} active users${seats === undefined ? '' : `; the licence ${seats} seats`}`);
  if (seats !== undefined && seats < count + accounts) {
    notes.push(
      `a licence that enforces its seats (IsSeatCountEnforced) stops sign-ups at ${seats}, short of the dataset's ${count} users and the users file's ${accounts} accounts (${count + accounts}); use one for at least that many users if load-test-ng signs accounts up`,
    );
  }
}

/**
 * Judges what app0 answered. Returns notes for the progress log (the dataset's user count,
 * the sign-ups); a refused admin or user is an InputError naming the secret or the users
 * file and the fix, and stops the gate before its first test.
 */
function judgeDatasetLogin(stdout: string, l: DatasetLogin): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    throw new Error(`the login check on ${l.where} printed something other than JSON: ${stdout.slice(0, 200)}`);
  }
  const report = reportSchema.parse(parsed);
  const notes: string[] = [];
  const problems = [...adminProblems(report, l), ...userProblems(report, l, notes)];
  if (problems.length) throw new InputError(problems.join('\n'), problems);
  licenceNotes(report, l, notes);
  return notes;
}

/** The credentials the script sends, from the inputs. */
function datasetLoginCredentials(l: DatasetLogin): Credentials {
  const first = firstAccount(l.usersText);
  const user = first && (!first.via || first.via === 'mattermost') ? { login_id: first.login, password: first.password } : null;
  return {
    admin: l.admin ? { login_id: l.admin.email, password: l.admin.password } : null,
    user,
    // As Client4.getUserByEmail asks: the address in the path, its "@" as it is.
    lookup_path: user && l.admin && user.login_id.includes('@') ? `/api/v4/users/email/${encodeURIComponent(user.login_id).replace(/%40/g, '@')}` : null,
  };
}

/**
 * Runs the check through `run` (the bench's way of running a script on app0, returning its
 * stdout) and judges the answer.
 */
export async function checkDatasetLogin(l: DatasetLogin, port: number, run: (script: string) => Promise<string>): Promise<string[]> {
  return judgeDatasetLogin(await run(datasetLoginScript(datasetLoginCredentials(l), port)), l);
}

/**
 * The check once per slot of a gate: the first run's call runs it (after its Mattermost
 * started), later calls return at once. A failure that is not the accounts' (app0 did not
 * answer) is tried again by the next run; the notes come once.
 */
export function datasetLoginOnce(inputs: () => Promise<DatasetLogin>, port: number, run: (script: string) => Promise<string>): () => Promise<string[]> {
  let done: Promise<string[]> | undefined;
  let told = false;
  return async () => {
    done ??= (async () => checkDatasetLogin(await inputs(), port, run))();
    try {
      const notes = await done;
      if (told) return [];
      told = true;
      return notes;
    } catch (error) {
      if (!(error instanceof InputError)) done = undefined;
      throw error;
    }
  };
}
