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
 * Capabilities beyond the spec's methods (`docs/features/local-agent-extensions.md`):
 * the `agent.info` request, the `approval.scope` answers and events,
 * `client.tools` (its `client.tool.result` request: `clientToolResultCode`
 * of `admission.ts`), the `run.usage` event, and `tool.cards`
 * (`docs/features/local-agent-tool-cards.md`). A child advertises one only
 * to a client that required it; requiring it is as valid as requiring a
 * method, within the same bound of 16 names, except that `client.tools`
 * comes with its `client_tools` registry and then allows 18 (`client-tools.ts`).
 */
export const EXTENSION_CAPABILITIES: readonly string[] = Object.freeze(["agent.info", "approval.scope", "client.tools", "run.usage", "tool.cards"]);

/** A request beyond the spec's sixteen methods, served only to a client that required it. */
export type ExtensionMethod = "agent.info";

/** Every {@link ExtensionMethod}. */
export const EXTENSION_METHODS: readonly ExtensionMethod[] = Object.freeze(["agent.info"]);

/** A request the kit builds: a spec method or an extension request. */
export type KitMethod = WireMethod | ExtensionMethod;

/** Whether `method` is an {@link ExtensionMethod}. */
export function isExtensionMethod(method: string): method is ExtensionMethod {
  return (EXTENSION_METHODS as readonly string[]).includes(method);
}

/**
 * Methods beyond the spec that exist only for a client that required them
 * (docs/features/local-agent-extensions.md, "session.rewind"): listed in
 * `capabilities` only then, and for any other client answered
 * `unsupported_method` before their params are read, as a name that is no
 * method. Their params are {@link REQUIRED_ONLY_FIELDS} of `fields.ts`.
 */
export const REQUIRED_ONLY_METHODS: readonly string[] = Object.freeze(["session.rewind.preview", "session.rewind"]);

/**
 * Methods the phase gate admits only on a ready child (`not_initialized`
 * before, the failed startup's code after a failed one): every method but
 * `initialize`, `status` and `shutdown`, which have lifecycle rules of their own.
 */
export function isGated(method: KitMethod): boolean {
  return method !== "initialize" && method !== "status" && method !== "shutdown";
}
