import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { runTool } from '../../util/run-tool.ts';

/**
 * The functions of Python source files as Python's own parser sees them
 * (python-functions.py, run by the interpreter of the tree they belong to, so the grammar
 * is the one the code runs under): each named and placed as CPython names and places its
 * code object (co_qualname, co_firstlineno), which is how py-spy reports a frame.
 */
export interface PythonFunction {
  /** Class.method, outer.<locals>.inner, f.<locals>.<listcomp>. */
  qualname: string;
  /** co_firstlineno: the first decorator's line when decorated, else the def line. */
  first: number;
  /** The def (or class, lambda, comprehension) line itself. */
  line: number;
  /** The body's last line. */
  end: number;
}

const SCRIPT = fileURLToPath(new URL('./python-functions.py', import.meta.url));

const functionSchema = z.strictObject({
  qualname: z.string().min(1),
  first: z.number().int().positive(),
  line: z.number().int().positive(),
  end: z.number().int().positive(),
});
const answerSchema = z.record(z.string(), z.union([z.array(functionSchema), z.strictObject({ error: z.string() })]));

/** Each file's functions, or why it could not be parsed; `python` is the tree's interpreter. */
export async function pythonFunctions(python: string, files: readonly string[]): Promise<Map<string, PythonFunction[] | string>> {
  const out = new Map<string, PythonFunction[] | string>();
  if (files.length === 0) return out;
  // -I: no user site-packages, no PYTHON* variables: the standard library's ast only.
  const { stdout } = await runTool(python, ['-I', SCRIPT, ...files], { timeoutMs: 120_000 });
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    throw new Error(`${python} ${SCRIPT} printed something other than JSON: ${stdout.slice(0, 200)}`);
  }
  const parsed = answerSchema.safeParse(json);
  if (!parsed.success) throw new Error(`${python} ${SCRIPT}: unexpected answer: ${parsed.error.issues[0]?.message ?? ''}`);
  for (const file of files) {
    const found = parsed.data[file];
    out.set(file, found === undefined ? 'not parsed' : Array.isArray(found) ? found : found.error);
  }
  return out;
}
