import { readFileSync, readdirSync } from 'node:fs';
import { join, normalize } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { INFRA_DIR, loadModule, moduleDirs, only } from './hcl.ts';

/**
 * What `terraform validate` would check about names, without providers: every
 * var., local., module., resource and data reference in a module resolves, every
 * module call passes only declared variables and all required ones, and every
 * module output it reads exists.
 */

const META_ARGUMENTS = new Set(['source', 'count', 'for_each', 'depends_on', 'providers', 'version']);

/** A module's .tf text with comments and string literals' contents left in (references live in ${}). */
function moduleText(dir: string): string {
  return readdirSync(join(INFRA_DIR, dir))
    .filter((f) => f.endsWith('.tf'))
    .map((f) => readFileSync(join(INFRA_DIR, dir, f), 'utf8').replace(/^\s*#.*$/gm, ''))
    .join('\n');
}

for (const dir of moduleDirs()) {
  test(`references in ${dir} resolve`, async () => {
    const json = await loadModule(dir);
    const text = moduleText(dir);
    const declaredVariables = new Set(Object.keys(json.variable));
    for (const [, name] of text.matchAll(/\bvar\.([a-z0-9_]+)/g)) assert.ok(declaredVariables.has(name as string), `${dir}: var.${name} is declared`);

    const declaredLocals = new Set(json.locals.flatMap((block) => Object.keys(block)));
    for (const [, name] of text.matchAll(/\blocal\.([a-z0-9_]+)/g)) assert.ok(declaredLocals.has(name as string), `${dir}: local.${name} is declared`);

    for (const [, type, name] of text.matchAll(/(?<![-.\w])data\.([a-z0-9_]+)\.([a-z0-9_]+)/g)) {
      assert.ok(json.data[type as string]?.[name as string], `${dir}: data.${type}.${name} is declared`);
    }
    for (const [, type, name] of text.matchAll(/(?<![-.\w"])(aws_[a-z0-9_]+)\.([a-z0-9_]+)\b/g)) {
      assert.ok(json.resource[type as string]?.[name as string], `${dir}: ${type}.${name} is declared`);
    }

    for (const [callName, bodies] of Object.entries(json.module)) {
      const call = only(bodies, `${dir} module ${callName}`);
      const target = normalize(join(dir, String(call.source)));
      const callee = await loadModule(target);
      const passed = Object.keys(call).filter((k) => !META_ARGUMENTS.has(k));
      for (const argument of passed) assert.ok(callee.variable[argument], `${dir}: module ${callName} passes ${argument}, a variable of ${target}`);
      for (const [variableName, variableBodies] of Object.entries(callee.variable)) {
        if (!('default' in only(variableBodies, variableName))) {
          assert.ok(passed.includes(variableName), `${dir}: module ${callName} passes the required ${variableName} of ${target}`);
        }
      }
    }
    for (const [, callName, output] of text.matchAll(/\bmodule\.([a-z0-9_]+)(?:\[\d+\])?\.([a-z0-9_]+)/g)) {
      const call = only(json.module[callName as string], `${dir} module ${callName}`);
      const callee = await loadModule(normalize(join(dir, String(call.source))));
      assert.ok(callee.output[output as string], `${dir}: module.${callName}.${output} is an output of ${String(call.source)}`);
    }
  });
}
