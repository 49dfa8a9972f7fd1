/**
 * The one codec between AGL's TypeScript API (camelCase) and Agent Lightning 0.3's wire format (snake_case).
 * Only known field names are renamed; opaque JSON (task inputs, metadata, attributes) is copied untouched, and unknown
 * keys pass through verbatim in both directions, so spans from other producers survive a round trip.
 */

/** `rolloutId` → `rollout_id`. */
export function camelToSnake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** `rollout_id` → `rolloutId`. */
export function snakeToCamel(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** Describes one object type: its renamed keys, opaque keys, and nested typed fields. */
export interface Shape {
  readonly keys: readonly string[];
  readonly opaque?: readonly string[];
  readonly nested?: Readonly<Record<string, { shape: () => Shape; kind: 'one' | 'many' | 'record' }>>;
}

const one = (shape: () => Shape) => ({ shape, kind: 'one' as const });
const many = (shape: () => Shape) => ({ shape, kind: 'many' as const });
const record = (shape: () => Shape) => ({ shape, kind: 'record' as const });

const CONFIG: Shape = { keys: ['timeoutSeconds', 'unresponsiveSeconds', 'maxAttempts', 'retryCondition'] };
const ATTEMPT: Shape = {
  keys: ['rolloutId', 'attemptId', 'sequenceId', 'startTime', 'endTime', 'status', 'workerId', 'lastHeartbeatTime'],
  opaque: ['metadata'],
};
const ROLLOUT: Shape = {
  keys: ['rolloutId', 'startTime', 'endTime', 'mode', 'resourcesId', 'status'],
  opaque: ['input', 'metadata'],
  nested: { config: one(() => CONFIG), attempt: one(() => ATTEMPT) },
};
const ENQUEUE: Shape = {
  keys: ['mode', 'resourcesId'],
  opaque: ['input', 'metadata'],
  nested: { config: one(() => CONFIG) },
};
const WORKER: Shape = {
  keys: [
    'workerId',
    'status',
    'lastHeartbeatTime',
    'lastDequeueTime',
    'lastBusyTime',
    'lastIdleTime',
    'currentRolloutId',
    'currentAttemptId',
  ],
  opaque: ['heartbeatStats'],
};
const RESOURCE: Shape = {
  keys: ['resourceType', 'endpoint', 'model', 'apiKey', 'template', 'engine'],
  opaque: ['samplingParameters'],
};
const RESOURCES_UPDATE: Shape = {
  keys: ['resourcesId', 'createTime', 'updateTime', 'version'],
  nested: { resources: record(() => RESOURCE) },
};
const CONTEXT: Shape = { keys: ['traceId', 'spanId', 'isRemote'], opaque: ['traceState'] };
const STATUS: Shape = { keys: ['statusCode', 'description'] };
const EVENT: Shape = { keys: ['name', 'timestamp'], opaque: ['attributes'] };
const LINK: Shape = { keys: [], opaque: ['attributes'], nested: { context: one(() => CONTEXT) } };
const OTEL_RESOURCE: Shape = { keys: ['schemaUrl'], opaque: ['attributes'] };
const SPAN: Shape = {
  keys: ['rolloutId', 'attemptId', 'sequenceId', 'traceId', 'spanId', 'parentId', 'name', 'startTime', 'endTime'],
  opaque: ['attributes'],
  nested: {
    status: one(() => STATUS),
    events: many(() => EVENT),
    links: many(() => LINK),
    context: one(() => CONTEXT),
    parent: one(() => CONTEXT),
    resource: one(() => OTEL_RESOURCE),
  },
};

const PRODUCTION_RECORD: Shape = {
  keys: ['kind', 'rolloutId', 'attemptId', 'resourcesId', 'startTime', 'endTime', 'status'],
  opaque: ['input', 'metadata'],
  nested: { spans: many(() => SPAN) },
};

/** The wire shapes the codec knows. */
export const WIRE_SHAPES = {
  rollout: ROLLOUT,
  attempt: ATTEMPT,
  rolloutConfig: CONFIG,
  enqueueRequest: ENQUEUE,
  worker: WORKER,
  resource: RESOURCE,
  resourcesUpdate: RESOURCES_UPDATE,
  span: SPAN,
  productionRecord: PRODUCTION_RECORD,
  spanContext: CONTEXT,
} as const;
/** A wire shape name. */
export type WireShape = keyof typeof WIRE_SHAPES;

type Nested = NonNullable<Shape['nested']>[string];
/** How one incoming key of a shape is written out: its output key, and the shape of its value when typed. */
export interface KeyPlan {
  readonly outKey: string;
  readonly nested: Nested | undefined;
}

/** Per shape and direction, the plan of every known key (unknown keys pass through verbatim). Built once. */
const PLANS = new Map<Shape, { toWire: Map<string, KeyPlan>; fromWire: Map<string, KeyPlan> }>();

/** The plan of every known key of `shape` in one direction (for codecs that work on JSON text, see `toWireJson`). */
export function plansOf(shape: Shape, toWire: boolean): Map<string, KeyPlan> {
  let plans = PLANS.get(shape);
  if (!plans) {
    plans = { toWire: new Map(), fromWire: new Map() };
    for (const camel of [...shape.keys, ...(shape.opaque ?? []), ...Object.keys(shape.nested ?? {})]) {
      const nested = shape.nested?.[camel];
      plans.toWire.set(camel, { outKey: camelToSnake(camel), nested });
      plans.fromWire.set(camelToSnake(camel), { outKey: camel, nested });
    }
    PLANS.set(shape, plans);
  }
  return toWire ? plans.toWire : plans.fromWire;
}

/** `fromWire` also accepts camelCase spellings of known keys (what `snakeToCamel` maps to a known key). */
function planOf(plans: Map<string, KeyPlan>, key: string, toWire: boolean): KeyPlan | undefined {
  return plans.get(key) ?? (toWire ? undefined : plans.get(camelToSnake(snakeToCamel(key))));
}

function convert(shape: Shape, value: unknown, toWire: boolean): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const plans = plansOf(shape, toWire);
  const out: Record<string, unknown> = {};
  const source = value as Record<string, unknown>;
  for (const key of Object.keys(source)) {
    const field = source[key];
    const plan = planOf(plans, key, toWire);
    const nested = plan?.nested;
    const outKey = plan ? plan.outKey : key;
    if (nested === undefined || field === null || field === undefined) {
      out[outKey] = field;
    } else if (nested.kind === 'one') {
      out[outKey] = convert(nested.shape(), field, toWire);
    } else if (nested.kind === 'many') {
      out[outKey] = Array.isArray(field) ? field.map((item) => convert(nested.shape(), item, toWire)) : field;
    } else {
      out[outKey] =
        typeof field === 'object' && !Array.isArray(field)
          ? Object.fromEntries(
              Object.entries(field as Record<string, unknown>).map(([k, v]) => [k, convert(nested.shape(), v, toWire)]),
            )
          : field;
    }
  }
  return out;
}

/** camelCase API object → snake_case wire JSON. Arrays are converted item by item. */
export function toWire(shape: WireShape, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => convert(WIRE_SHAPES[shape], item, true));
  return convert(WIRE_SHAPES[shape], value, true);
}

/** snake_case wire JSON → camelCase API object (not yet validated). Arrays are converted item by item. */
export function fromWire(shape: WireShape, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => convert(WIRE_SHAPES[shape], item, false));
  return convert(WIRE_SHAPES[shape], value, false);
}

/** A validation path in API spelling → the dotted wire spelling (`['config','maxAttempts']` → `config.max_attempts`). */
export function wirePath(path: readonly PropertyKey[]): string {
  return path.map((segment) => (typeof segment === 'string' ? camelToSnake(segment) : String(segment))).join('.');
}
