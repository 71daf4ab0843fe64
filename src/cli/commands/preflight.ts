import { z } from 'zod';
import { emitOutputs } from '../../github/outputs.ts';
import { loadGateConfigInput } from '../../inputs/gate-config.ts';
import { preflightMissing, preflightProblem } from '../../inputs/preflight.ts';
import { validateConfigPath } from '../../inputs/validate.ts';
import { BENCH_KINDS } from '../../inputs/patterns.ts';
import { InputError } from '../../util/errors.ts';
import { defineCommand, flag } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

/** Names as the workflow lists them: the reusable workflow's secrets, the LOADGATE_* variables. */
const names = (pattern: RegExp, what: string) =>
  z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(pattern, `expected ${what}, comma-separated`)).max(40));

const preflightCommand = defineCommand({
  command: 'preflight',
  about: `Checks, before anything is provisioned, that every secret and variable the gate
config needs on its bench is set: on the AWS bench the IAM role, the Terraform state
bucket, the users file (which must exist in the checkout), the Mattermost licence for a
Mattermost target, load-test-ng's admin login for a load-test-ng gate, and the Grafana
token when a Grafana is named to keep the snapshots. Names each one missing, why and where
to set it, and exits 3 (with --github-output, also as the step output problem); the local
bench needs none. It is told which are set, never their values.`,
  flags: {
    config: flag.required('FILE', z.string({ error: 'required: the gate config' }), 'Gate config'),
    bench: flag.optional('local|aws', z.enum(BENCH_KINDS), "Bench (default: the config's bench.kind)"),
    secrets: flag.withDefault(
      'LIST',
      names(/^[a-z][a-z0-9-]{0,62}$/, "the reusable workflow's secret names"),
      '',
      'The secrets that are set (names, not values), comma-separated',
    ),
    variables: flag.withDefault('LIST', names(/^LOADGATE_[A-Z0-9_]{1,60}$/, 'LOADGATE_* variable names'), '', 'The variables that are set, comma-separated'),
    'users-file': flag.optional('PATH', z.string().max(300), 'The value of LOADGATE_USERS_FILE'),
    'grafana-url': flag.optional('URL', z.string().max(500), 'The value of LOADGATE_GRAFANA_URL'),
    'github-output': flag.toggle('Also append the output problem to $GITHUB_OUTPUT'),
  },
});

export const usage = preflightCommand.usage;

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = preflightCommand.parse(argv);
  // Settings only: check-inputs has judged the noise model already (and skips it in a
  // calibration, which replaces it).
  const config = await loadGateConfigInput(validateConfigPath(flags.config), { noiseModel: false });
  const bench = flags.bench ?? config.bench.kind;
  const missing = preflightMissing(config, bench, {
    secrets: new Set(flags.secrets),
    variables: new Set(flags.variables),
    usersFile: flags['users-file'],
    grafanaUrl: flags['grafana-url'],
  });
  if (!missing.length) {
    io.err(`preflight: every secret and variable the ${bench} bench needs for ${flags.config} is set`);
    return 0;
  }
  const problem = preflightProblem(missing, bench);
  const githubOutput = flags['github-output'] ? process.env.GITHUB_OUTPUT : undefined;
  emitOutputs({ problem }, { out: () => {}, err: () => {} }, githubOutput);
  throw new InputError(
    problem,
    missing.map((m) => `${m.name}: ${m.fix}`),
  );
}
