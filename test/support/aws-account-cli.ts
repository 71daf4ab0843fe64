import { answerAccountCall, type AwsAccount } from './aws-account-standin.ts';

/**
 * `aws` for the account calls (test/support/aws-account-standin.ts) as a process, for the
 * bash stand-ins of test/aws/actions-aws.test.ts: the account is the JSON in
 * FAKE_AWS_ACCOUNT, the arguments are the CLI's.
 */
const account = JSON.parse(process.env.FAKE_AWS_ACCOUNT ?? 'null') as AwsAccount;
const answer = answerAccountCall(account, process.argv.slice(2), process.env) ?? {
  code: 254,
  stdout: '',
  stderr: `aws stand-in: ${process.argv.slice(2, 4).join(' ')} is not stood in\n`,
};
process.stdout.write(answer.stdout);
process.stderr.write(answer.stderr);
process.exitCode = answer.code;
