/**
 * The wire's JSON Schemas, generated from the valibot schemas the server and
 * the client use (params, results, events, envelopes), so a client in any
 * language can validate against the same contract. `scripts/gen-wire-schemas.mjs`
 * writes them to `docs/schema/` (and `npm test` fails when those files
 * drift), and `magi-code schema` prints them; both call {@link wireSchemas}.
 * docs/schema/README.md is the reader's guide.
 *
 * What the conversion adds to valibot's own: a `description` on every object
 * and field (the tables of `describe.ts`); `additionalProperties: true`
 * spelled out on result, event and output envelope objects, which accept
 * unknown fields as the spec lets a client ignore them (params and requests
 * are strict); a `pattern` instead of draft-07's unknown `uuid` format, so
 * no validator needs format plugins; and request and event frames as
 * `if`/`then` branches keyed by `method` and `event`, and responses by the
 * presence of `error`, so a validator reports the one branch the frame names
 * rather than a failure per method.
 *
 * `errorMode: "ignore"` is deliberate, as for the settings schema: byte
 * lengths, the refusal of arrays, distinct capability names, a non-blank
 * prompt and the revision/cursor pairing are valibot checks with no JSON
 * Schema equivalent, so each schema is slightly more permissive than the
 * runtime, never stricter.
 *
 * @module
 */

