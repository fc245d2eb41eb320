/**
 * The request names of protocol version 1 and its extensions, as the kit
 * uses them: derived from the protocol's own name tables
 * (`src/protocol/negotiation.ts`, names only, no schema, so the kit stays
 * free of valibot and `fast-check` remains its only dependency), so a
 * method added there is one the kit knows. What the kit states on its own
 * is the spec's behaviour: the params of each method (`fields.ts`) and the
 * admission order (`admission.ts`), which a drifting server fails.
 *
 * @module
 */

import {
  BASE_METHODS,
  type BaseMethod,
  EXTENSION_CAPABILITIES as PROTOCOL_EXTENSIONS,
  EXTENSION_REQUESTS,
  type ExtensionRequestName,
  NEGOTIATED,
  REQUIRED_ONLY_METHODS as PROTOCOL_REQUIRED_ONLY,
  type RequiredOnlyMethod,
} from "../protocol/negotiation.ts";

/** One method of protocol version 1. */
export type WireMethod = BaseMethod;

/** All sixteen methods, in the spec's order, so a fuzzer can cover every one (the spec advertises all sixteen). */
export const WIRE_METHODS: readonly WireMethod[] = Object.freeze([...BASE_METHODS]);

/**
 * The advertised methods a client may call only after listing them in
 * `initialize`'s `required_capabilities` (the spec's negotiated four); any
 * other call of one is `unsupported_capability`.
 */
export const NEGOTIATED_METHODS: readonly WireMethod[] = Object.freeze([...NEGOTIATED]);

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
export const EXTENSION_CAPABILITIES: readonly string[] = Object.freeze([...PROTOCOL_EXTENSIONS]);

/** A request beyond the spec's sixteen methods named as its capability, served only to a client that required it (`agent.info`). */
export type ExtensionMethod = { [R in ExtensionRequestName]: (typeof EXTENSION_REQUESTS)[R] extends R ? R : never }[ExtensionRequestName];

/** Every {@link ExtensionMethod}. */
export const EXTENSION_METHODS: readonly ExtensionMethod[] = Object.freeze(
  (Object.keys(EXTENSION_REQUESTS) as ExtensionRequestName[]).filter((name): name is ExtensionMethod => EXTENSION_REQUESTS[name] === name),
);

/** A request the kit builds params for: a spec method or an extension request named as its capability. */
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
 * Typed as plain names, as the kit first exported it, so
 * `REQUIRED_ONLY_METHODS.includes(name)` takes any string.
 */
export const REQUIRED_ONLY_METHODS: readonly string[] = Object.freeze([...PROTOCOL_REQUIRED_ONLY]);

/**
 * Any request name a child may serve: the spec's methods, the required-only
 * methods and the extension requests (`agent.info`, and `client.tool.result`
 * that `client.tools` brings). `admissionCode` of `admission.ts` takes each.
 */
export type RequestName = WireMethod | RequiredOnlyMethod | ExtensionRequestName;

/** Every {@link RequestName}: the spec's methods in its order, then the required-only methods, then the extension requests. */
export const REQUEST_NAMES: readonly RequestName[] = Object.freeze([...BASE_METHODS, ...PROTOCOL_REQUIRED_ONLY, ...Object.keys(EXTENSION_REQUESTS) as ExtensionRequestName[]]);

/**
 * Requests the phase gate admits only on a ready child (`not_initialized`
 * before, the failed startup's code after a failed one): every request but
 * `initialize`, `status` and `shutdown`, which have lifecycle rules of their own.
 */
export function isGated(method: RequestName): boolean {
  return method !== "initialize" && method !== "status" && method !== "shutdown";
}
