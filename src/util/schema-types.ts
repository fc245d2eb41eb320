/**
 * Short names for the valibot schema types the wire schemas are annotated
 * with. The annotations exist because the client and the schemas are
 * published to JSR, which requires explicit types on every exported
 * constant ("no slow types"); tsc checks each annotation against the schema
 * it annotates, and every data type is still inferred from the schema.
 *
 * @module
 */

import type * as v from "valibot";

/** A string. */
export type Str = v.StringSchema<undefined>;
/** A boolean. */
export type Bool = v.BooleanSchema<undefined>;
/** A string matching one regular expression. */
export type Pattern = v.SchemaWithPipe<readonly [Str, v.RegexAction<string, undefined>]>;
/** An integer ≥ 0. */
export type Count = v.SchemaWithPipe<readonly [v.NumberSchema<undefined>, v.IntegerAction<number, undefined>, v.MinValueAction<number, 0, undefined>]>;
/** One literal value. */
export type Lit<T extends v.Literal> = v.LiteralSchema<T, undefined>;
/** One of a closed set of values. */
export type OneOf<T extends v.PicklistOptions> = v.PicklistSchema<T, undefined>;
/** `T` or null. */
export type Nullable<T extends v.GenericSchema> = v.NullableSchema<T, undefined>;
/** A readonly array of `T`. */
export type List<T extends v.GenericSchema> = v.SchemaWithPipe<readonly [v.ArraySchema<T, undefined>, v.ReadonlyAction<v.InferOutput<T>[]>]>;
/** An object whose unknown keys are ignored (results and events: a newer server may add fields). */
export type Obj<E extends v.ObjectEntries> = v.ObjectSchema<E, undefined>;
/** An object whose unknown keys are issues. */
export type StrictObj<E extends v.ObjectEntries> = v.StrictObjectSchema<E, undefined>;
/** A strict object that also refuses arrays (`exactObject`). */
export type Exact<E extends v.ObjectEntries> = v.SchemaWithPipe<readonly [v.CustomSchema<Record<string, unknown>, v.ErrorMessage<v.CustomIssue> | undefined>, StrictObj<E>]>;
