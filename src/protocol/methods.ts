/**
 * The method table of protocol version 1 as this backend serves it: every
 * method name with the schema its params must match. The names are those of
 * `negotiation.ts` (the base methods and the required-only ones), which are
 * also the capabilities `initialize` advertises and checks
 * `required_capabilities` against; the table must hold exactly them, so a
 * method cannot be served without being advertised, or the other way round.
 *
 * @module
 */

import type * as v from "valibot";
import type { TableMethod } from "./negotiation.ts";
import {
  ApprovalAnswerParamsSchema,
  EmptyParamsSchema,
  HistoryPageParamsSchema,
  InitializeParamsSchema,
  OperationCancelParamsSchema,
  SessionDiscoverParamsSchema,
  SessionListParamsSchema,
  SessionOpenParamsSchema,
  SessionRewindParamsSchema,
  SessionRewindPreviewParamsSchema,
  TurnCancelParamsSchema,
  TurnStartParamsSchema,
} from "./schemas.ts";
import { ModelCatalogParamsSchema, ModelRefreshParamsSchema, SelectionSetParamsSchema } from "./selection-schemas.ts";

/** Method name → params schema, for every implemented method. */
export const METHODS = {
  "initialize": InitializeParamsSchema,
  "status": EmptyParamsSchema,
  "shutdown": EmptyParamsSchema,
  "session.create": EmptyParamsSchema,
  "session.open": SessionOpenParamsSchema,
  "session.list": SessionListParamsSchema,
  "session.discover": SessionDiscoverParamsSchema,
  "history.page": HistoryPageParamsSchema,
  "turn.start": TurnStartParamsSchema,
  "turn.cancel": TurnCancelParamsSchema,
  "approval.answer": ApprovalAnswerParamsSchema,
  "model.catalog": ModelCatalogParamsSchema,
  "model.catalog.status": EmptyParamsSchema,
  "model.refresh": ModelRefreshParamsSchema,
  "selection.set": SelectionSetParamsSchema,
  "operation.cancel": OperationCancelParamsSchema,
  "session.rewind.preview": SessionRewindPreviewParamsSchema,
  "session.rewind": SessionRewindParamsSchema,
} as const satisfies { readonly [M in TableMethod]: v.GenericSchema };

/** One implemented method's name. */
export type MethodName = keyof typeof METHODS;

/** The validated params of method `M`. */
export type MethodParams<M extends MethodName> = v.InferOutput<(typeof METHODS)[M]>;

/**
 * One handler per method, each receiving params its schema already
 * validated. A handler answers its request itself, now or later.
 */
export type MethodHandlers = {
  readonly [M in MethodName]: (id: string, params: MethodParams<M>) => void;
};

/** Whether `name` is an implemented method; own keys only, so `toString` is not one. */
export function isMethodName(name: string): name is MethodName {
  return Object.hasOwn(METHODS, name);
}
