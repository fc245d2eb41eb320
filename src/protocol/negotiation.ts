/**
 * Negotiated capabilities (`docs/features/local-agent-extensions.md`) and
 * the names they govern: which requests exist, for which client, and what
 * `initialize` advertises. Some advertised operations may be called only by
 * a client that listed them in `initialize`'s `required_capabilities`, so a
 * client written against the base contract never meets their extra codes or
 * semantics by accident. A call without that negotiation is
 * `unsupported_capability`.
 *
 * Required-only requests go further: the {@link REQUIRED_ONLY_METHODS} of
 * the method table and the {@link EXTENSION_REQUESTS} beyond it. For a
 * client that did not require their capability they do not exist at all,
 * so the dispatcher answers one as an unknown method before reading its
 * params; one gate decides for both ({@link requiredCapability}, which
 * {@link Negotiation.routed} asks).
 *
 * Extension capabilities name no method but a behaviour (an extra event):
 * a client that requires one sees it in its `capabilities` and gets the
 * behaviour; every other client keeps exactly the base capabilities and
 * events, byte for byte.
 *
 * These tables hold names only, no schema (`methods.ts` keys its schemas by
 * them), so the fuzz kit (`src/fuzz/`) derives its method lists from them
 * without loading valibot.
 *
 * @module
 */

import { ErrorCode as Codes } from "./errors.ts";

/** Answers request `id` with error `code` (the dispatcher's `Reject`, named apart so the method table can type itself by these names without a cycle). */
type Reject = (id: string, code: Codes) => void;

/** The spec's sixteen methods, in its order: every client has them, and `initialize` advertises them to every client. */
export const BASE_METHODS = [
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
] as const;

/** One of the spec's sixteen methods. */
export type BaseMethod = typeof BASE_METHODS[number];

/**
 * Methods of the method table that exist only for a client that required
 * them: advertised to it alone, and for any other client answered as an
 * unknown method is, before its params are read, so a base client's frames
 * stay what they were.
 */
export const REQUIRED_ONLY_METHODS = ["session.rewind.preview", "session.rewind"] as const;

/** One of the {@link REQUIRED_ONLY_METHODS}. */
export type RequiredOnlyMethod = typeof REQUIRED_ONLY_METHODS[number];

/** Every method of the method table: `METHODS` of `methods.ts` holds a schema for exactly these. */
export type TableMethod = BaseMethod | RequiredOnlyMethod;

/**
 * The capabilities `initialize` advertises to every client: the base
 * methods, sorted. Typed by every table method, as it was when the method
 * table exported it, so a user's `CAPABILITIES.includes(method)` takes any
 * `MethodName`.
 */
export const CAPABILITIES: readonly TableMethod[] = [...BASE_METHODS].sort();

/** The advertised methods a client must require before calling them, in the spec's order (the fuzz kit exports them so). */
export const NEGOTIATED: ReadonlySet<BaseMethod> = new Set<BaseMethod>(["session.discover", "model.catalog.status", "model.refresh", "operation.cancel"]);

/**
 * Capabilities that are no method: advertised only to a client that
 * required them. Some bring requests ({@link EXTENSION_REQUESTS}).
 */
export const EXTENSION_CAPABILITIES = ["agent.info", "approval.scope", "client.tools", "run.usage", "tool.cards"] as const;

/** One extension capability. */
export type ExtensionCapability = typeof EXTENSION_CAPABILITIES[number];

/**
 * The requests beyond the method table (`Dispatcher`'s extension requests),
 * each with the extension capability a client must require for it to
 * exist: `agent.info` is its own, `client.tools` brings `client.tool.result`.
 */
export const EXTENSION_REQUESTS = { "agent.info": "agent.info", "client.tool.result": "client.tools" } as const satisfies Readonly<Record<string, ExtensionCapability>>;

/** One of the {@link EXTENSION_REQUESTS}. */
export type ExtensionRequestName = keyof typeof EXTENSION_REQUESTS;

/**
 * Extension capabilities with a descriptor in `initialize`'s `extensions`
 * (`src/protocol/extensions.ts`, loaded only when one was required).
 */
export const DESCRIBED_EXTENSIONS: ReadonlySet<ExtensionCapability> = new Set<ExtensionCapability>(["tool.cards"]);

/** A capability name this child knows: a method, or an extension capability. */
export type Capability = TableMethod | ExtensionCapability;

/** Whether `name` is a capability this child serves. */
export function isCapability(name: string): name is Capability {
  return ([...BASE_METHODS, ...REQUIRED_ONLY_METHODS, ...EXTENSION_CAPABILITIES] as readonly string[]).includes(name);
}

/**
 * The capability a client must have required for a request named `name` to
 * exist: a required-only method's own name, an extension request's
 * capability; undefined for a name every client may send (a base method, or
 * a name that is no method and is answered as unknown).
 */
export function requiredCapability(name: string): RequiredOnlyMethod | ExtensionCapability | undefined {
  if ((REQUIRED_ONLY_METHODS as readonly string[]).includes(name)) return name as RequiredOnlyMethod;
  return Object.hasOwn(EXTENSION_REQUESTS, name) ? EXTENSION_REQUESTS[name as ExtensionRequestName] : undefined;
}

/**
 * The `capabilities` of `initialize`'s result for a client that required
 * `required`: every base method, plus each extension capability and
 * required-only method it required, sorted. A base client's list is
 * exactly the methods every client has.
 */
export function advertisedCapabilities(required: readonly string[]): readonly Capability[] {
  const extensions = [...EXTENSION_CAPABILITIES, ...REQUIRED_ONLY_METHODS].filter((name) => required.includes(name));
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
    const capability = requiredCapability(method);
    return capability === undefined || this.#required.has(capability);
  }

  /** Wraps `handle` so that a call of `method` without negotiation is `unsupported_capability`. */
  only<T, P>(method: BaseMethod, handle: (ready: T, id: string, params: P) => void): (ready: T, id: string, params: P) => void {
    return (ready, id, params) => {
      if (NEGOTIATED.has(method) && !this.#required.has(method)) return this.#reject(id, Codes.unsupportedCapability);
      handle(ready, id, params);
    };
  }
}
