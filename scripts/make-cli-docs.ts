/**
 * Writes the command reference of docs/cli.md: each command's summary and its `--help`,
 * which every command derives from its one flag table. Only the part between the markers
 * is generated; the page's prose (exit codes, conventions) stays hand-written.
 *
 *   tsx scripts/make-cli-docs.ts           rewrite docs/cli.md
 *   tsx scripts/make-cli-docs.ts --check   exit 1 when docs/cli.md is stale
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMANDS, type CommandGroup } from '../src/cli/main.ts';
import { replaceSection, writeOrCheck, type GeneratedSection } from './generated-section.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DOC_PATH = join(root, 'docs/cli.md');

const SECTION: GeneratedSection = {
  name: 'docs/cli.md',
  begin: '<!-- cli-reference:begin -->',
  end: '<!-- cli-reference:end -->',
  source: "scripts/make-cli-docs.ts from the commands' flag tables",
};

export interface CommandDoc {
  name: string;
  group: CommandGroup;
  summary: string;
  usage: string;
}

/** Every command with its usage, in the order `loadgate` lists them. */
export async function commandDocs(): Promise<CommandDoc[]> {
  return Promise.all(Object.entries(COMMANDS).map(async ([name, c]) => ({ name, group: c.group, summary: c.summary, usage: (await c.load()).usage })));
}

/** One section per group, one heading per command, its `--help` verbatim. */
export function cliReference(commands: readonly CommandDoc[]): string {
  const out: string[] = [];
  let group: CommandGroup | undefined;
  for (const c of commands) {
    if (c.group !== group) {
      group = c.group;
      out.push(`## ${group}`, '');
    }
    out.push(`### \`${c.name}\``, '', `${c.summary}.`, '', '```text', c.usage, '```', '');
  }
  return out.join('\n').trimEnd();
}

export function renderCliDocs(page: string, commands: readonly CommandDoc[]): string {
  return replaceSection(page, SECTION, cliReference(commands));
}

async function main(): Promise<void> {
  writeOrCheck(DOC_PATH, SECTION, renderCliDocs(readFileSync(DOC_PATH, 'utf8'), await commandDocs()), 'npm run cli-docs');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
