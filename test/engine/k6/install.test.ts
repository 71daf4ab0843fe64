import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ensureK6, k6CachePath, k6Version } from '../../../src/engine/k6/install.ts';
import { InputError } from '../../../src/util/errors.ts';

/**
 * A stand-in Go toolchain: `go version` answers, `go install` writes a small k6 script
 * into $GOBIN (or fails, when asked to), and every call is logged next to the script.
 */
async function fakeGo(dir: string, mode: 'ok' | 'fail'): Promise<string> {
  const go = join(dir, 'go');
  const install =
    mode === 'ok'
      ? `printf '#!/bin/sh\\necho "k6 v1.4.2 (go1.26.8, linux/amd64)"\\n' > "$GOBIN/k6"; chmod +x "$GOBIN/k6"`
      : `echo "go: go.k6.io/k6@v9.9.9: invalid version: unknown revision v9.9.9" >&2; exit 1`;
  await writeFile(
    go,
    `#!/bin/sh
echo "$* GOBIN=$GOBIN" >> "${join(dir, 'calls.log')}"
case "$1" in
  version) echo "go version go1.26.8 linux/amd64" ;;
  install) ${install} ;;
esac
`,
  );
  await chmod(go, 0o755);
  return go;
}

async function withTemp(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-k6-install-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('refuses anything but a release tag before touching the disk or the network', async () => {
  for (const version of ['latest', '1.4.2', 'v1.4', 'v1.4.2 ; rm -rf /', '../v1.4.2', 'v1.4.2/../../x', '-v1.4.2']) {
    await assert.rejects(ensureK6(version, '/nonexistent', { goBinary: '/nonexistent/go' }), InputError, version);
  }
});

test('builds with go install into a private GOBIN, then caches by version', async () => {
  await withTemp(async (dir) => {
    const go = await fakeGo(dir, 'ok');
    const cache = join(dir, 'cache');
    const lines: string[] = [];
    const path = await ensureK6('v1.4.2', cache, { goBinary: go, onProgress: (l) => lines.push(l) });
    assert.equal(path, k6CachePath('v1.4.2', cache));
    assert.equal(path, join(cache, 'k6', 'v1.4.2', 'k6'));
    assert.equal(await k6Version(path), 'v1.4.2');
    const calls = (await readFile(join(dir, 'calls.log'), 'utf8')).trim().split('\n');
    assert.equal(calls.length, 2);
    assert.match(calls[1]!, /^install go\.k6\.io\/k6@v1\.4\.2 GOBIN=.*\/k6\/\.build-v1\.4\.2-/);
    assert.deepEqual(await readdir(join(cache, 'k6')), ['v1.4.2'], 'the build folder is gone');
    assert.match(lines[0] ?? '', /building k6 v1\.4\.2/);

    // Cached: Go is not even looked for.
    assert.equal(await ensureK6('v1.4.2', cache, { goBinary: join(dir, 'no-go-here') }), path);
    assert.equal((await readFile(join(dir, 'calls.log'), 'utf8')).trim().split('\n').length, 2);
  });
});

test("a failed build says so with Go's own message, and leaves nothing half-built", async () => {
  await withTemp(async (dir) => {
    const go = await fakeGo(dir, 'fail');
    const cache = join(dir, 'cache');
    await assert.rejects(ensureK6('v9.9.9', cache, { goBinary: go }), /could not build k6 v9\.9\.9[\s\S]*unknown revision v9\.9\.9/);
    assert.deepEqual(await readdir(join(cache, 'k6')), []);
  });
});

test('without a Go toolchain and no cached binary, the error says how to fix it', async () => {
  await withTemp(async (dir) => {
    await assert.rejects(
      ensureK6('v1.4.2', join(dir, 'cache'), { goBinary: join(dir, 'missing-go') }),
      (error: Error) => error instanceof InputError && /install Go/.test(error.message) && /put a k6 binary at/.test(error.message),
    );
  });
});

test('a cached binary that is not executable is rebuilt', async () => {
  await withTemp(async (dir) => {
    const go = await fakeGo(dir, 'ok');
    const cache = join(dir, 'cache');
    const cached = k6CachePath('v1.4.2', cache);
    await mkdir(dirname(cached), { recursive: true });
    await writeFile(cached, 'not a program', { mode: 0o644 });
    assert.equal(await ensureK6('v1.4.2', cache, { goBinary: go }), cached);
    assert.equal(await k6Version(cached), 'v1.4.2');
  });
});
