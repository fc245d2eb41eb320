/**
 * `initialize`, from request to result. The preflight has no effect at all:
 * a second `initialize` (even after a failed startup) is
 * `already_initialized`, and a required capability this child does not serve
 * is `unsupported_capability`, after which a corrected `initialize` may still
 * come. A `client_tools` registry (the `client.tools` extension) is checked
 * first, by a module loaded only for a request that sends one, so a bad
 * registry is `invalid_params` before anything else happens
 * (docs/features/local-agent-client-tools.md). An admitted one starts the
 * single startup task and is answered when that task settles: with
 * `capabilities`, `limits` (a negotiated extension's bounds only when it was
 * negotiated), `status` and the negotiated extensions' descriptors, or with
 * the startup's error code.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { ErrorCode as Codes } from "../protocol/errors.ts";
import { publishedLimits } from "../protocol/limits.ts";
import type { WorkerReplies } from "../protocol/replies.ts";
import { DESCRIBED_EXTENSIONS, isCapability, type Negotiation } from "../protocol/negotiation.ts";
import type { ExtensionDescriptors } from "../protocol/extensions.ts";
import type { ClientToolSpec } from "../protocol/client-tool-registry.ts";
import type { InitializeResult, StatusResult } from "../protocol/results.ts";
import type { InitializeParams } from "../protocol/schemas.ts";
import type { Lifecycle } from "./lifecycle.ts";
import { type McpServerSource, runStartup, type StartupOutcome, type StartupSnapshot } from "./startup.ts";

/** What a startup task that threw (a bug, or a platform failure an adapter did not normalise) reports. */
const STARTUP_CRASHED: StartupOutcome = { ok: false, code: Codes.startupFailed, contextId: null };

/** What {@link describedExtensions} yields when the descriptors' module could not load. */
const LOAD_FAILED = Symbol("load failed");

/**
 * What `initialize` needs from the layers above admission, which alone can
 * create the workers and render `status`.
 */
export interface InitializeHost {
  /** Where startup reads the environment, the filesystem and the clock. */
  readonly runtime: Runtime;
  /** The phase machine that `initialize` moves out of `new`. */
  readonly lifecycle: Lifecycle;
  /** Answers the `initialize` request. */
  readonly replies: WorkerReplies;
  /** Learns which negotiated capabilities the admitted request required. */
  readonly negotiation: Negotiation;
  /**
   * Readies the child on the admitted snapshot and the client's registered
   * tools, if any (its workers load on first use), before the result
   * announces readiness.
   */
  start(snapshot: StartupSnapshot, clientTools: readonly ClientToolSpec[] | null): void;
  /** The `status` object the result carries. */
  status(): StatusResult;
  /** Which MCP servers startup starts (default: the approved ones). */
  readonly mcpServers?: McpServerSource;
}

/** The negotiated extensions' descriptors, as `initialize`'s result carries them. */
type Extensions = NonNullable<InitializeResult["extensions"]>;

/** Admits at most one `initialize` per child and owns its pending request until startup settles. */
export class Initializer {
  readonly #host: InitializeHost;
  #pending: string | null = null;
  #task: Promise<void> | null = null;
  // Requests whose registry is being checked, in arrival order; a later `initialize` waits behind them.
  #preflight: Promise<void> | null = null;
  // Set by a close: a preflight that ends after it admits nothing (answering when the close said so).
  #closed: { readonly answer: boolean } | null = null;
  #registry: readonly ClientToolSpec[] | null = null;
  #extensions: Extensions = {};

  /** Creates the initializer for one child. */
  constructor(host: InitializeHost) {
    this.#host = host;
  }

