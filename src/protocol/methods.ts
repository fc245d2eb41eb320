/**
 * The method table of protocol version 1 as this backend serves it: every
 * method name with the schema its params must match. The names are also the
 * capabilities `initialize` advertises and checks `required_capabilities`
 * against, so a method cannot be served without being advertised, or the
 * other way round.
 *
 * @module
 */

import type * as v from "valibot";
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
} as const;

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

/**
 * Methods that exist only for a client that required them: advertised to it
 * alone, and for any other client answered as an unknown method is, before
 * its params are read, so a base client's frames stay what they were.
 */
export const REQUIRED_ONLY: ReadonlySet<MethodName> = new Set<MethodName>(["session.rewind.preview", "session.rewind"]);

/** The capabilities `initialize` advertises to every client: every implemented method but {@link REQUIRED_ONLY}'s, sorted. */
export const CAPABILITIES: readonly MethodName[] = (Object.keys(METHODS) as MethodName[]).filter((name) => !REQUIRED_ONLY.has(name)).sort();
