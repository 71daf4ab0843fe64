import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { MATTERMOST_SCENARIO_FILES, SCENARIOS_DIR } from '../../../src/engine/k6/runner.ts';
import { createChannelBody, persistentPriority, postBody, reactionBody, toggledCategoryBody } from '../../../src/engine/k6/scenarios/lib/mattermost-bodies.js';

/**
 * The k6 scenario's request bodies come from lib/mattermost-bodies.js, typed in JSDoc with
 * @mattermost/types and checked by `npm run typecheck`. The type errors expected below are
 * part of that typecheck: were the builders' types lost (any), each @ts-expect-error would
 * itself fail it.
 */

const BODIES = fileURLToPath(new URL('../../../src/engine/k6/scenarios/lib/mattermost-bodies.js', import.meta.url));

// @ts-expect-error misspelt field: Reaction has emoji_name, not emoji
export const misspeltReaction: ReturnType<typeof reactionBody> = { user_id: 'u', post_id: 'p', emoji: '+1' };
// @ts-expect-error a field Channel does not have
export const unknownChannelField: ReturnType<typeof createChannelBody> = { team_id: 't', name: 'n', display_name: 'n', type: 'O', purpose_text: 'x' };
// @ts-expect-error a channel type Mattermost does not have
createChannelBody('t', 'n', 'X');
// @ts-expect-error PostPriorityMetadata has persistent_notifications, not persistent
postBody('c', 'm', '', { priority: '', persistent: true });
// @ts-expect-error a ChannelCategory needs its sorting, muted, collapsed and channel_ids
toggledCategoryBody({ id: 'c', user_id: 'u', team_id: 't', type: 'custom', display_name: 'x' });

test('the body builders produce the fields the scenario sent before (same requests)', () => {
  assert.deepEqual(reactionBody('u', 'p', 'tada'), { user_id: 'u', post_id: 'p', emoji_name: 'tada' });
  assert.deepEqual(postBody('c', 'hello', '', undefined), { channel_id: 'c', message: 'hello' });
  assert.deepEqual(postBody('c', 'hello', 'r', undefined), { channel_id: 'c', message: 'hello', root_id: 'r' });
  // Never a reply with a priority: Mattermost refuses priority on a reply with 400.
  assert.deepEqual(postBody('c', 'hello', 'r', persistentPriority()), {
    channel_id: 'c',
    message: 'hello',
    metadata: { priority: { priority: 'urgent', persistent_notifications: true } },
  });
});

/** The project's tsconfig.json, as `npm run typecheck` reads it. */
function projectConfig(): ts.ParsedCommandLine {
  const config = ts.getParsedCommandLineOfConfigFile(
    fileURLToPath(new URL('../../../tsconfig.json', import.meta.url)),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(String(d.messageText)) },
  );
  assert.ok(config, 'tsconfig.json parses');
  return config;
}

/** Type-checks `files` (path → text) with the project's compiler options; returns the messages per file. */
function typecheck(files: Record<string, string>): Record<string, string[]> {
  const config = projectConfig();
  const host = ts.createCompilerHost(config.options);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => files[name] ?? readFile(name);
  host.fileExists = (name) => name in files || ts.sys.fileExists(name);
  const program = ts.createProgram(Object.keys(files), config.options, host);
  return Object.fromEntries(
    Object.keys(files).map((name) => [
      name,
      ts.getPreEmitDiagnostics(program, program.getSourceFile(name)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    ]),
  );
}

test('npm run typecheck checks the request bodies, and a wrong field is a type error', { timeout: 120_000 }, () => {
  // tsconfig.json takes the file in (allowJs), and the file opts in to checking.
  assert.ok(
    projectConfig()
      .fileNames.map((f) => join(f))
      .includes(BODIES),
    'tsconfig.json includes lib/mattermost-bodies.js',
  );
  const source = readFileSync(BODIES, 'utf8');
  assert.ok(source.startsWith('// @ts-check\n'), 'the file starts with // @ts-check');

  // The file as it is, and copies beside it (so @mattermost/types resolves the same way) with one wrong field each.
  const mutations: [from: string, to: string, error: RegExp][] = [
    [
      '{ user_id: userId, post_id: postId, emoji_name: emojiName }',
      '{ user_id: userId, post_id: postId, emoji: emojiName }',
      /'emoji' does not exist in type 'Pick<Reaction/,
    ],
    [
      '{ team_id: teamId, name, display_name: name, type }',
      '{ team_id: teamId, name, displayName: name, type }',
      /'displayName' does not exist in type 'Pick<Channel/,
    ],
    ["type: 'custom' }", "type: 'personal' }", /'"personal"' is not assignable to type 'ChannelCategoryType'/],
    ['return { emoji, text };', 'return { emoji, txt: text };', /'txt' does not exist in type 'Pick<UserCustomStatus/],
  ];
  const files: Record<string, string> = { [BODIES]: source };
  mutations.forEach(([from, to], i) => {
    assert.ok(source.includes(from), `mutation ${i}: "${from}" is in the file`);
    files[join(dirname(BODIES), `mattermost-bodies.mutated-${i}.js`)] = source.replace(from, to);
  });
  const messages = typecheck(files);
  assert.deepEqual(messages[BODIES], [], 'the request bodies type-check');
  mutations.forEach(([, , error], i) => {
    const found = messages[join(dirname(BODIES), `mattermost-bodies.mutated-${i}.js`)]!;
    assert.equal(found.length, 1, `mutation ${i}: ${found.join(' | ')}`);
    assert.match(found[0]!, error);
  });
});

test('the agents get every library the scenario imports', () => {
  const script = readFileSync(join(SCENARIOS_DIR, 'mattermost.js'), 'utf8');
  const imports = [...script.matchAll(/from '\.\/([^']+)'/g)].map((m) => m[1]);
  assert.deepEqual(imports.sort(), MATTERMOST_SCENARIO_FILES.filter((f) => f !== 'mattermost.js').sort());
});
