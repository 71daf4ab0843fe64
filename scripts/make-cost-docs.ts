/**
 * Writes the cost figures of docs/aws.md and docs/github.md from `loadgate plan`, so the
 * docs never quote a stale price or duration: each block sits between
 * `<!-- cost-docs: NAME -->` and `<!-- /cost-docs -->`. After a change to the prices, the
 * timings or the example configs, run `npm run cost-docs`; test/scripts/cost-docs.test.ts
 * fails until then.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { buildPlan, type Plan } from '../src/aws/bench-plan.ts';
import { estimateCost } from '../src/aws/cost.ts';
import { SEED_CEILING_PRESETS } from '../src/aws/presets.ts';
import { main } from '../src/cli/main.ts';
import { captureIO } from '../src/cli/io.ts';
import { loadGateConfig } from '../src/config/load.ts';

const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const DUET = 'examples/aws-mattermost.yml';
const SEQUENTIAL = 'examples/aws-mattermost-sequential.yml';

/** What the docs quote of `loadgate plan --format json`. */
const planJsonSchema = z.object({
  cost: z.object({ totalUsd: z.number() }),
  durationSec: z.object({ total: z.number() }),
  expected: z.object({ totalSec: z.number(), costUsd: z.number(), runsPerSide: z.number() }),
  modes: z.array(z.object({ mode: z.enum(['sequential', 'duet']), agents: z.number(), runJobs: z.number() })),
});
type PlanJson = z.output<typeof planJsonSchema>;

async function planOf(config: string): Promise<PlanJson> {
  const io = captureIO();
  const code = await main(['plan', '--config', join(ROOT, config), '--format', 'json'], io);
  if (code !== 0) throw new Error(`loadgate plan --config ${config} exited ${code}: ${io.stderr.join('\n')}`);
  return planJsonSchema.parse(JSON.parse(io.stdout.join('\n')));
}

const usd = (v: number) => `$${v.toFixed(2)}`;
/** "13 h 4 min": whole minutes, as the docs write a gate's length. */
function hm(seconds: number): string {
  const minutes = Math.floor(seconds / 60);
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

function resource(plan: Plan, role: string): string {
  const r = plan.resources.find((x) => x.role === role);
  if (!r) return role === 'proxy' ? 'none' : '-';
  return role === 'opensearch' ? String(r.count) : `${r.count} x ${r.type}`;
}

/** Every preset under the seeds' sequential gate, each to its worst case. */
async function presetTable(): Promise<string> {
  const config = await loadGateConfig(join(ROOT, SEQUENTIAL));
  const rows = ['| Preset | App | DB | OpenSearch | Proxy | Agents | $/hour | Worst case | Worst-case cost |', '|---|---|---|---|---|---|---:|---|---:|'];
  for (const preset of ['perfcomp', ...SEED_CEILING_PRESETS]) {
    const plan = buildPlan({ ...config, bench: { ...config.bench, aws: { ...config.bench.aws, preset } } }, { dbSource: 'dump' });
    const hourly = estimateCost(plan.bench, 3600).totalUsd;
    rows.push(
      `| \`${preset}\` | ${resource(plan, 'app')} | ${resource(plan, 'db')} | ${resource(plan, 'opensearch')} | ${resource(plan, 'proxy')} | ${resource(plan, 'agent')} | ${usd(hourly)} | ${hm(plan.duration.totalSec)} | ${usd(plan.cost.totalUsd)} |`,
    );
  }
  return rows.join('\n');
}

async function modeTable(): Promise<string> {
  const rows = ['| gate | mode | agents | expected | worst case | run jobs (worst case) |', '|---|---|---|---|---|---|'];
  for (const [file, mode] of [
    [DUET, 'duet'],
    [SEQUENTIAL, 'sequential'],
  ] as const) {
    const plan = await planOf(file);
    const own = plan.modes.find((m) => m.mode === mode);
    if (!own) throw new Error(`${file}: plan has no ${mode} estimate`);
    rows.push(
      `| \`${file}\` | ${mode} | ${own.agents} | ${hm(plan.expected.totalSec)}, ${usd(plan.expected.costUsd)} | ${hm(plan.durationSec.total)}, ${usd(plan.cost.totalUsd)} | ${own.runJobs} |`,
    );
  }
  return rows.join('\n');
}

async function perCandidate(): Promise<string> {
  const duet = await planOf(DUET);
  const sequential = await planOf(SEQUENTIAL);
  return [
    `From \`loadgate plan\` for \`${DUET}\` (on-demand us-east-1 prices from`,
    '`src/aws/prices.ts`, dated by its `PRICES_AS_OF`): **expected',
    `${usd(duet.expected.costUsd)} and ${hm(duet.expected.totalSec)}** per RC (the capacity model and the decision`,
    `rule's expected ${duet.expected.runsPerSide.toFixed(1)} duets for an unchanged release), **at most`,
    `${usd(duet.cost.totalUsd)} and ${hm(duet.durationSec.total)}** when every run goes to its cap and the decision`,
    `needs every duet \`maxRepeats\` allows: the figure \`max-cost\` caps. The sequential`,
    `\`${SEQUENTIAL}\` expects ${usd(sequential.expected.costUsd)} and ${hm(sequential.expected.totalSec)}, at`,
    `most ${usd(sequential.cost.totalUsd)} and ${hm(sequential.durationSec.total)}.`,
  ].join('\n');
}

export const COST_DOCS: Record<string, { file: string; render: () => Promise<string> }> = {
  presets: { file: 'docs/aws.md', render: presetTable },
  modes: { file: 'docs/aws.md', render: modeTable },
  'per-candidate': { file: 'docs/github.md', render: perCandidate },
};

/** A doc with each of its blocks rendered afresh. */
export async function renderCostDocs(file: string, text: string): Promise<string> {
  let out = text;
  for (const [name, block] of Object.entries(COST_DOCS)) {
    if (block.file !== file) continue;
    const pattern = new RegExp(`(<!-- cost-docs: ${name} -->\\n)(?:(?!<!-- )[\\s\\S])*?(<!-- /cost-docs -->)`);
    if (!pattern.test(out)) throw new Error(`${file} has no cost-docs block ${name}`);
    const body = await block.render();
    out = out.replace(pattern, (_, open: string, close: string) => `${open}${body}\n${close}`);
  }
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const file of [...new Set(Object.values(COST_DOCS).map((b) => b.file))]) {
    const path = join(ROOT, file);
    await writeFile(path, await renderCostDocs(file, await readFile(path, 'utf8')));
    console.log(`wrote ${file}`);
  }
}
