import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { InputError } from '../../util/errors.ts';
import { defineCommand } from '../../util/flags.ts';
import { parseTerraformOutputsText } from '../../aws/terraform-outputs.ts';
import type { CliIO } from '../../util/io.ts';

const tfOutputsCommand = defineCommand({
  command: 'tf-outputs',
  synopsis: '<file|->',
  about: `Reads \`terraform output -json\` of infra/aws (a file, or - for stdin), checks
every output and prints the bench description as JSON: proxy, app nodes,
agents, metrics node (Prometheus, Grafana, Pyroscope), database, OpenSearch.
Exits 3 naming each missing or malformed output.`,
  flags: {},
  positionals: z.array(z.string()).length(1, 'name one file of `terraform output -json`, or - for stdin'),
  notes: '  terraform -chdir=infra/aws output -json | loadgate tf-outputs -',
});

export const usage = tfOutputsCommand.usage;

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

export async function run(argv: string[], io: CliIO, stdin: NodeJS.ReadableStream = process.stdin): Promise<number> {
  const [file] = tfOutputsCommand.parse(argv).positionals as [string];
  let text: string;
  if (file === '-') {
    text = await readStdin(stdin);
  } else {
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new InputError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  }
  const bench = parseTerraformOutputsText(text, file === '-' ? 'stdin' : file);
  io.out(JSON.stringify(bench, null, 2));
  return 0;
}
