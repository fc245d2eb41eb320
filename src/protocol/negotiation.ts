/**
 * Negotiated capabilities (`docs/features/local-agent-extensions.md`): some
 * advertised operations may be called only by a client that listed them in
 * `initialize`'s `required_capabilities`, so a client written against the
 * base contract never meets their extra codes or semantics by accident. A
 * call without that negotiation is `unsupported_capability`.
 *
 * @module
 */

import { ErrorCode as Codes } from "./errors.ts";
import type { Reject } from "./dispatcher.ts";
import type { MethodName } from "./methods.ts";

/** The advertised methods a client must require before calling them. */
export const NEGOTIATED: ReadonlySet<MethodName> = new Set<MethodName>(["operation.cancel", "model.catalog.status", "model.refresh", "session.discover"]);

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

  /** Whether the admitted `initialize` required `method`. */
  negotiated(method: MethodName): boolean {
    return this.#required.has(method);
  }

  /** Wraps `handle` so that a call of `method` without negotiation is `unsupported_capability`. */
  only<T, P>(method: MethodName, handle: (ready: T, id: string, params: P) => void): (ready: T, id: string, params: P) => void {
    return (ready, id, params) => {
      if (NEGOTIATED.has(method) && !this.#required.has(method)) return this.#reject(id, Codes.unsupportedCapability);
      handle(ready, id, params);
    };
  }
}
