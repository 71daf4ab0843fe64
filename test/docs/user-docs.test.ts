import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

function markdownFiles(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const m of markdown.matchAll(/^#+\s+(.*)$/gm)) {
    out.add(
      (m[1] as string)
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/ /g, '-'),
    );
  }
  return out;
}

const userDocs = ['README.md', 'CHANGELOG.md', ...markdownFiles('docs')];

test('the README stays a short user guide that keeps the two commands of its promise', () => {
  const readme = read('README.md');
  assert.ok(Buffer.byteLength(readme) <= 10 * 1024, `README.md is ${Buffer.byteLength(readme)} bytes, over 10 KB: move detail to docs/`);
  assert.match(readme, /^bash scripts\/gate-local\.sh$/m);
  assert.match(readme, /^bash scripts\/test\.sh$/m);
});

test('every relative link in the user docs resolves, anchors included', () => {
  const broken: string[] = [];
  for (const file of userDocs) {
    // Code blocks hold examples, not links.
    const text = read(file).replace(/```[\s\S]*?```/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1] as string;
      if (/^[a-z]+:/.test(target)) continue;
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const full = path ? join(root, dirname(file), path) : join(root, file);
      if (!existsSync(full)) broken.push(`${file}: ${target}`);
      else if (anchor && full.endsWith('.md') && !anchors(readFileSync(full, 'utf8')).has(anchor)) broken.push(`${file}: ${target} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});

const datelessDocs = ['README.md', ...markdownFiles('docs').filter((f) => !f.startsWith(join('docs', 'research')))];

test('the user docs carry no dates, commit hashes or issue numbers (those belong in docs/research)', () => {
  const found: string[] = [];
  for (const file of datelessDocs) {
    // Usage texts may show an example timestamp, and links may name a dated note; the prose may not.
    const text = read(file)
      .replace(/```[\s\S]*?```/g, '')
      .replace(/\]\([^)]*\)/g, ']');
    for (const m of text.matchAll(/\b20\d\d-\d\d-\d\d\b|`[0-9a-f]{7,40}`|\bissue \d+/gi)) found.push(`${file}: ${m[0]}`);
  }
  assert.deepEqual(found, []);
});

test('the worked verdict and the README excerpt quote the seed example as it is', () => {
  const dir = 'reports/examples/v10.12.0-vs-v11.0.1-rc2/report';
  const verdict = JSON.parse(read(`${dir}/verdict.json`));
  const report = read(`${dir}/README.md`);
  const howItDecides = read('docs/how-it-decides.md');
  const readme = read('README.md');
  const title = `⚠️ INCONCLUSIVE: ${verdict.summary}`;
  assert.ok(readme.includes(title) && howItDecides.includes(title), 'the check run title');
  const users = verdict.checks.find((c: { id: string }) => c.id === 'postgresql-unbounded.supportedUsers');
  assert.ok(howItDecides.includes(users.reason), "supported users' reason");
  const detectable = verdict.decision.detectable.find((d: { metric: string; test: string }) => d.metric === 'Supported users');
  const flat = howItDecides.replace(/\s+/g, ' ');
  assert.ok(flat.includes(`α = ${(detectable.alpha * 100).toFixed(3)} % (weight ${detectable.weight})`), 'its weight and budget share');
  // The README's quoted first screen is the report's own: each quoted paragraph, unwrapped, is a line of it.
  const quoted = readme
    .split('\n')
    .filter((l) => l.startsWith('>') && !l.startsWith('> |'))
    .map((l) => l.replace(/^> ?/, ''));
  const paragraphs = quoted
    .join('\n')
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\n/g, ' ').trim())
    .filter(Boolean);
  assert.ok(
    paragraphs.some((p) => p.startsWith('**Why**')),
    'the README quotes the why',
  );
  for (const p of paragraphs) assert.ok(report.split('\n').includes(p), `report line ${p}`);
  // The README's quoted table rows are the report's own.
  for (const row of readme.split('\n').filter((l) => l.startsWith('> | ') && !l.startsWith('> | ---') && !l.startsWith('> | Metric'))) {
    assert.ok(report.includes(row.slice(2)), `report row ${row}`);
  }
});

test("docs/cli.md shows every command's --help as the command prints it", async () => {
  const cli = read('docs/cli.md');
  const dir = join(root, 'src', 'cli', 'commands');
  const stale: string[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const { usage } = (await import(pathToFileURL(join(dir, file)).href)) as { usage: string };
    if (!cli.includes(`### \`${file.replace(/\.ts$/, '')}\``) || !cli.includes(usage)) stale.push(file);
  }
  assert.deepEqual(stale, [], 'copy the usage text of these commands into docs/cli.md');
});
