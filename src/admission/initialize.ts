/**
 * `initialize`, from request to result. The preflight has no effect at all:
 * a second `initialize` (even after a failed startup) is
 * `already_initialized`, and a required capability this child does not serve
 * is `unsupported_capability`, after which a corrected `initialize` may still
 * come. An admitted one starts the single startup task and is answered when
 * that task settles: with `capabilities`, `limits` (a negotiated
 * extension's bounds only when it was negotiated) and `status`, or with the
 * startup's error code.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { ErrorCode as Codes } from "../protocol/errors.ts";
import { publishedLimits } from "../protocol/limits.ts";
import type { WorkerReplies } from "../protocol/replies.ts";
import { DESCRIBED_EXTENSIONS, isCapability, type Negotiation } from "../protocol/negotiation.ts";
import type { ExtensionDescriptors } from "../protocol/extensions.ts";
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
  /** Readies the child on the admitted snapshot (its workers load on first use), before the result announces readiness. */
  start(snapshot: StartupSnapshot): void;
  /** The `status` object the result carries. */
  status(): StatusResult;
  /** Which MCP servers startup starts (default: the approved ones). */
  readonly mcpServers?: McpServerSource;
}

/** Admits at most one `initialize` per child and owns its pending request until startup settles. */
export class Initializer {
  readonly #host: InitializeHost;
  #pending: string | null = null;
  #task: Promise<void> | null = null;

  /** Creates the initializer for one child. */
  constructor(host: InitializeHost) {
    this.#host = host;
  }

  /** Handles `initialize` request `id`. */
  initialize(id: string, params: InitializeParams): void {
    const { lifecycle, replies } = this.#host;
    if (lifecycle.phase.kind !== "new") return replies.error(id, Codes.alreadyInitialized);
    if (!params.required_capabilities.every((name) => isCapability(name))) {
      return replies.error(id, Codes.unsupportedCapability);
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
    const pending = this.#pending;
    if (this.#host.lifecycle.cancel() && pending !== null) {
      this.#pending = null;
      if (answer) this.#host.replies.error(pending, Codes.startupCancelled);
    }
    return this.#task ?? Promise.resolve();
  }

  #settle(id: string, outcome: StartupOutcome, extensions: ExtensionDescriptors | null): Promise<void> | void {
    // A close answered this request already (or cannot answer it any more): what startup connected has no owner.
    if (this.#pending !== id) return outcome.ok ? outcome.snapshot.mcp?.close() : undefined;
    this.#pending = null;
    const host = this.#host;
    host.lifecycle.settle(outcome);
    if (!outcome.ok) return host.replies.error(id, outcome.code);
    host.start(outcome.snapshot);
    const limits = publishedLimits(host.negotiation.negotiated("session.discover"));
    const result = { capabilities: host.negotiation.capabilities(), limits, status: host.status() } satisfies InitializeResult;
    host.replies.result(id, extensions === null ? result : { ...result, extensions });
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
