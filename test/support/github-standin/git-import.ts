import { execFileSync } from 'node:child_process';
import type { GitStore, TreeEntry } from './git-store.ts';

/**
 * A local git repository's objects and refs, copied into the stand-in's store under
 * git's own SHAs: the stand-in then serves the very commits a checkout of that repository
 * holds, so a SHA or tag the API answers with is one `git archive` can check out.
 */
export interface ImportedRefs {
  /** refs/heads/... and refs/tags/... to the SHA they name (a tag object for an annotated tag). */
  refs: Map<string, string>;
}

function git(dir: string, args: string[]): Buffer {
  return execFileSync('git', ['-C', dir, ...args], { maxBuffer: 256 * 1024 * 1024 });
}

function importTree(store: GitStore, dir: string, sha: string): void {
  if (store.trees.has(sha)) return;
  const entries: TreeEntry[] = [];
  // ls-tree -z: "<mode> SP <type> SP <object> TAB <name>" NUL-separated.
  for (const line of git(dir, ['ls-tree', '-z', sha]).toString('utf8').split('\0').filter(Boolean)) {
    const m = /^(\d+) (blob|tree|commit) ([0-9a-f]{40})\t(.+)$/s.exec(line);
    if (!m) throw new Error(`git ls-tree: unexpected line ${JSON.stringify(line)}`);
    const [, mode, type, objectSha, name] = m as unknown as [string, string, 'blob' | 'tree' | 'commit', string, string];
    if (type === 'commit') throw new Error(`${name}: submodules are not imported`);
    if (type === 'tree') importTree(store, dir, objectSha);
    else if (!store.blobs.has(objectSha)) {
      const written = store.writeBlob(git(dir, ['cat-file', 'blob', objectSha]));
      if (written !== objectSha) throw new Error(`blob ${objectSha} hashed as ${written}`);
    }
    entries.push({ name, mode: type === 'tree' ? '040000' : mode, type, sha: objectSha });
  }
  store.trees.set(sha, entries);
}

function importCommit(store: GitStore, dir: string, sha: string): void {
  const raw = git(dir, ['cat-file', 'commit', sha]).toString('utf8');
  const cut = raw.indexOf('\n\n');
  const headers = raw.slice(0, cut).split('\n');
  const tree = headers.find((h) => h.startsWith('tree '))?.slice(5) as string;
  const parents = headers.filter((h) => h.startsWith('parent ')).map((h) => h.slice(7));
  const when = Number(/ (\d+) [+-]\d{4}$/.exec(headers.find((h) => h.startsWith('committer ')) ?? '')?.[1] ?? 0);
  importTree(store, dir, tree);
  store.commits.set(sha, {
    tree,
    parents,
    message: raw.slice(cut + 2).replace(/\n$/, ''),
    date: new Date(when * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  });
}

export function importGitRepository(store: GitStore, dir: string): ImportedRefs {
  for (const sha of git(dir, ['rev-list', '--all', '--reverse', '--topo-order']).toString('utf8').split('\n').filter(Boolean)) importCommit(store, dir, sha);
  const refs = new Map<string, string>();
  for (const line of git(dir, ['for-each-ref', '--format=%(refname) %(objectname) %(objecttype)', 'refs/heads', 'refs/tags'])
    .toString('utf8')
    .split('\n')
    .filter(Boolean)) {
    const [name, sha, type] = line.split(' ') as [string, string, string];
    if (type === 'tag') {
      const raw = git(dir, ['cat-file', 'tag', sha]).toString('utf8');
      const field = (key: string) => new RegExp(`^${key} (.+)$`, 'm').exec(raw)?.[1] ?? '';
      store.tags.set(sha, {
        tag: field('tag'),
        object: field('object'),
        type: field('type') as 'commit',
        message: raw.slice(raw.indexOf('\n\n') + 2).replace(/\n$/, ''),
      });
    }
    refs.set(name, sha);
  }
  return { refs };
}
