/**
 * How the published JSON Schemas get their `description`s: tables keyed by
 * the valibot object schemas themselves, one sentence for the object and one
 * for each of its fields, whose keys the type checks against the schema's
 * entries (a field added to a schema without a description, or a
 * description for no field, does not compile). `json-schema.ts` attaches
 * them while converting, so the documents stay generated from the one
 * definition the server and the client use.
 *
 * They are tables rather than `v.description()` pipes on the schemas so
 * that the text, and a pipe around every field, stays out of the modules
 * every child and every client load at startup and out of each frame's
 * validation: only `magi-code schema` and scripts/gen-wire-schemas.mjs
 * import them (docs/schema/README.md).
 *
 * @module
 */

import type * as v from "valibot";

/** An object schema's entries, looked for through the pipes (`exactObject`, paged params) around it. */
export type EntriesOf<S> = S extends { readonly entries: infer E extends v.ObjectEntries } ? E
  : S extends { readonly pipe: infer P extends readonly unknown[] } ? EntriesOf<P[number]>
  : never;

/** The description of one object schema and of each of its fields. */
export interface Description {
  /** What the object is. */
  readonly about: string;
  /** Field name → what the field holds. */
  readonly fields: { readonly [field: string]: string };
}

/** Descriptions keyed by the object schema they describe (the object inside any pipe). */
export type Descriptions = ReadonlyMap<v.GenericSchema, Description>;

/** `schema` itself when it is an object schema, else the object schema its pipe holds, else undefined. */
export function objectOf(schema: v.GenericSchema): v.GenericSchema | undefined {
  if ("entries" in schema) return schema;
  if (!("pipe" in schema)) return undefined;
  for (const item of schema.pipe as readonly { readonly kind: string }[]) {
    const found = item.kind === "schema" ? objectOf(item as v.GenericSchema) : undefined;
    if (found !== undefined) return found;
  }
  return undefined;
}

/** One table entry: `schema`'s object with what it is and what each of its fields holds. */
export function describe<S extends v.GenericSchema>(
  schema: S,
  about: string,
  fields: { readonly [K in keyof EntriesOf<S>]: string },
): [v.GenericSchema, Description] {
  const object = objectOf(schema);
  if (object === undefined) throw new TypeError(`describe() needs an object schema, not ${schema.type}`);
  return [object, { about, fields }];
}