import { type ConversionConfig, type JsonSchema, toJsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";
import { AGENT_INFO, AgentInfoResultSchema } from "./agent-info.ts";
import type { Descriptions } from "./describe.ts";
import { AGENT_INFO_DESCRIPTIONS } from "./descriptions-agent-info.ts";
import { CARD_DESCRIPTIONS } from "./descriptions-cards.ts";
import { EVENT_DESCRIPTIONS } from "./descriptions-events.ts";
import { PARAMS_DESCRIPTIONS } from "./descriptions-params.ts";
import { RESULT_DESCRIPTIONS } from "./descriptions-results.ts";
import { SELECTION_DESCRIPTIONS } from "./descriptions-selection.ts";
import { REWIND_DESCRIPTIONS } from "./descriptions-rewind.ts";
import { ErrorResponseSchema, EventFrameSchema, RequestFrameSchema, ResultResponseSchema } from "./envelopes.ts";
import { EVENTS } from "./events.ts";
import { METHODS } from "./methods.ts";
import { RESULTS } from "./results.ts";
import { AgentInfoParamsSchema } from "./schemas.ts";

/** Where the published files are served from; each schema's `$id` is its file there. */
export const SCHEMA_BASE = "https://unpkg.com/magi-code/docs/schema/";

/** What valibot's `uuid()` accepts (its `UUID_REGEX`, case-insensitive), without flags: JSON Schema patterns have none. */
export const UUID_PATTERN = "^[0-9A-Fa-f]{8}(-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}$";

/** One schema document as JSON. */
export type JsonSchemaDocument = { readonly [key: string]: unknown };

const DESCRIPTIONS: Descriptions = new Map([...PARAMS_DESCRIPTIONS, ...RESULT_DESCRIPTIONS, ...SELECTION_DESCRIPTIONS, ...REWIND_DESCRIPTIONS, ...EVENT_DESCRIPTIONS, ...CARD_DESCRIPTIONS, ...AGENT_INFO_DESCRIPTIONS]);

/** Adds `schema`'s descriptions to its converted object, each field's first among its keys, and spells out an open object. */
function annotate(schema: v.GenericSchema, converted: JsonSchema): void {
  const description = DESCRIPTIONS.get(schema);
  const properties = converted.properties as Record<string, JsonSchema> | undefined;
  if (description !== undefined && properties !== undefined) {
    converted.description = description.about;
    for (const [field, text] of Object.entries(description.fields)) {
      const { description: _nested, ...rest } = properties[field] as Record<string, unknown>;
      properties[field] = { description: text, ...rest };
    }
  }
  if (schema.type === "object" || schema.type === "loose_object") converted.additionalProperties = true;
}

const CONFIG: ConversionConfig = {
  target: "draft-07",
  errorMode: "ignore",
  overrideSchema: ({ valibotSchema, jsonSchema }) => {
    annotate(valibotSchema as v.GenericSchema, jsonSchema);
    return undefined;
  },
  overrideAction: ({ valibotAction, jsonSchema }) => {
    if (valibotAction.type !== "uuid") return undefined;
    const { format: _format, ...rest } = jsonSchema;
    return { ...rest, pattern: UUID_PATTERN };
  },
};

/** `schema` converted, without `$schema` (a document adds it once at its root). */
function convert(schema: v.GenericSchema): JsonSchemaDocument {
  const { $schema: _schema, ...body } = toJsonSchema(schema, CONFIG);
  return body;
}

/** `body` under `title`, its description right after the title. */
function headed(title: string, body: JsonSchemaDocument): JsonSchemaDocument {
  const { description, ...rest } = body;
  return { title, ...(description === undefined ? {} : { description }), ...rest };
}

function document(path: string, title: string, body: JsonSchemaDocument): JsonSchemaDocument {
  return { $schema: "http://json-schema.org/draft-07/schema#", $id: `${SCHEMA_BASE}${path}`, ...headed(title, body) };
}

/**
 * A frame that is one of `options`, told apart by the literal field `tag`:
 * `tag` must be one of the names, and the frame must match the branch its
 * tag names, `definitions/<name>`.
 */
function discriminated(tag: "method" | "event", options: readonly v.ObjectSchema<v.ObjectEntries, undefined>[] | readonly v.StrictObjectSchema<v.ObjectEntries, undefined>[], about: string): JsonSchemaDocument {
  const definitions: Record<string, JsonSchemaDocument> = {};
  for (const option of options) {
    const name = (option.entries[tag] as v.LiteralSchema<string, undefined>).literal;
    definitions[name] = headed(`${name} ${tag === "method" ? "request" : "event"}`, convert(option));
  }
  const names = Object.keys(definitions);
  return {
    description: about,
    type: "object",
    properties: { [tag]: { description: `The ${tag}: it selects the branch (definitions/<${tag}>) the rest of the frame must match.`, type: "string", enum: names } },
    required: [tag],
    allOf: names.map((name) => ({
      if: { type: "object", properties: { [tag]: { const: name } }, required: [tag] },
      then: { $ref: `#/definitions/${name}` },
    })),
    definitions,
  };
}

/** A response frame: the error branch when it has `error`, else the success branch. */
function response(): JsonSchemaDocument {
  return {
    description: "A response frame: exactly one of `result` (definitions/result) and `error` (definitions/error). Correlate it with its request by `id`, not by order.",
    type: "object",
    // `properties` names `error` only so that ajv's `strict: true` (strictRequired) accepts the `required`.
    if: { type: "object", properties: { error: {} }, required: ["error"] },
    then: { $ref: "#/definitions/error" },
    else: { $ref: "#/definitions/result" },
    definitions: {
      result: headed("success response", convert(ResultResponseSchema)),
      error: headed("error response", convert(ErrorResponseSchema)),
    },
  };
}

/**
 * Every wire schema, keyed by its path under `docs/schema/`: the three
 * envelopes, then `params/`, `results/` and `events/` per method or event, in
 * sorted order so the output is stable.
 */
export function wireSchemas(): Record<string, JsonSchemaDocument> {
  const out: Record<string, JsonSchemaDocument> = {
    "request.schema.json": document(
      "request.schema.json",
      "magi-code.local-agent v1 request frame",
      discriminated("method", RequestFrameSchema.options, "A request frame: exactly protocol, version, id, method and params, with the params its method takes."),
    ),
    "response.schema.json": document("response.schema.json", "magi-code.local-agent v1 response frame", response()),
    "event.schema.json": document(
      "event.schema.json",
      "magi-code.local-agent v1 event frame",
      discriminated("event", EventFrameSchema.options, "An event frame of a run: a known event name with that event's data."),
    ),
  };
  for (const method of Object.keys(METHODS).sort() as (keyof typeof METHODS)[]) {
    out[`params/${method}.schema.json`] = document(`params/${method}.schema.json`, `${method} params`, convert(METHODS[method]));
    out[`results/${method}.schema.json`] = document(`results/${method}.schema.json`, `${method} result`, convert(RESULTS[method]));
  }
  // A negotiated request beyond the method table: its frames are outside request.schema.json, its params and result are here.
  out[`params/${AGENT_INFO}.schema.json`] = document(`params/${AGENT_INFO}.schema.json`, `${AGENT_INFO} params (negotiated)`, convert(AgentInfoParamsSchema));
  out[`results/${AGENT_INFO}.schema.json`] = document(`results/${AGENT_INFO}.schema.json`, `${AGENT_INFO} result (negotiated)`, convert(AgentInfoResultSchema));
  for (const event of Object.keys(EVENTS).sort() as (keyof typeof EVENTS)[]) {
    out[`events/${event}.schema.json`] = document(`events/${event}.schema.json`, `${event} event data`, convert(EVENTS[event]));
  }
  return out;
}