  /** Handles `initialize` request `id`. */
  initialize(id: string, params: InitializeParams): void {
    const tools = params.client_tools;
    if (tools === undefined && this.#preflight === null) return this.#admit(id, params, null);
    const check = async (): Promise<void> => {
      const registry = tools === undefined ? null : await import("../protocol/client-tool-registry.ts").then((module) => ({ module, tools: module.parseClientToolRegistry(tools) }));
      if (this.#closed !== null) return this.#closed.answer ? this.#host.replies.error(id, Codes.startupCancelled) : undefined;
      if (registry === null) return this.#admit(id, params, null);
      if (registry.tools === null) return this.#host.replies.error(id, Codes.invalidParams);
      this.#admit(id, params, { tools: registry.tools, descriptor: registry.module.clientToolsDescriptor(registry.tools) });
    };
    // A registry module that cannot load is a platform failure, like a startup task that threw.
    const current = (this.#preflight ?? Promise.resolve()).then(check).catch(() => this.#host.replies.error(id, Codes.startupFailed));
    this.#preflight = current;
    void current.then(() => {
      if (this.#preflight === current) this.#preflight = null;
    });
  }

  #admit(id: string, params: InitializeParams, registry: { tools: readonly ClientToolSpec[]; descriptor: NonNullable<Extensions["client.tools"]> } | null): void {
    const { lifecycle, replies } = this.#host;
    if (lifecycle.phase.kind !== "new") return replies.error(id, Codes.alreadyInitialized);
    if (!params.required_capabilities.every((name) => isCapability(name))) {
      return replies.error(id, Codes.unsupportedCapability);
    }
    if (registry !== null) {
      this.#registry = registry.tools;
      this.#extensions = { ...this.#extensions, "client.tools": registry.descriptor };
    }
    this.#host.negotiation.admit(params.required_capabilities);
    const abort = lifecycle.begin();
    this.#pending = id;
    const task = runStartup(this.#host.runtime, abort.signal, this.#host.mcpServers).catch(() => STARTUP_CRASHED);
    const extensions = describedExtensions(params.required_capabilities);
    this.#task = Promise.all([task, extensions]).then(async ([outcome, described]) => {
      if (described !== LOAD_FAILED) return await this.#settle(id, outcome, described);
      if (outcome.ok) await outcome.snapshot.mcp?.close();
      return await this.#settle(id, STARTUP_CRASHED, null);
    });
  }

  /**
   * Cancels a pending startup for a closing connection, answering it
   * `startup_cancelled` when `answer` is set. Returns the startup task, which
   * may still be running (closing the MCP servers it started): exit waits
   * for it under the cleanup bound.
   */
  cancel(answer: boolean): Promise<unknown> {
    this.#closed = { answer };
    const pending = this.#pending;
    if (this.#host.lifecycle.cancel() && pending !== null) {
      this.#pending = null;
      if (answer) this.#host.replies.error(pending, Codes.startupCancelled);
    }
    return Promise.all([this.#preflight, this.#task]);
  }

  #settle(id: string, outcome: StartupOutcome, extensions: ExtensionDescriptors | null): Promise<void> | void {
    // A close answered this request already (or cannot answer it any more): what startup connected has no owner.
    if (this.#pending !== id) return outcome.ok ? outcome.snapshot.mcp?.close() : undefined;
    this.#pending = null;
    const host = this.#host;
    host.lifecycle.settle(outcome);
    if (!outcome.ok) return host.replies.error(id, outcome.code);
    host.start(outcome.snapshot, this.#registry);
    const limits = publishedLimits(host.negotiation.negotiated("session.discover"));
    const result = { capabilities: host.negotiation.capabilities(), limits, status: host.status() } satisfies InitializeResult;
    // The registry's descriptor (dynamic) beside the static ones; a client that negotiated none gets no `extensions` field.
    const all = extensions === null && this.#extensions["client.tools"] === undefined ? null : { ...extensions, ...this.#extensions };
    host.replies.result(id, all === null ? result : { ...result, extensions: all });
  }
}

/**
 * The descriptors of the required extensions that have one, loading their
 * module only then: a base client's child never loads it. A module that
 * cannot load (a damaged installation) is a crashed startup's failure.
 */
function describedExtensions(required: readonly string[]): Promise<ExtensionDescriptors | null | typeof LOAD_FAILED> {
  if (!required.some((name) => (DESCRIBED_EXTENSIONS as ReadonlySet<string>).has(name))) return Promise.resolve(null);
  return import("../protocol/extensions.ts").then((module) => module.extensionDescriptors(required), () => LOAD_FAILED);
}
