import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * What an adopter must know before the first gate: the `@v1` the shipped callers pin is
 * created only by the release workflow, which runs only by hand; and a release tag must
 * give the candidate's build the version it reports.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const docs = readFileSync(join(ROOT, 'docs', 'github.md'), 'utf8').replace(/\s+/g, ' ');

test('docs/github.md says @v1 exists only after a manual run of the release workflow', () => {
  // The release workflow is the only thing that creates tags, and it runs by hand only.
  const release = parse(readFileSync(join(ROOT, '.github', 'workflows', 'release.yml'), 'utf8')) as { on: Record<string, unknown> };
  assert.deepEqual(Object.keys(release.on), ['workflow_dispatch']);
  assert.match(docs, /The tags exist only once a maintainer has run the release workflow by hand \(`\.github\/workflows\/release\.yml`, `workflow_dispatch`/);
  assert.match(docs, /until then `loadgate\/loadgate@v1` and `…\/loadgate\.yml@v1` do not resolve/);
  assert.match(docs, /pin a commit SHA of loadgate in the `uses:` line and give the same SHA as `loadgate-ref`/);
});

test("the ruleset advice says the release tag's patch version must be the one the build reports in X-Version-Id", () => {
  const ruleset = docs.slice(docs.indexOf('## Make `loadgate` a required check before a release'), docs.indexOf('## The check run'));
  assert.match(ruleset, /patch number included/);
  assert.match(ruleset, /`X-Version-Id`/);
});

test('docs/github.md tells a maintainer the one-time npm set-up the release workflow needs', () => {
  const release = docs.slice(docs.indexOf('The bundle and releases'));
  assert.match(release, /trusted publishing/);
  assert.match(release, /no npm token/);
  assert.match(release, /provenance only from a public repository/);
  assert.match(release, /Trusted publishing: GitHub Actions, repository `loadgate\/loadgate`, workflow `release\.yml`/);
  assert.match(release, /gh run download <run-id> -n package/);
});
