import type { ReportFile } from './report-files.ts';

/**
 * Adds lines that only publish knows (how the baseline was chosen, which directories
 * were packed) to the committed README.md, as the first bullets of its "Comments"
 * section, where the report's own findings start. The report generator (src/report)
 * stays unaware of GitHub; the artifact keeps the report exactly as `run`/`compare`
 * wrote it.
 */
export function addReportNotes(files: ReportFile[], notes: readonly string[]): ReportFile[] {
  const readme = files.find((f) => f.path === 'README.md');
  if (!readme || !notes.length) return files;
  const text = readme.content.toString('utf8');
  const bullets = notes.map((n) => `- ${n.replace(/[\r\n]+/g, ' ')}`);
  const lines = text.split('\n');
  const comments = lines.findIndex((l) => /^## Comments\s*$/.test(l));
  let updated: string[];
  if (comments >= 0) {
    // Skip the blank line(s) after the heading so the bullets join the existing list.
    let at = comments + 1;
    while (at < lines.length && lines[at] === '') at++;
    updated = [...lines.slice(0, at), ...bullets, ...lines.slice(at)];
  } else {
    // No comments section: a short section right after the title.
    const title = lines.findIndex((l) => l.startsWith('# '));
    const at = title >= 0 ? title + 1 : 0;
    updated = [...lines.slice(0, at), '', '## Notes from publishing', '', ...bullets, ...lines.slice(at)];
  }
  return files.map((f) => (f === readme ? { path: f.path, content: Buffer.from(updated.join('\n'), 'utf8') } : f));
}
