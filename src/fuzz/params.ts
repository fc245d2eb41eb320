/**
 * Valid params for every method of protocol version 1, at the spec's
 * boundaries: ids of 1 and 64 bytes, limits 1 and 100, names of exactly 256
 * UTF-8 bytes, optional fields omitted, null or set, every effort request
 * object. A conforming child never answers them `invalid_params`; what it
 * answers instead depends on its phase and state (see `admission.ts`).
 *
 * @module
 */

import fc from "fast-check";
import { type FieldSpec, isPaged, PARAMS_FIELDS, validValue } from "./fields.ts";
import { type KitMethod, type WireMethod, WIRE_METHODS } from "./methods.ts";
import { identifier } from "./text.ts";

/**
 * Values from a live child to put into the fields of the same name instead
 * of generated ones: `session_id`, `revision` (of `history.page`),
 * `selection_revision`, `catalog_revision`, `provider`, `model`, `run_id`,
 * `approval_id`, `id` (of `operation.cancel`). With them a valid request can
 * reach the operation, and an invalid one differs from such a request by its
 * one defect only, so a child that skipped a check would act on it (and a
 * test can see it write). Only required string fields take them.
 */
export type ParamsContext = Readonly<Partial<Record<string, string>>>;

/** The valid value of `spec` in `context`: the context's own when it has one. */
export function fieldValue(spec: FieldSpec, context: ParamsContext): fc.Arbitrary<unknown> {
  const given = spec.required && spec.kind !== "capabilities" ? context[spec.name] : undefined;
  return given === undefined ? validValue(spec.kind, WIRE_METHODS) : fc.constant(given);
}

/** Revision and cursor of a paged request: a fresh one (both omitted, both null, or one of each) or a continuation (both set). */
function pagePosition(): fc.Arbitrary<Record<string, unknown>> {
  return fc.oneof(
    fc.constant({}),
    fc.constant({ revision: null, cursor: null }),
    fc.constant({ revision: null }),
    fc.constant({ cursor: null }),
    fc.tuple(identifier(), identifier()).map(([revision, cursor]) => ({ revision, cursor })),
  );
}

/**
 * Valid params of `method` for a child that negotiated `negotiated`: every
 * required field, each optional one either omitted or present (paged
 * methods get a consistent revision/cursor pair; an extension's field only
 * when its capability is negotiated), with the values of `context` where
 * it has them.
 */
export function validParams(method: KitMethod, context: ParamsContext = {}, negotiated: readonly string[] = []): fc.Arbitrary<Record<string, unknown>> {
  const fields = PARAMS_FIELDS[method].filter((spec) => spec.extension === undefined || negotiated.includes(spec.extension));
  if (isPaged(method)) {
    const limit = fields.find((spec) => spec.name === "limit")!;
    return fc.tuple(pagePosition(), fc.option(fieldValue(limit, context), { nil: undefined })).map(([position, value]) =>
      value === undefined ? position : { ...position, limit: value }
    );
  }
  const entries = fields.map((spec) => {
    const value = fieldValue(spec, context);
    return (spec.required ? value : fc.option(value, { nil: undefined })).map((item) => [spec.name, item] as const);
  });
  return fc.tuple(...entries).map((pairs) => Object.fromEntries(pairs.filter(([, value]) => value !== undefined)));
}

/** A method and valid params for it: {@link validParams} over every method but `shutdown`, which ends input. */
export function validCall(context: ParamsContext = {}): fc.Arbitrary<{ method: WireMethod; params: Record<string, unknown> }> {
  return fc.constantFrom(...WIRE_METHODS.filter((method) => method !== "shutdown"))
    .chain((method) => validParams(method, context).map((params) => ({ method, params })));
}
