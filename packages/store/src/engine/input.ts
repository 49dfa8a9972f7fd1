import { z } from 'zod';
import {
  AttemptStatus,
  EnqueueRolloutRequest,
  JsonObject,
  JsonValue,
  RolloutConfig,
  RolloutMode,
  RolloutStatus,
  NamedResources,
  WorkerStatus,
  parseApi,
} from '@agl/core/schema';
import { ValidationError } from '@agl/core/errors';
import { idProblem, isForbiddenKey, isRecord } from '@agl/core/guards';

/** Validates input with zod and throws `ValidationError` naming the field; re-exported for the backends. */
export { parseApi };

const Id = z.string().min(1);
/** A rollout, attempt, worker or resources id: a non-empty string. */
export const IdSchema = Id;

/** The 422 for a resource named `__proto__`, `constructor` or `prototype`: such a name would reach the prototype. */
export function forbiddenResourceName(name: string): ValidationError {
  return new ValidationError(
    `Invalid resources: the resource name "${name}" is not allowed (it names an object prototype key). Choose another name.`,
    [{ path: name, message: 'forbidden resource name' }],
    { status: 422 },
  );
}

/** Validates a named-resources map; a forbidden name (`__proto__`, ...) is refused, never dropped. */
export function parseNamedResources(value: unknown): NamedResources {
  if (isRecord(value)) {
    const forbidden = Object.keys(value).find(isForbiddenKey);
    if (forbidden !== undefined) throw forbiddenResourceName(forbidden);
  }
  return parseApi(NamedResources, value, 'resources');
}

const Page = {
  limit: z.number().int().min(-1).default(-1),
  offset: z.number().int().min(0).default(0),
  sortBy: z.string().min(1).nullable().optional(),
  sortOrder: z.enum(['asc', 'desc']).default('asc'),
};
const Logic = z.enum(['and', 'or']).default('and');
const Str = z.string().nullable().optional();

export const QueryRolloutsInput = z.object({
  ...Page,
  statusIn: z.array(RolloutStatus).nullable().optional(),
  rolloutIdIn: z.array(z.string()).nullable().optional(),
  rolloutIdContains: Str,
  modeIn: z.array(RolloutMode).nullable().optional(),
  filterLogic: Logic,
  status: z.array(RolloutStatus).nullable().optional(),
  rolloutIds: z.array(z.string()).nullable().optional(),
});

export const QueryAttemptsInput = z.object({ ...Page, rolloutId: Id });

export const QuerySpansInput = z.object({
  ...Page,
  rolloutId: Id,
  attemptId: Str,
  traceId: Str,
  traceIdContains: Str,
  spanId: Str,
  spanIdContains: Str,
  parentId: Str,
  parentIdContains: Str,
  name: Str,
  nameContains: Str,
  filterLogic: Logic,
});

export const QueryWorkersInput = z.object({
  ...Page,
  statusIn: z.array(WorkerStatus).nullable().optional(),
  workerIdContains: Str,
  filterLogic: Logic,
});

export const QueryResourcesInput = z.object({ ...Page, resourcesId: Str, resourcesIdContains: Str });

/** An id a client chooses (`startRollout`'s `rolloutId` / `attemptId`): a plain name (see `idProblem`). */
const ClientId = z.string().superRefine((id, ctx) => {
  const problem = idProblem(id);
  if (problem) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(id.slice(0, 40))} ${problem}` });
});

export const StartRolloutInput = EnqueueRolloutRequest.extend({
  workerId: z.string().min(1).nullable().optional(),
  rolloutId: ClientId.optional(),
  attemptId: ClientId.optional(),
  startTime: z.number().finite().positive().optional(),
  keepResourcesId: z.boolean().optional(),
});
export { EnqueueRolloutRequest as EnqueueRolloutInput };

export const DequeueInput = z.object({
  limit: z.number().int().default(1),
  workerId: z.string().min(1).nullable().optional(),
});

export const WorkerOption = z.object({ workerId: z.string().min(1).nullable().optional() });

/** `updateRollout` fields; unknown keys are refused so a typo never silently does nothing. */
export const RolloutUpdateInput = z.strictObject({
  input: JsonValue.optional(),
  mode: RolloutMode.optional(),
  resourcesId: z.string().min(1).nullable().optional(),
  status: RolloutStatus.optional(),
  config: RolloutConfig.optional(),
  metadata: JsonObject.nullable().optional(),
});

/** `updateAttempt` fields. */
export const AttemptUpdateInput = z.strictObject({
  status: AttemptStatus.optional(),
  endTime: z.number().finite().positive().optional(),
  workerId: z.string().optional(),
  lastHeartbeatTime: z.number().optional(),
  metadata: JsonObject.nullable().optional(),
});

/** `updateWorker` fields: `heartbeatStats` may be absent but not `null` (AGL quirk 13: a typed error here). */
export const WorkerUpdateInput = z.strictObject({ heartbeatStats: JsonObject.optional() });

export const AttemptRefsInput = z.array(z.object({ rolloutId: Id, attemptId: Id }));
export const SpanNameInput = z.object({ name: z.string() });

export const SequencePairsInput = z.array(z.tuple([Id, z.string()]));

export const WaitInput = z.object({
  rolloutIds: z.array(z.string()),
  timeoutSeconds: z.number().nullable().optional(),
});
