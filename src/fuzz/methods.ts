/**
 * The method table of protocol version 1 as the spec states it, spelled out
 * in the kit rather than imported from the server's method table: the kit
 * encodes the spec, so a server that drifts from it is caught by the kit
 * instead of silently followed (and the kit stays free of valibot, so
 * `fast-check` remains its only dependency).
 *
 * @module
 */

/** One method of protocol version 1. */
export type WireMethod =
  | "initialize"
  | "status"
  | "shutdown"
  | "session.create"
  | "session.open"
  | "session.list"
  | "session.discover"
  | "history.page"
  | "turn.start"
  | "turn.cancel"
  | "approval.answer"
  | "model.catalog"
  | "model.catalog.status"
  | "model.refresh"
  | "selection.set"
  | "operation.cancel";

/** All sixteen methods, in the spec's order, so a fuzzer can cover every one (the spec advertises all sixteen). */
export const WIRE_METHODS: readonly WireMethod[] = Object.freeze([
  "initialize",
  "status",
  "shutdown",
  "session.create",
  "session.open",
  "session.list",
  "session.discover",
  "history.page",
  "turn.start",
  "turn.cancel",
  "approval.answer",
  "model.catalog",
  "model.catalog.status",
  "model.refresh",
  "selection.set",
  "operation.cancel",
]);

/**
 * The advertised methods a client may call only after listing them in
 * `initialize`'s `required_capabilities` (the spec's negotiated four); any
 * other call of one is `unsupported_capability`.
 */
export const NEGOTIATED_METHODS: readonly WireMethod[] = Object.freeze(["session.discover", "model.catalog.status", "model.refresh", "operation.cancel"]);

/**
 * Capabilities that name no method (`docs/features/local-agent-extensions.md`):
 * the `approval.scope` answers and events, the `run.usage` event,
 * `tool.cards` (`docs/features/local-agent-tool-cards.md`) and
 * `client.tools`. A child advertises one only to a client that required
 * it; requiring it is as valid as requiring a method, within the same bound
 * of 16 names, except that `client.tools` comes with its `client_tools`
 * registry and then allows 18 (`client-tools.ts`).
 */
export const EXTENSION_CAPABILITIES: readonly string[] = Object.freeze(["approval.scope", "run.usage", "tool.cards", "client.tools"]);

/**
 * Methods the phase gate admits only on a ready child (`not_initialized`
 * before, the failed startup's code after a failed one): every method but
 * `initialize`, `status` and `shutdown`, which have lifecycle rules of their own.
 */
export function isGated(method: WireMethod): boolean {
  return method !== "initialize" && method !== "status" && method !== "shutdown";
}
