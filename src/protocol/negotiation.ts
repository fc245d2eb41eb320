/**
 * Negotiated capabilities (`docs/features/local-agent-extensions.md`): some
 * advertised operations may be called only by a client that listed them in
 * `initialize`'s `required_capabilities`, so a client written against the
 * base contract never meets their extra codes or semantics by accident. A
 * call without that negotiation is `unsupported_capability`.
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
import { CAPABILITIES, isMethodName, type MethodName } from "./methods.ts";

/** The advertised methods a client must require before calling them. */
export const NEGOTIATED: ReadonlySet<MethodName> = new Set<MethodName>(["operation.cancel", "model.catalog.status", "model.refresh", "session.discover"]);

/** Capabilities that are no method: advertised only to a client that required them. */
export const EXTENSION_CAPABILITIES = ["approval.scope", "run.usage", "tool.cards", "client.tools"] as const;

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
 * `required`: every method, plus each extension capability it required,
 * sorted. A base client's list is exactly the methods.
 */
export function advertisedCapabilities(required: readonly string[]): readonly Capability[] {
  const extensions = EXTENSION_CAPABILITIES.filter((name) => required.includes(name));
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

  /** Wraps `handle` so that a call of `method` without negotiation is `unsupported_capability`. */
  only<T, P>(method: MethodName, handle: (ready: T, id: string, params: P) => void): (ready: T, id: string, params: P) => void {
    return (ready, id, params) => {
      if (NEGOTIATED.has(method) && !this.#required.has(method)) return this.#reject(id, Codes.unsupportedCapability);
      handle(ready, id, params);
    };
  }
}
