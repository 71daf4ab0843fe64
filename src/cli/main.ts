import { processIO, type CommandModule } from './io.ts';
import type { CliIO } from '../util/io.ts';
import { InputError } from '../util/errors.ts';
import { EXIT_CODES } from '../results/verdict-schema.ts';
import { VERSION } from './version.ts';

/** Where a command is listed in the docs: what a user is doing when they reach for it. */
export type CommandGroup = 'Run and judge' | 'AWS bench' | 'GitHub';

/** Commands are loaded lazily so `loadgate validate` does not pay for the chart renderer. */
export const COMMANDS: Record<string, { summary: string; group: CommandGroup; load: () => Promise<CommandModule> }> = {
  run: { summary: 'Run the gate on a bench: tests for both versions, then compare', group: 'Run and judge', load: () => import('./commands/run.ts') },
  compare: { summary: 'Compare run results and write verdict.json and the report', group: 'Run and judge', load: () => import('./commands/compare.ts') },
  calibrate: {
    summary: "Measure the bench's noise (same version on both sides) into a noise model",
    group: 'Run and judge',
    load: () => import('./commands/calibrate.ts'),
  },
  simulate: {
    summary: "Monte Carlo of the gate's decision at its noise model: error rates and runs",
    group: 'Run and judge',
    load: () => import('./commands/simulate.ts'),
  },
  history: {
    summary: 'Print the gate history: every recorded gate, its series and change points',
    group: 'Run and judge',
    load: () => import('./commands/history.ts'),
  },
  validate: { summary: 'Check a gate config file', group: 'Run and judge', load: () => import('./commands/validate.ts') },
  schema: {
    summary: 'Print or write the JSON Schemas of the config, run results and verdict',
    group: 'Run and judge',
    load: () => import('./commands/schema.ts'),
  },
  plan: { summary: 'Print the AWS bench plan: resources, estimated cost and duration', group: 'AWS bench', load: () => import('./commands/plan.ts') },
  'check-quota': {
    summary: "Check the account's EC2 vCPU quota (Service Quotas) covers the AWS bench",
    group: 'AWS bench',
    load: () => import('./commands/check-quota.ts'),
  },
  'tf-outputs': { summary: 'Read `terraform output -json` into the bench description', group: 'AWS bench', load: () => import('./commands/tf-outputs.ts') },
  'wait-release': {
    summary: 'Wait (bounded) for the Mattermost release tarballs before provisioning',
    group: 'AWS bench',
    load: () => import('./commands/wait-release.ts'),
  },
  janitor: { summary: 'Destroy AWS benches whose ExpiresAt tag has passed', group: 'AWS bench', load: () => import('./commands/janitor.ts') },
  'mattermost-users': {
    summary: "Write a users file of load-test-ng's accounts for its datasets",
    group: 'AWS bench',
    load: () => import('./commands/mattermost-users.ts'),
  },
  'grafana-snapshot': {
    summary: 'Upload the dashboard and create a snapshot per test',
    group: 'AWS bench',
    load: () => import('./commands/grafana-snapshot.ts'),
  },
  'pick-baseline': { summary: 'Pick the newest stable tag below the candidate', group: 'GitHub', load: () => import('./commands/pick-baseline.ts') },
  'check-inputs': { summary: 'Validate workflow inputs and print them as outputs', group: 'GitHub', load: () => import('./commands/check-inputs.ts') },
  preflight: {
    summary: 'Check that every secret and variable the gate needs is set, before provisioning',
    group: 'GitHub',
    load: () => import('./commands/preflight.ts'),
  },
  publish: { summary: 'Post the check run and open or update the report pull request', group: 'GitHub', load: () => import('./commands/publish.ts') },
  'publish-calibration': {
    summary: "A calibration's plan and cost, then the pull request with its noise model",
    group: 'GitHub',
    load: () => import('./commands/publish-calibration.ts'),
  },
  'scan-report': { summary: 'Refuse a report that holds a secret, before it is uploaded', group: 'GitHub', load: () => import('./commands/scan-report.ts') },
};

function help(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    `loadgate ${VERSION}`,
    '',
    'Usage: loadgate <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Run `loadgate <command> --help` for its options, `loadgate --version` for the version.',
  ].join('\n');
}

export async function main(argv: string[], io: CliIO = processIO): Promise<number> {
  const [name, ...rest] = argv;
  // Asking for help, or for nothing, is not bad input: print the commands and succeed.
  if (!name || name === '--help' || name === '-h') {
    io.out(help());
    return 0;
  }
  if (name === '--version' || name === '-V') {
    io.out(VERSION);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.err(`loadgate: unknown command "${name}"\n\n${help()}`);
    return EXIT_CODES.badInput;
  }
  const module = await command.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(module.usage);
    return 0;
  }
  return runCommand(name, module, rest, io);
}

/**
 * Runs one command and turns what it throws into an exit code: an InputError is bad input
 * (3); anything else is a bug or an unforeseen failure in loadgate itself. Left to Node,
 * that would exit 1, which reads as "fail: the candidate regressed"; the truth is that no
 * judgement was made, so it is inconclusive (2), with the cause printed.
 */
export async function runCommand(name: string, module: CommandModule, args: string[], io: CliIO): Promise<number> {
  try {
    return await module.run(args, io);
  } catch (error) {
    if (error instanceof InputError) {
      io.err(`loadgate ${name}: ${error.message}`);
      return EXIT_CODES.badInput;
    }
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    io.err(`loadgate ${name}: internal error, so no verdict can be given (exit ${EXIT_CODES.inconclusive}, inconclusive):\n${detail}`);
    return EXIT_CODES.inconclusive;
  }
}
