import { createHash } from 'node:crypto';

/**
 * A small git object store with git's own hashing (a blob's SHA here equals
 * `git hash-object`), enough to hold what the Git Data API writes and to read the
 * files of a branch back in tests.
 */

export interface TreeEntry {
  name: string;
  mode: string;
  type: 'blob' | 'tree';
  sha: string;
}

export interface CommitObject {
  tree: string;
  parents: string[];
  message: string;
  date: string;
}

export interface TagObject {
  tag: string;
  object: string;
  type: 'commit' | 'tag';
  message: string;
}

export interface TreeWriteEntry {
  path: string;
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  sha?: string | null;
  content?: string;
}

export class GitError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function hashObject(type: string, body: Buffer): string {
  return createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex');
}

/** git orders tree entries by name, comparing a subtree's name as if it ended with "/". */
function sortKey(entry: TreeEntry): string {
  return entry.type === 'tree' ? `${entry.name}/` : entry.name;
}

type MutableTree = Map<string, { mode: string; type: 'blob'; sha: string } | { type: 'tree'; children: MutableTree }>;

export class GitStore {
  readonly blobs = new Map<string, Buffer>();
  readonly trees = new Map<string, TreeEntry[]>();
  readonly commits = new Map<string, CommitObject>();
  readonly tags = new Map<string, TagObject>();

  writeBlob(content: Buffer): string {
    const sha = hashObject('blob', content);
    this.blobs.set(sha, content);
    return sha;
  }

  writeTree(entries: TreeEntry[]): string {
    const sorted = [...entries].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
    const body = Buffer.concat(
      sorted.map((e) => Buffer.concat([Buffer.from(`${e.type === 'tree' ? '40000' : e.mode} ${e.name}\0`), Buffer.from(e.sha, 'hex')])),
    );
    const sha = hashObject('tree', body);
    this.trees.set(sha, sorted);
    return sha;
  }

  writeCommit(commit: CommitObject): string {
    const when = Math.floor(Date.parse(commit.date) / 1000);
    const who = `loadgate-standin <standin@127.0.0.1> ${when} +0000`;
    const text = [`tree ${commit.tree}`, ...commit.parents.map((p) => `parent ${p}`), `author ${who}`, `committer ${who}`, '', commit.message].join('\n');
    const sha = hashObject('commit', Buffer.from(text));
    this.commits.set(sha, commit);
    return sha;
  }

  writeTag(tag: TagObject): string {
    const text = [`object ${tag.object}`, `type ${tag.type}`, `tag ${tag.tag}`, 'tagger loadgate-standin <standin@127.0.0.1> 0 +0000', '', tag.message].join(
      '\n',
    );
    const sha = hashObject('tag', Buffer.from(text));
    this.tags.set(sha, tag);
    return sha;
  }

  typeOf(sha: string): 'blob' | 'tree' | 'commit' | 'tag' | undefined {
    if (this.commits.has(sha)) return 'commit';
    if (this.trees.has(sha)) return 'tree';
    if (this.blobs.has(sha)) return 'blob';
    if (this.tags.has(sha)) return 'tag';
    return undefined;
  }

  private load(treeSha: string): MutableTree {
    const tree: MutableTree = new Map();
    for (const e of this.trees.get(treeSha) ?? []) {
      tree.set(e.name, e.type === 'tree' ? { type: 'tree', children: this.load(e.sha) } : { mode: e.mode, type: 'blob', sha: e.sha });
    }
    return tree;
  }

  private store(tree: MutableTree): string | null {
    const entries: TreeEntry[] = [];
    for (const [name, node] of tree) {
      if (node.type === 'tree') {
        const sha = this.store(node.children);
        if (sha) entries.push({ name, mode: '040000', type: 'tree', sha });
      } else {
        entries.push({ name, mode: node.mode, type: 'blob', sha: node.sha });
      }
    }
    // git has no empty directories; an emptied one disappears.
    return entries.length ? this.writeTree(entries) : null;
  }

  /** The Git Data API's create-tree: paths with slashes, `sha: null` deletes. */
  createTree(baseTree: string | undefined, writes: TreeWriteEntry[]): string {
    if (baseTree !== undefined && !this.trees.has(baseTree)) throw new GitError(422, `base_tree ${baseTree} is not a tree`);
    const root = baseTree ? this.load(baseTree) : new Map();
    for (const write of writes) {
      if (write.type !== 'blob') throw new GitError(422, 'the stand-in only writes blobs');
      const parts = write.path.split('/');
      if (parts.some((p) => p === '' || p === '.' || p === '..' || p === '.git'))
        throw new GitError(422, `tree.path contains a malformed path component: ${write.path}`);
      const name = parts.pop() as string;
      let dir = root;
      for (const part of parts) {
        let next = dir.get(part);
        if (!next || next.type !== 'tree') {
          if (write.sha === null && write.content === undefined) break;
          next = { type: 'tree', children: new Map() };
          dir.set(part, next);
        }
        dir = next.children;
      }
      if (write.sha === null && write.content === undefined) {
        dir.delete(name);
        continue;
      }
      const sha = write.content !== undefined ? this.writeBlob(Buffer.from(write.content, 'utf8')) : (write.sha as string);
      if (!this.blobs.has(sha)) throw new GitError(422, `tree.sha ${sha} is not a valid blob`);
      dir.set(name, { mode: write.mode, type: 'blob', sha });
    }
    return this.store(root) ?? this.writeTree([]);
  }

  /** Every entry under a tree, trees included, as GitHub's recursive listing gives them. */
  flatten(treeSha: string, prefix = ''): (TreeEntry & { path: string })[] {
    const out: (TreeEntry & { path: string })[] = [];
    for (const e of this.trees.get(treeSha) ?? []) {
      const path = prefix ? `${prefix}/${e.name}` : e.name;
      out.push({ ...e, path });
      if (e.type === 'tree') out.push(...this.flatten(e.sha, path));
    }
    return out;
  }

  /** The files of a commit, path → content. */
  filesAt(commitSha: string): Map<string, Buffer> {
    const commit = this.commits.get(commitSha);
    if (!commit) throw new Error(`no commit ${commitSha}`);
    const files = new Map<string, Buffer>();
    for (const e of this.flatten(commit.tree)) if (e.type === 'blob') files.set(e.path, this.blobs.get(e.sha) as Buffer);
    return files;
  }
}
