import { z } from 'zod';

/** Any JSON value (task inputs, metadata, heartbeat stats). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Schema for {@link JsonValue}. */
export const JsonValue: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(JsonValue), z.record(z.string(), JsonValue)]),
);

/** A JSON object. */
export const JsonObject = z.record(z.string(), JsonValue);
/** @see {@link JsonObject} */
export type JsonObject = z.infer<typeof JsonObject>;
