// A node:test reporter that writes every test's and suite's result as one JSON line, for
// scripts/skip-guard/check.ts. It runs beside the console reporter (scripts/run-tests.sh names
// both), so the suite runs once. JavaScript, not TypeScript: node loads reporters before the
// tsx loader that --import registers applies to them.

/**
 * @param {AsyncIterable<{ type: string, data: Record<string, unknown> }>} source
 * @returns {AsyncGenerator<string>}
 */
export default async function* skipGuardReporter(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { data } = event;
    const details = /** @type {{ type?: string } | undefined} */ (data.details);
    yield `${JSON.stringify({
      file: data.file,
      name: data.name,
      nesting: data.nesting,
      suite: details?.type === 'suite',
      passed: event.type === 'test:pass',
      skip: data.skip,
      todo: data.todo,
    })}\n`;
  }
}
