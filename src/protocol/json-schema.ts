/**
 * The wire's JSON Schemas, generated from the valibot schemas the server and
 * the client use (params, results, events, envelopes), so a client in any
 * language can validate against the same contract. `scripts/gen-wire-schemas.mjs`
 * writes them to `docs/schema/` (and `npm test` fails when those files
 * drift), and `magi-code schema` prints them; both call {@link wireSchemas}.
 *
 * `errorMode: "ignore"` is deliberate, as for the settings schema: byte
 * lengths, the refusal of arrays, distinct capability names, a non-blank
 * prompt and the revision/cursor pairing are valibot checks with no JSON
 * Schema equivalent, so each schema is slightly more permissive than the
 * runtime, never stricter. Result and event objects allow unknown fields, as
 * the spec lets a client ignore them; params and requests do not.
 *
 * @module
 */

import { toJsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";
import { EventFrameSchema, RequestFrameSchema, ResponseFrameSchema } from "./envelopes.ts";
import { EVENTS } from "./events.ts";
import { METHODS } from "./methods.ts";
import { RESULTS } from "./results.ts";

/** Where the published files are served from; each schema's `$id` is its file there. */
export const SCHEMA_BASE = "https://unpkg.com/magi-code/docs/schema/";

/** One schema document as JSON. */
export type JsonSchemaDocument = { readonly [key: string]: unknown };

function document(path: string, title: string, schema: v.GenericSchema): JsonSchemaDocument {
  const { $schema, ...body } = toJsonSchema(schema, { target: "draft-07", errorMode: "ignore" });
  return { $schema, $id: `${SCHEMA_BASE}${path}`, title, ...body };
}

/**
 * Every wire schema, keyed by its path under `docs/schema/`: the three
 * envelopes, then `params/`, `results/` and `events/` per method or event, in
 * sorted order so the output is stable.
 */
export function wireSchemas(): Record<string, JsonSchemaDocument> {
  const out: Record<string, JsonSchemaDocument> = {
    "request.schema.json": document("request.schema.json", "magi-code.local-agent v1 request frame", RequestFrameSchema),
    "response.schema.json": document("response.schema.json", "magi-code.local-agent v1 response frame", ResponseFrameSchema),
    "event.schema.json": document("event.schema.json", "magi-code.local-agent v1 event frame", EventFrameSchema),
  };
  for (const method of Object.keys(METHODS).sort() as (keyof typeof METHODS)[]) {
    out[`params/${method}.schema.json`] = document(`params/${method}.schema.json`, `${method} params`, METHODS[method]);
    out[`results/${method}.schema.json`] = document(`results/${method}.schema.json`, `${method} result`, RESULTS[method]);
  }
  for (const event of Object.keys(EVENTS).sort() as (keyof typeof EVENTS)[]) {
    out[`events/${event}.schema.json`] = document(`events/${event}.schema.json`, `${event} event data`, EVENTS[event]);
  }
  return out;
}
