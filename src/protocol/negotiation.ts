/**
 * Negotiated extensions: operations that are advertised like every other
 * but usable only when the client listed them in `required_capabilities`
 * of its admitted `initialize`; otherwise a call is `unsupported_capability`
 * (spec, "Start a local agent"). A base-only client therefore never meets
 * their semantics by accident. The set is recorded once, when startup is
 * admitted; a rejected `initialize` records nothing.
 *
 * This is the gate of `docs/features/catalog-extensions.md`; it follows the
 * advertising and gating rules of `docs/features/local-agent-extensions.md`.
 *
 * @module
 */

import { ErrorCode } from "./errors.ts";
import type { Reject } from "./dispatcher.ts";
import type { MethodName } from "./methods.ts";

/** The operations only a negotiating client may call. */
export const NEGOTIATED: ReadonlySet<MethodName> = new Set<MethodName>(["model.catalog.status", "model.refresh"]);

/** Which negotiated operations this child's client enabled. */
export class Negotiation {
  readonly #enabled = new Set<string>();
  readonly #reject: Reject;

  /** Creates the gate; `reject` answers calls the client did not negotiate. */
  constructor(reject: Reject) {
    this.#reject = reject;
  }

  /** Records the admitted `initialize`'s required capabilities. */
  admit(required: readonly string[]): void {
    for (const name of required) if (NEGOTIATED.has(name as MethodName)) this.#enabled.add(name);
  }

  /** Whether `name` may be called. */
  enabled(name: MethodName): boolean {
    return !NEGOTIATED.has(name) || this.#enabled.has(name);
  }

  /** Wraps `handle` of negotiated operation `name`: not negotiated is `unsupported_capability`. */
  gate<P>(name: MethodName, handle: (id: string, params: P) => void): (id: string, params: P) => void {
    return (id, params) => (this.enabled(name) ? handle(id, params) : this.#reject(id, ErrorCode.unsupportedCapability));
  }
}
