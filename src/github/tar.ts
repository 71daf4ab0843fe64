import { gzipSync } from 'node:zlib';

/**
 * A minimal, deterministic ustar writer (POSIX.1-1988 headers, regular files only), so a
 * large report's run results can be committed as one `results.tar.gz` that `tar xzf`
 * unpacks, without a new dependency. Every header uses mode 0644, owner 0/0 and mtime 0:
 * the same files always give the same bytes, like the rest of the report.
 */

const BLOCK = 512;

export interface TarEntry {
  /** Path inside the archive, "/"-separated, ASCII. */
  path: string;
  content: Buffer;
}

function octal(value: number, width: number): string {
  // width - 1 digits and a NUL, as tar writes numeric fields.
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

/** ustar keeps names in two fields: prefix (155) "/" name (100). */
function splitPath(path: string): { name: string; prefix: string } {
  if (Buffer.byteLength(path) <= 100) return { name: path, prefix: '' };
  for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100 && name) return { name, prefix };
  }
  throw new Error(`tar: ${path} is too long for a ustar header`);
}

function header(entry: TarEntry): Buffer {
  if (!/^[\x20-\x7e]+$/.test(entry.path)) throw new Error(`tar: ${JSON.stringify(entry.path)} is not a plain ASCII path`);
  const block = Buffer.alloc(BLOCK, 0);
  const { name, prefix } = splitPath(entry.path);
  block.write(name, 0, 100, 'ascii');
  block.write(octal(0o644, 8), 100, 'ascii');
  block.write(octal(0, 8), 108, 'ascii');
  block.write(octal(0, 8), 116, 'ascii');
  block.write(octal(entry.content.length, 12), 124, 'ascii');
  block.write(octal(0, 12), 136, 'ascii');
  block.write('        ', 148, 'ascii'); // checksum is computed with this field as spaces
  block.write('0', 156, 'ascii'); // regular file
  block.write('ustar\0', 257, 'ascii');
  block.write('00', 263, 'ascii');
  block.write(prefix, 345, 155, 'ascii');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return block;
}

function tar(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    parts.push(header(entry), entry.content);
    const pad = (BLOCK - (entry.content.length % BLOCK)) % BLOCK;
    if (pad) parts.push(Buffer.alloc(pad, 0));
  }
  parts.push(Buffer.alloc(2 * BLOCK, 0)); // end of archive
  return Buffer.concat(parts);
}

export function tarGz(entries: readonly TarEntry[]): Buffer {
  return gzipSync(tar(entries), { level: 9 });
}
