/**
 * Valibot schemas of the three frame envelopes, for the published JSON Schemas
 * and for the client's reading of output frames: a request (one variant per
 * method, carrying that method's params schema), a response (exactly one of
 * `result` or `error`) and an event (one variant per event name, carrying
 * that event's data schema). The server's own admission does not use these:
 * it must answer each malformed request with the precise code of
 * `docs/protocol.md`'s admission table, which a schema failure cannot tell.
 *
 * @module
 */

import * as v from "valibot";
import { ErrorCodeSchema, EVENTS, type EventName } from "./events.ts";
import { IDENTIFIER_PATTERN, PROTOCOL, PROTOCOL_VERSION } from "./identity.ts";
import { type MethodName, METHODS } from "./methods.ts";
import type { Lit, Nullable, Obj, Pattern } from "../util/schema-types.ts";

type Identity = { readonly protocol: Lit<typeof PROTOCOL>; readonly version: Lit<typeof PROTOCOL_VERSION> };
const identity: Identity = { protocol: v.literal(PROTOCOL), version: v.literal(PROTOCOL_VERSION) };
const IdSchema: Pattern = v.pipe(v.string(), v.regex(IDENTIFIER_PATTERN));

/** What every output frame carries besides its body: the child's instance and the frame's place in its sequence. */
type Output = Identity & { readonly instance_id: Uuid; readonly seq: Seq };
type Seq = v.SchemaWithPipe<readonly [v.NumberSchema<undefined>, v.IntegerAction<number, undefined>, v.MinValueAction<number, 1, undefined>]>;
type Uuid = v.SchemaWithPipe<readonly [v.StringSchema<undefined>, v.UuidAction<string, undefined>]>;
const output: Output = {
  ...identity,
  instance_id: v.pipe(v.string(), v.uuid()),
  seq: v.pipe(v.number(), v.integer(), v.minValue(1)),
};

/** A request frame: exactly the five fields, `params` as the method's schema demands. */
export const RequestFrameSchema: v.VariantSchema<
  "method",
  v.StrictObjectSchema<Identity & { id: Pattern; method: Lit<MethodName>; params: (typeof METHODS)[MethodName] }, undefined>[],
  undefined
> = v.variant(
  "method",
  (Object.keys(METHODS) as MethodName[]).map((method) =>
    v.strictObject({ ...identity, id: IdSchema, method: v.literal(method), params: METHODS[method] })
  ),
);

/** A success response; the result's shape is its method's (`RESULTS`), known only to whoever sent the request. */
export const ResultResponseSchema: Obj<
  Output & {
    type: Lit<"response">;
    id: Pattern;
    result: v.LooseObjectSchema<Record<never, never>, undefined>;
    error: v.ExactOptionalSchema<v.NeverSchema<undefined>, undefined>;
  }
> = v.object({
  ...output,
  type: v.literal("response"),
  id: IdSchema,
  result: v.looseObject({}),
  error: v.exactOptional(v.never()),
});

/** An error response: the code only; `id` is null when the request's identity was unrecoverable. */
export const ErrorResponseSchema: Obj<
  Output & {
    type: Lit<"response">;
    id: Nullable<Pattern>;
    error: Obj<{ code: typeof ErrorCodeSchema }>;
    result: v.ExactOptionalSchema<v.NeverSchema<undefined>, undefined>;
  }
> = v.object({
  ...output,
  type: v.literal("response"),
  id: v.nullable(IdSchema),
  error: v.object({ code: ErrorCodeSchema }),
  result: v.exactOptional(v.never()),
});

/** A response frame: exactly one of `result` or `error`. */
export const ResponseFrameSchema: v.UnionSchema<[typeof ResultResponseSchema, typeof ErrorResponseSchema], undefined> = v.union([ResultResponseSchema, ErrorResponseSchema]);

/**
 * An event frame: a known event name with that event's data. The declared
 * type does not pair each name with its data (use `WireEvent` for that);
 * the schema itself does.
 */
export const EventFrameSchema: v.VariantSchema<
  "event",
  Obj<Output & { type: Lit<"event">; event: Lit<EventName>; data: (typeof EVENTS)[EventName] }>[],
  undefined
> = v.variant(
  "event",
  (Object.keys(EVENTS) as EventName[]).map((event) => v.object({ ...output, type: v.literal("event"), event: v.literal(event), data: EVENTS[event] })),
);

/** Any output frame. */
export const OutputFrameSchema: v.UnionSchema<[typeof ResponseFrameSchema, typeof EventFrameSchema], undefined> = v.union([ResponseFrameSchema, EventFrameSchema]);

/** A response frame as the client reads it. */
export type ResponseFrame = v.InferOutput<typeof ResponseFrameSchema>;
/** An event frame as the client reads it. */
export type EventFrame = v.InferOutput<typeof EventFrameSchema>;
