import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { InputError, formatIssuePath } from '../util/errors.ts';

/** `pick-baseline --write-choice` output, read back by `publish` for the report and check run. */
const baselineChoiceSchema = z.strictObject({
  candidate: z.string(),
  baseline: z.string(),
  reason: z.string().max(1000),
  considered: z.number().int().nonnegative(),
  skipped: z.strictObject({
    prerelease: z.number().int().nonnegative(),
    notBelow: z.number().int().nonnegative(),
    notVersion: z.number().int().nonnegative(),
    patternMismatch: z.number().int().nonnegative(),
  }),
});
export type BaselineChoiceFile = z.output<typeof baselineChoiceSchema>;

export async function readBaselineChoice(path: string): Promise<BaselineChoiceFile> {
  let data: unknown;
  try {
    data = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new InputError(`cannot read baseline choice ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const parsed = baselineChoiceSchema.safeParse(data);
  if (!parsed.success) {
    throw new InputError(
      `${path} is not a baseline choice written by pick-baseline: ${parsed.error.issues.map((i) => `${formatIssuePath(i.path)}: ${i.message}`).join('; ')}`,
    );
  }
  return parsed.data;
}
