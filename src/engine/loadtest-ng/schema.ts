import { z } from 'zod';

/**
 * Response shapes of load-test-ng's HTTP API (mattermost-load-test-ng, package `api`).
 *
 * - Agent routes answer `client.AgentResponse` ({ id, message, status, error }, every key
 *   `omitempty`) with `status` a `loadtest.Status`.
 * - Coordinator routes answer `client.CoordinatorResponse` with `status` a `coordinator.Status`.
 *
 * The Go structs have no json tags on the status fields, so keys are the Go field names.
 * These objects are parsed with `z.object` (unknown keys dropped, not rejected): newer
 * load-test-ng releases add fields (e.g. `ActiveBrowserUsers`) and that must not break a gate.
 */

/**
 * Go marshals the zero `time.Time` as this; it means "not set".
 * @internal For the tests' load-test-ng coordinator client.
 */
export const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

const goTime = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'expected an RFC 3339 time');
const count = z.number().int().nonnegative();

const agentStateSchema = z.enum(['stopped', 'starting', 'running', 'stopping']);

/** `loadtest.Status`. */
const agentStatusSchema = z.object({
  State: agentStateSchema,
  NumUsers: count,
  NumUsersAdded: count,
  NumUsersRemoved: count,
  NumErrors: count,
  StartTime: goTime,
});
export type AgentStatus = z.output<typeof agentStatusSchema>;

const coordinatorStateSchema = z.enum(['stopped', 'running', 'done']);

/** `coordinator.Status`. `done` means the feedback loop found its equilibrium. */
const coordinatorStatusSchema = z.object({
  State: coordinatorStateSchema,
  StartTime: goTime,
  StopTime: goTime,
  ActiveUsers: count,
  NumErrors: count,
  SupportedUsers: count,
});
/** @internal For the tests' load-test-ng coordinator client. */
export type CoordinatorStatus = z.output<typeof coordinatorStatusSchema>;

function responseSchema<S extends z.ZodType>(status: S) {
  return z.object({
    id: z.string().optional(),
    message: z.string().optional(),
    status: status.optional(),
    error: z.string().optional(),
  });
}

export const agentResponseSchema = responseSchema(agentStatusSchema);
export type AgentResponse = z.output<typeof agentResponseSchema>;

/** @internal For the tests' load-test-ng coordinator client and its recorded responses. */
export const coordinatorResponseSchema = responseSchema(coordinatorStatusSchema);

/**
 * Agent and coordinator ids: the create routes only match `^[a-z]+[0-9]*$`
 * (`Queries("id", "{^[a-z]+[0-9]*$}")`), so anything else would 404 confusingly.
 */
export const resourceIdSchema = z.string().regex(/^[a-z]+[0-9]*$/, 'expected lower-case letters followed by digits, such as "lt0"');
