/**
 * Pairs the AWS workflow's run jobs can hold (src/aws/run-jobs-fit.ts): the worst case of
 * a gate, every pair up to the larger of repeats and maxRepeats, packed into the
 * workflow's run jobs at the runner's limit. How many fit depends on the tests and the
 * limit, so the refusal says the most that do.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadGateConfig } from '../../src/config/load.ts';
import { validateGateInputs } from '../../src/inputs/validate.ts';
import { parseRunOptions } from '../../src/run/options.ts';
import { InputError } from '../../src/util/errors.ts';

const DUET = 'examples/aws-mattermost.yml';
const SEQUENTIAL = 'examples/aws-mattermost-sequential.yml';

/** check-inputs' validation of the workflow inputs, with the config at `file` named `configPath`. */
async function inputs(configPath: string, raw: { repeats?: string; runnerLimitMinutes?: string; tests?: string }, file = configPath) {
  const config = await loadGateConfig(file);
  const [candidate, baseline] = config.target.system === 'synapse' ? ['1.163.2', '1.162.0'] : ['v11.0.1-rc2', 'v10.12.0'];
  return validateGateInputs({ candidate, baseline, config: configPath, ...raw }, config);
}

const refusal = (pattern: RegExp) => (e: unknown) => e instanceof InputError && pattern.test(e.message);

test('the workflow input repeats is refused on AWS when its pairs need more run jobs than the workflow has, naming the limit and the most that fit', async () => {
  // Duet: 5 pairs fit in 5 jobs of 5h40m; sequential runs twice as many runs, and the first
  // job also waits for the dump load, so 3 fit.
  assert.equal((await inputs(DUET, { repeats: '5' })).repeats, 5);
  await assert.rejects(
    inputs(DUET, { repeats: '6' }),
    refusal(
      /^repeats: 6 pairs do not fit in the AWS workflow's 5 run jobs \(run-aws-1 to run-aws-5\) of at most 5h40m each \(runner-limit-minutes 360 less 20m per job for set-up\): at most 5 pairs of these tests fit\. Lower repeats to 5 or less/,
    ),
  );
  assert.equal((await inputs(SEQUENTIAL, { repeats: '3' })).repeats, 3);
  await assert.rejects(
    inputs(SEQUENTIAL, { repeats: '4' }),
    refusal(/^repeats: 4 pairs do not fit .*: at most 3 pairs of these tests fit\. Lower repeats to 3 or less, .*raise runner-limit-minutes$/),
  );
  // Self-hosted runners with a longer limit hold more; the local bench has no run jobs.
  assert.equal((await inputs(SEQUENTIAL, { repeats: '7', runnerLimitMinutes: '720' })).repeats, 7);
  await assert.rejects(inputs(SEQUENTIAL, { repeats: '8', runnerLimitMinutes: '720' }), refusal(/at most 7 pairs of these tests fit/));
  assert.equal((await inputs('examples/local-synapse.yml', { repeats: '20' })).repeats, 20);
});

test('a config whose maxRepeats the run jobs cannot hold is refused, naming maxRepeats and the config', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lg-fit-'));
  try {
    const config = join(dir, 'gate.yml');
    const yaml = (await readFile(SEQUENTIAL, 'utf8')).replace('noiseModel: ../noise/', `noiseModel: ${resolve('noise')}/`);
    assert.match(yaml, /^maxRepeats: 3$/m);
    await writeFile(config, yaml.replace(/^maxRepeats: 3$/m, 'maxRepeats: 5'));
    await assert.rejects(inputs('.github/loadgate.yml', {}, config), refusal(/^maxRepeats \(\.github\/loadgate\.yml\): 5 pairs do not fit .*at most 3 pairs/));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('run --runner-limit (one job of the multi-job gate) refuses the same, naming the flag that asked for the pairs', async () => {
  const run = (extra: string[]) =>
    parseRunOptions(
      [
        '--config',
        SEQUENTIAL,
        '--baseline',
        'v10.12.0',
        '--candidate',
        'v11.0.1-rc2',
        '--out',
        'out',
        '--bench-file',
        'b.json',
        '--users-file',
        'u.txt',
        ...extra,
      ],
      '/tmp',
    );
  assert.equal((await run(['--runner-limit', '360'])).maxRepeats, 3);
  await assert.rejects(
    run(['--runner-limit', '360', '--repeats', '4']),
    refusal(/^--repeats: 4 pairs do not fit .*--runner-limit 360 less 20m.*at most 3 pairs/),
  );
  await assert.rejects(run(['--runner-limit', '360', '--max-repeats', '5']), refusal(/^--max-repeats: 5 pairs do not fit .*at most 3 pairs/));
  // Without a runner limit the gate is one job of its own (a self-hosted run): nothing to pack.
  assert.equal((await run(['--repeats', '5'])).repeats, 5);
});
