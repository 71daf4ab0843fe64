import { readFile } from 'node:fs/promises';
import { InputError } from '../../util/errors.ts';
import { parseTerraformOutputsText } from '../../aws/terraform-outputs.ts';
import type { CliIO } from '../../util/io.ts';

export const usage = `Usage: loadgate tf-outputs <file|->

Reads \`terraform output -json\` of infra/aws (a file, or - for stdin), checks
every output and prints the bench description as JSON: proxy, app nodes,
agents, metrics node (Prometheus, Grafana, Pyroscope), database, OpenSearch.
Exits 3 naming each missing or malformed output.

  terraform -chdir=infra/aws output -json | loadgate tf-outputs -`;

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

export async function run(argv: string[], io: CliIO, stdin: NodeJS.ReadableStream = process.stdin): Promise<number> {
  const options = argv.filter((a) => a.startsWith('-') && a !== '-');
  if (options.length) throw new InputError(`unknown option ${options[0]}\n\n${usage}`);
  const files = argv.filter((a) => !a.startsWith('-') || a === '-');
  if (files.length !== 1) throw new InputError(`name one file of \`terraform output -json\`, or - for stdin\n\n${usage}`);
  const file = files[0] as string;
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
