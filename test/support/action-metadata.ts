import { z } from 'zod';

/**
 * GitHub Actions metadata (`action.yml`), from GitHub's documented syntax
 * ("Metadata syntax for GitHub Actions"): name, description, inputs, outputs, runs
 * (composite, node or docker) and branding. Strict: a misspelt key is an error, as
 * GitHub would ignore it silently. Used by scripts/lint-actions.sh through its test.
 */

const id = z.string().regex(/^[A-Za-z_][A-Za-z0-9_-]*$/, 'must start with a letter or _ and contain only letters, digits, - or _');
const expressionOrBool = z.union([z.boolean(), z.string()]);

const inputSchema = z.strictObject({
  description: z.string().min(1),
  required: expressionOrBool.optional(),
  default: z.string().optional(),
  deprecationMessage: z.string().optional(),
});

const compositeOutputSchema = z.strictObject({ description: z.string().optional(), value: z.string().min(1) });
const plainOutputSchema = z.strictObject({ description: z.string().min(1) });

const stepSchema = z
  .strictObject({
    id: id.optional(),
    name: z.string().optional(),
    if: expressionOrBool.optional(),
    run: z.string().optional(),
    shell: z.string().optional(),
    uses: z.string().optional(),
    with: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
    env: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
    'continue-on-error': expressionOrBool.optional(),
    'working-directory': z.string().optional(),
  })
  .refine((s) => (s.run === undefined) !== (s.uses === undefined), 'a step has either run or uses, not both or neither')
  .refine((s) => s.run === undefined || s.shell !== undefined, 'a composite run step needs shell')
  .refine((s) => s.uses !== undefined || s.with === undefined, 'with only applies to uses steps');

const compositeRuns = z.strictObject({ using: z.literal('composite'), steps: z.array(stepSchema).min(1) });
const nodeRuns = z.strictObject({
  using: z.enum(['node20', 'node24']),
  main: z.string().min(1),
  pre: z.string().optional(),
  'pre-if': z.string().optional(),
  post: z.string().optional(),
  'post-if': z.string().optional(),
});
const dockerRuns = z.strictObject({
  using: z.literal('docker'),
  image: z.string().min(1),
  env: z.record(z.string(), z.string()).optional(),
  args: z.array(z.string()).optional(),
  entrypoint: z.string().optional(),
  'pre-entrypoint': z.string().optional(),
  'pre-if': z.string().optional(),
  'post-entrypoint': z.string().optional(),
  'post-if': z.string().optional(),
});

const BRANDING_COLORS = ['white', 'black', 'yellow', 'blue', 'green', 'orange', 'red', 'purple', 'gray-dark'] as const;

export const actionMetadataSchema = z
  .strictObject({
    name: z.string().min(1),
    author: z.string().optional(),
    description: z.string().min(1),
    inputs: z.record(id, inputSchema).optional(),
    outputs: z.record(id, z.union([compositeOutputSchema, plainOutputSchema])).optional(),
    runs: z.discriminatedUnion('using', [
      compositeRuns,
      nodeRuns.extend({ using: z.literal('node20') }),
      nodeRuns.extend({ using: z.literal('node24') }),
      dockerRuns,
    ]),
    branding: z.strictObject({ icon: z.string().min(1).optional(), color: z.enum(BRANDING_COLORS).optional() }).optional(),
  })
  .refine((a) => a.runs.using !== 'composite' || Object.values(a.outputs ?? {}).every((o) => 'value' in o), {
    message: 'outputs of a composite action need a value',
    path: ['outputs'],
  });
export type ActionMetadata = z.output<typeof actionMetadataSchema>;

/**
 * loadgate's own rule on top of the schema: no expression inside a `run:` script, so an
 * input can never be spliced into shell code; inputs go through `env:` instead.
 */
export function expressionsInRunScripts(action: ActionMetadata): string[] {
  if (action.runs.using !== 'composite') return [];
  return action.runs.steps.flatMap((step, i) => (step.run?.includes('${{') ? [`runs.steps[${i}].run contains \${{ }}; pass the value through env:`] : []));
}
