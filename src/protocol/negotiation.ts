/**
 * Negotiated capabilities (`docs/features/local-agent-extensions.md`): some
 * advertised operations may be called only by a client that listed them in
 * `initialize`'s `required_capabilities`, so a client written against the
 * base contract never meets their extra codes or semantics by accident. A
 * call without that negotiation is `unsupported_capability`.
 *
 * Required-only requests go further: the methods of `REQUIRED_ONLY`
 * (`methods.ts`) and the {@link EXTENSION_REQUESTS} beyond the method
 * table. For a client that did not require one it does not exist at all,
 * so the dispatcher answers it as an unknown method before reading its
 * params; one gate decides for both ({@link Negotiation.routed}).
 *
 * Extension capabilities name no method but a behaviour (an extra event):
 * a client that requires one sees it in its `capabilities` and gets the
 * behaviour; every other client keeps exactly the base capabilities and
 * events, byte for byte.
 *
 * @module
 */

import { ErrorCode as Codes } from "./errors.ts";
import type { Reject } from "./dispatcher.ts";
import { CAPABILITIES, isMethodName, type MethodName, REQUIRED_ONLY } from "./methods.ts";
import { EmptyParamsSchema } from "./schemas.ts";

/** The advertised methods a client must require before calling them. */
export const NEGOTIATED: ReadonlySet<MethodName> = new Set<MethodName>(["operation.cancel", "model.catalog.status", "model.refresh", "session.discover"]);

/**
 * Capabilities that are no base method: advertised only to a client that
 * required them. `agent.info` is also a request, and `client.tools` adds
 * the request `client.tool.result`, each served only to such a client
 * (`Dispatcher`'s extension requests).
 */
export const EXTENSION_CAPABILITIES = ["agent.info", "approval.scope", "client.tools", "run.usage", "tool.cards"] as const;

/**
 * The extension capabilities that are also requests, with their params
 * schema (`Dispatcher`'s extension requests). Here rather than beside their
 * results so a child that serves none loads nothing more than this table.
 */
export const EXTENSION_REQUESTS: { readonly "agent.info": typeof EmptyParamsSchema } = { "agent.info": EmptyParamsSchema };

/** The one extension request named apart from its capability: `client.tools` brings it. */
const CLIENT_TOOL_RESULT = "client.tool.result";

/** One extension capability. */
export type ExtensionCapability = typeof EXTENSION_CAPABILITIES[number];

/**
 * Extension capabilities with a descriptor in `initialize`'s `extensions`
 * (`src/protocol/extensions.ts`, loaded only when one was required).
 */
export const DESCRIBED_EXTENSIONS: ReadonlySet<ExtensionCapability> = new Set<ExtensionCapability>(["tool.cards"]);

/** A capability name this child knows: a method, or an extension capability. */
export type Capability = MethodName | ExtensionCapability;

/** Whether `name` is a capability this child serves (own method names only, so `toString` is not one). */
export function isCapability(name: string): name is Capability {
  return isMethodName(name) || (EXTENSION_CAPABILITIES as readonly string[]).includes(name);
}

/**
 * The `capabilities` of `initialize`'s result for a client that required
 * `required`: every method but the required-only ones, plus each extension
 * capability and required-only method it required, sorted. A base client's
 * list is exactly the methods every client has.
 */
export function advertisedCapabilities(required: readonly string[]): readonly Capability[] {
  const extensions = [...EXTENSION_CAPABILITIES, ...REQUIRED_ONLY].filter((name) => required.includes(name));
  return extensions.length === 0 ? CAPABILITIES : [...CAPABILITIES, ...extensions].sort();
}

/** What the admitted `initialize` required, and the gate on negotiated methods. */
export class Negotiation {
  #required: ReadonlySet<string> = new Set();
  readonly #reject: Reject;

  /** Creates the record for one child; `reject` answers calls that were not negotiated. */
  constructor(reject: Reject) {
    this.#reject = reject;
  }

  /** Records the capabilities of the admitted `initialize` (called once, after its preflight). */
  admit(required: readonly string[]): void {
    this.#required = new Set(required);
  }

  /** The `capabilities` the admitted `initialize` is answered with. */
  capabilities(): readonly Capability[] {
    return advertisedCapabilities([...this.#required]);
  }

  /** Whether the admitted `initialize` required `capability`. */
  negotiated(capability: Capability): boolean {
    return this.#required.has(capability);
  }

  /**
   * Whether a request named `method` is routed for this client: every name
   * but a required-only method or extension request it did not require (a
   * name that is no method at all is routed, to be answered as unknown).
   */
  routed(method: string): boolean {
    if (method === CLIENT_TOOL_RESULT) return this.#required.has("client.tools");
    const requiredOnly = (isMethodName(method) && REQUIRED_ONLY.has(method)) || Object.hasOwn(EXTENSION_REQUESTS, method);
    return !requiredOnly || this.#required.has(method);
  }

  /** Wraps `handle` so that a call of `method` without negotiation is `unsupported_capability`. */
  only<T, P>(method: MethodName, handle: (ready: T, id: string, params: P) => void): (ready: T, id: string, params: P) => void {
    return (ready, id, params) => {
      if (NEGOTIATED.has(method) && !this.#required.has(method)) return this.#reject(id, Codes.unsupportedCapability);
      handle(ready, id, params);
    };
  }
}
